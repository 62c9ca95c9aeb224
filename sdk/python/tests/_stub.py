"""A scripted HTTP server on loopback for the client's unit tests: it
records every request and answers what the test set."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional

# The tests test this checkout's package, not an installed one.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))


@dataclass
class Seen:
    """One request as the stub received it."""

    method: str
    path: str
    headers: Dict[str, str]
    body: Optional[object]


@dataclass
class Answer:
    status: int = 200
    body: bytes = b'{"result":{},"status":"ok","time":0}'
    headers: Dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0


class Stub:
    """The server; start() in setUpClass, close() in tearDownClass."""

    def __init__(self) -> None:
        self.seen: List[Seen] = []
        self.answer = Answer()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                with stub._lock:
                    stub.seen.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    a = stub.answer
                if a.delay:
                    time.sleep(a.delay)
                try:
                    self.send_response(a.status)
                    for k, v in a.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(a.body)))
                    self.end_headers()
                    self.wfile.write(a.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (the timeout test)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="stub", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "Stub":
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def reply(self, status: int = 200, result: object = None, *, body: Optional[bytes] = None,
              headers: Optional[Dict[str, str]] = None, delay: float = 0.0, envelope: bool = True) -> None:
        """Sets the next answers: result in Qdrant's envelope, or body as is."""
        if body is None:
            doc = {"result": result, "status": "ok", "time": 0} if envelope else result
            body = json.dumps(doc).encode()
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        with self._lock:
            self.answer = Answer(status, body, h, delay)
            self.seen.clear()

    def last(self) -> Seen:
        with self._lock:
            return self.seen[-1]
