"""The build backend (_build/memrank_build.py): the wheel pip installs
holds the package, metadata that agrees with pyproject.toml, and a RECORD
whose hashes are right."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import sys
import tarfile
import tempfile
import unittest
import zipfile

import _stub  # noqa: F401 - puts this checkout's package on sys.path

import memrank

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, os.path.join(ROOT, "_build"))
import memrank_build  # noqa: E402


class BuildTest(unittest.TestCase):
    def test_wheel(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            name = memrank_build.build_wheel(d)
            self.assertEqual(name, f"memrank-{memrank.__version__}-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(d, name)) as z:
                names = set(z.namelist())
                files = {n: z.read(n) for n in names}
        info = f"memrank-{memrank.__version__}.dist-info"
        for want in ("memrank/__init__.py", "memrank/client.py", "memrank/errors.py", "memrank/types.py",
                     "memrank/py.typed", f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"):
            self.assertIn(want, names)
        self.assertFalse([n for n in names if "test" in n or "_build" in n or "__pycache__" in n], names)

        meta = files[f"{info}/METADATA"].decode()
        self.assertIn("Name: memrank\n", meta)
        self.assertIn(f"Version: {memrank.__version__}\n", meta)
        self.assertIn("Requires-Python: >=3.9\n", meta)
        self.assertNotIn("Requires-Dist", meta)  # standard library only

        rows = list(csv.reader(io.StringIO(files[f"{info}/RECORD"].decode())))
        self.assertEqual({r[0] for r in rows}, names)
        for path, digest, size in rows:
            if path.endswith("/RECORD"):
                self.assertEqual((digest, size), ("", ""))
                continue
            data = files[path]
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            self.assertEqual((digest, int(size)), (want, len(data)), path)

    def test_metadata_agrees_with_pyproject(self) -> None:
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib is Python 3.11+")
        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)["project"]
        got = memrank_build._project()
        for key in ("name", "version", "description", "requires-python"):
            self.assertEqual(got[key], project[key], key)
        self.assertEqual(project["dependencies"], [])

    def test_sdist(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            name = memrank_build.build_sdist(d)
            with tarfile.open(os.path.join(d, name)) as t:
                names = set(t.getnames())
        base = f"memrank-{memrank.__version__}"
        for want in ("pyproject.toml", "README.md", "PKG-INFO", "_build/memrank_build.py", "memrank/client.py"):
            self.assertIn(f"{base}/{want}", names)


if __name__ == "__main__":
    unittest.main()
