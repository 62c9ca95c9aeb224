"""The package's PEP 517 build backend, standard library only.

Why not setuptools: building a wheel with it needs setuptools 70.1 or the
``wheel`` package in the build environment, and pip fetches those from an
index; where there is none, ``pip install`` fails. This backend needs
nothing beyond Python, so ``pip install ./sdk/python`` works offline. It
builds exactly one thing: a pure-Python wheel of the ``memrank`` package
(and an sdist), its metadata read from pyproject.toml's [project] table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "memrank"
# Files of the sdist besides the package, relative to ROOT.
SDIST_FILES = ["pyproject.toml", "README.md", "_build/memrank_build.py"]


def _project() -> Dict[str, str]:
    """The string fields of pyproject.toml's [project] table. The file is
    ours and simple (one ``key = "value"`` a line), so a few lines of
    parsing do where tomllib (Python 3.11+) is missing."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not m:
        raise RuntimeError("pyproject.toml has no [project] table")
    fields = dict(re.findall(r'^([A-Za-z-]+)\s*=\s*"([^"\n]*)"\s*$', m.group(1), re.M))
    for key in ("name", "version", "description", "requires-python"):
        if key not in fields:
            raise RuntimeError(f"pyproject.toml: [project] has no {key}")
    return fields


def _metadata(p: Dict[str, str]) -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {p['name']}\n"
        f"Version: {p['version']}\n"
        f"Summary: {p['description']}\n"
        f"Requires-Python: {p['requires-python']}\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _package_files() -> List[Tuple[str, str]]:
    """(path in the archive, path on disk) of the package's files."""
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for name in sorted(os.listdir(base)):
        if name.endswith(".py") or name == "py.typed":
            out.append((f"{PACKAGE}/{name}", os.path.join(base, name)))
    return out


def _dist_info(p: Dict[str, str]) -> Tuple[str, Dict[str, bytes]]:
    name = f"{p['name'].replace('-', '_')}-{p['version']}.dist-info"
    files = {
        "METADATA": _metadata(p).encode("utf-8"),
        "WHEEL": b"Wheel-Version: 1.0\nGenerator: memrank_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "top_level.txt": (PACKAGE + "\n").encode(),
    }
    return name, files


def _zip_write(z: zipfile.ZipFile, arcname: str, data: bytes) -> None:
    # A fixed time, so that two builds of one tree are the same bytes.
    info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    p = _project()
    dist_info, meta = _dist_info(p)
    filename = f"{p['name'].replace('-', '_')}-{p['version']}-py3-none-any.whl"
    record: List[str] = []

    def add(z: zipfile.ZipFile, arcname: str, data: bytes) -> None:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
        _zip_write(z, arcname, data)

    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as z:
        for arcname, path in _package_files():
            with open(path, "rb") as f:
                add(z, arcname, f.read())
        for name, data in meta.items():
            add(z, f"{dist_info}/{name}", data)
        record.append(f"{dist_info}/RECORD,,")
        _zip_write(z, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    return filename


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    p = _project()
    base = f"{p['name']}-{p['version']}"
    filename = base + ".tar.gz"
    entries = [(rel, os.path.join(ROOT, rel)) for rel in SDIST_FILES] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as t:
        def add(arcname: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.mktime((2020, 1, 1, 0, 0, 0, 0, 1, 0)))
            t.addfile(info, io.BytesIO(data))

        for arcname, path in entries:
            with open(path, "rb") as f:
                add(arcname, f.read())
        add("PKG-INFO", _metadata(p).encode("utf-8"))
    return filename


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []
