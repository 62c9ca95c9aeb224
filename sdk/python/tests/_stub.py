"""A scripted HTTP server on loopback for the client's unit tests: it
records every request and answers what the test set."""

from __future__ import annotations

import json
import os
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional

# The tests test this checkout's package, not an installed one.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

# A self-signed certificate for 127.0.0.1 (valid 2000 to 2099) and its key,
# for the stub's https: test data, trusted by nothing else.
TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
CERT = os.path.join(TESTDATA, "loopback.crt")
KEY = os.path.join(TESTDATA, "loopback.key")


def client_tls() -> ssl.SSLContext:
    """A client context that trusts the stub's certificate alone."""
    ctx = ssl.create_default_context(cafile=CERT)
    # Python 3.13's strict checks want extensions a test certificate
    # need not carry.
    ctx.verify_flags &= ~getattr(ssl, "VERIFY_X509_STRICT", 0)
    return ctx


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
    # Seconds between the bytes of a trickled answer (0: sent at once),
    # from its first byte (trickle_headers) or from its body's.
    trickle: float = 0.0
    trickle_headers: bool = False


class Stub:
    """The server; start() in setUpClass, close() in tearDownClass. With
    tls, it serves https with the certificate in testdata."""

    def __init__(self, tls: bool = False) -> None:
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
                if a.trickle:
                    self._trickle(a)
                    return
                try:
                    self.send_response(a.status)
                    for k, v in a.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(a.body)))
                    self.end_headers()
                    self.wfile.write(a.body)
                except OSError:
                    pass  # the client gave up (the timeout test); over TLS an ssl.SSLError

            def _trickle(self, a: Answer) -> None:
                head = f"HTTP/1.1 {a.status} Trickled\r\n".encode()
                for k, v in a.headers.items():
                    head += f"{k}: {v}\r\n".encode()
                head += f"Content-Length: {len(a.body)}\r\nConnection: close\r\n\r\n".encode()
                raw = head + a.body
                start = 0 if a.trickle_headers else len(head)
                try:
                    self.wfile.write(raw[:start])
                    for i in range(start, len(raw)):
                        time.sleep(a.trickle)
                        self.wfile.write(raw[i:i + 1])
                        self.wfile.flush()
                except OSError:
                    pass  # the client gave up, as it should (over TLS: ssl.SSLEOFError)
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def log_message(self, *args) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._scheme = "http"
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(CERT, KEY)
            self._server.socket = ctx.wrap_socket(self._server.socket, server_side=True)
            self._scheme = "https"
        self._thread = threading.Thread(target=self._server.serve_forever, name="stub", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self._scheme}://{host}:{port}"

    def start(self) -> "Stub":
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def reply(self, status: int = 200, result: object = None, *, body: Optional[bytes] = None,
              headers: Optional[Dict[str, str]] = None, delay: float = 0.0, envelope: bool = True,
              trickle: float = 0.0, trickle_headers: bool = False) -> None:
        """Sets the next answers: result in Qdrant's envelope, or body as is."""
        if body is None:
            doc = {"result": result, "status": "ok", "time": 0} if envelope else result
            body = json.dumps(doc).encode()
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        with self._lock:
            self.answer = Answer(status, body, h, delay, trickle, trickle_headers)
            self.seen.clear()

    def last(self) -> Seen:
        with self._lock:
            return self.seen[-1]
