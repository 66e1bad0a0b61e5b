"""A legacy-only (2025-11-25) MCP server, written to that revision's rules: `python tests/legacy_server.py --http|--stdio`.

It knows no 2026-07-28: `initialize` opens a session (HTTP: `Mcp-Session-Id`,
ended by DELETE); any other request before it is refused the way 2025 SDKs
refuse it (HTTP 400 -32000 "No valid session ID"; stdio -32601). Over HTTP it
prints `listening on <url>` to stderr once bound, and counts what it served
on `GET /stats` (the session ids it minted and deleted).
"""

from __future__ import annotations

import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
SESSIONS: set[str] = set()
STATS = {"minted": 0, "deleted": 0, "requests": 0}


def initialize_result(requested: object) -> dict[str, object]:
    version = requested if requested in VERSIONS else VERSIONS[0]
    return {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy-under-test", "version": "2025.1"}}


def answer(message: dict[str, object], initialized: bool) -> dict[str, object] | None:
    if "id" not in message:
        return None
    if message.get("method") == "initialize":
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        return {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(params.get("protocolVersion"))}  # type: ignore[union-attr]
    if not initialized:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
    if message.get("method") == "tools/list":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}
    return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}


class LegacyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/stats":
            return self._send(200, json.dumps(STATS).encode(), {})
        self._send(405, b"", {})

    def do_DELETE(self) -> None:
        session = self.headers.get("Mcp-Session-Id")
        if session in SESSIONS:
            SESSIONS.discard(session)
            STATS["deleted"] += 1
            return self._send(200, b"", {})
        self._send(404, b"", {})

    def do_POST(self) -> None:
        STATS["requests"] += 1
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        session = self.headers.get("Mcp-Session-Id")
        if message.get("method") == "initialize":
            session = uuid.uuid4().hex
            SESSIONS.add(session)
            STATS["minted"] += 1
            return self._send(200, json.dumps(answer(message, True)).encode(), {"Mcp-Session-Id": session})
        if session not in SESSIONS:
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}
            return self._send(400, json.dumps(error).encode(), {})
        reply = answer(message, True)
        self._send(200 if reply else 202, json.dumps(reply).encode() if reply else b"", {})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


def serve_stdio() -> None:
    initialized = False
    for line in sys.stdin:
        message = json.loads(line)
        reply = answer(message, initialized)
        initialized = initialized or message.get("method") == "initialize"
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    if "--stdio" in sys.argv:
        serve_stdio()
    else:
        server = ThreadingHTTPServer(("127.0.0.1", 0), LegacyHandler)
        print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
        server.serve_forever()
