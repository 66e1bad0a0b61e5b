"""A deliberately broken HTTP "MCP server" for transport tests: each path misbehaves one way."""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.loopback_http import serving


class HostileHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    cut_once_seen: set[str] = set()
    seen_ids: list[object] = []

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/endless-get":
            self._start("text/event-stream")
            for _ in range(600):  # an event stream that stays open (bounded so the test server ends)
                self._chunk(b": keep-alive\n\n")
                time.sleep(0.1)
            return
        self._send(405, "text/plain", b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = json.loads(body) if body else {}
        HostileHandler.seen_ids.append(request.get("id"))
        path = self.path.rstrip("/")
        if path == "/hang":
            time.sleep(30)
            return
        if path == "/slow-drip":
            self._start("text/event-stream")
            for _ in range(60):
                self._chunk(b": keep-alive\n\n")
                time.sleep(0.5)
            return
        if path == "/held-open-json":  # one bare JSON line in a chunked application/json body that never ends
            self._start("application/json")
            meta = {"io.modelcontextprotocol/subscriptionId": request.get("id")}
            ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"_meta": meta}}
            self._chunk(json.dumps(ack).encode() + b"\n")
            time.sleep(30)
            return
        if path == "/garbage":
            return self._send(200, "application/json", b"\x00\xffnot json at all{{{")
        if path == "/nested":
            return self._send(200, "application/json", b"[" * 100_000 + b"]" * 100_000)
        if path == "/nested-sse":
            self._start("text/event-stream")
            self._chunk(b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n")
            self._chunk(b"")
            return
        if path == "/huge":
            return self._send(200, "application/json", b'{"jsonrpc":"2.0","id":1,"result":{"x":"' + b"a" * 3_000_000 + b'"}}')
        if path == "/text":
            return self._send(200, "text/plain", json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": {"ok": True}}).encode())
        if path == "/flood":
            self._start("text/event-stream")
            for index in range(5000):
                self._chunk(f'data: {{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progress":{index}}}}}\n\n'.encode())
            self._chunk(b"")
            return
        if path == "/cut":
            self._start("text/event-stream")
            self._chunk(b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n')
            self._chunk(b'data: {"jsonrpc":"2.0","id":')
            self.close_connection = True
            return  # no terminating chunk: the stream breaks mid-event
        if path == "/cut-once":
            key = "cut-once"
            if key not in HostileHandler.cut_once_seen:
                HostileHandler.cut_once_seen.add(key)
                self._start("text/event-stream")
                self._chunk(b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n')
                self.close_connection = True
                return
            self._start("text/event-stream")
            self._chunk(f'event: message\ndata: {{"jsonrpc":"2.0","id":{json.dumps(request.get("id"))},"result":{{"ok":true}}}}\n\n'.encode())
            self._chunk(b"")
            return
        if path == "/sse-ok":
            self._start("text/event-stream")
            self._chunk(b'data: {"jsonrpc":"2.0","method":"notifications/progress",\r\n')
            self._chunk(b'data: "params":{"progress":1}}\r\n\r\n: comment\r\n')
            self._chunk(f'data: {{"jsonrpc":"2.0","id":{json.dumps(request.get("id"))},"result":{{"ok":true}}}}\n\n'.encode())
            self._chunk(b"")
            return
        self._send(404, "text/plain", b"no such hostile path")

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _start(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients hanging up on a hostile answer is the point, not news


def hostile_server() -> AbstractContextManager[str]:
    """Serve HostileHandler on 127.0.0.1; yield the base URL."""
    return serving(HostileHandler, _QuietServer)
