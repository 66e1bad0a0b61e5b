"""Demo server, stdio line layer: a filter between the process's stdin/stdout and the SDK's stdio transport.

Every line passes through here, so it is where one `Tamper` rewrites JSON-RPC
messages on stdio, and where the stdio spec fixes 4 and 5 of `spec_fixes` live.
The SDK reads `StdioPipe.inbound(...)` as its stdin and writes to the pipe as
its stdout. At end of input the pipe holds the SDK's stdin open until the
requests already read are answered (bounded): the SDK's loop would otherwise
drop them, and `printf '...' | server` is a common way to drive a stdio server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator

import anyio

from evalcore.demo_server import wire
from evalcore.demo_server.spec_fixes import stdio_initialize_refusal
from evalcore.demo_server.tamper import Answer, Tamper
from evalcore.mcp.protocol.constants import INVALID_REQUEST, PARSE_ERROR

DRAIN_SECONDS = 10.0


class StdioPipe:
    """Line filter: requests in through `inbound`, replies out through `write`."""

    def __init__(self, tamper: Tamper, sink: anyio.AsyncFile[str]) -> None:
        self._tamper = tamper
        self._sink = sink
        self._lock = anyio.Lock()
        self._pending: dict[str, wire.Message] = {}
        self._answered = anyio.Event()

    def inbound(self, source: AsyncIterable[str]) -> _Lines:
        return _Lines(self._filter_in(source))

    async def _filter_in(self, source: AsyncIterable[str]) -> AsyncIterator[str]:
        async for line in source:
            if not line.strip():
                continue
            message = wire.decode_json(line)
            if message is wire.NOT_JSON:
                await self._emit(wire.error_message(None, PARSE_ERROR, "Parse error"))
                continue
            if isinstance(message, list) and self._tamper.batch is not None:
                await self._write_raw(json.dumps(self._tamper.batch(message), separators=(",", ":")) + "\n")
                continue
            if not isinstance(message, dict):
                await self._emit(wire.error_message(None, INVALID_REQUEST, "A message must be a single JSON-RPC object"))
                continue
            if wire.is_request(message) and self._tamper.request is not None:
                rewritten = self._tamper.request(message)
                if isinstance(rewritten, Answer):
                    await self._emit(rewritten.message)
                    continue
                if rewritten is not message:
                    message, line = rewritten, json.dumps(rewritten, separators=(",", ":"))
            refusal = stdio_initialize_refusal(message)
            if refusal is not None:
                await self._emit(refusal)
                continue
            if wire.is_request(message):
                self._pending[_key(message.get("id"))] = message
            else:
                reply = self._tamper.notification(message) if self._tamper.notification is not None else None
                if reply is not None:
                    await self._emit(reply)
                if message.get("method") == "notifications/cancelled":
                    # A cancelled request gets no answer (a subscriptions/listen stream, above all): stop waiting for one.
                    self._pending.pop(_key((message.get("params") or {}).get("requestId")), None)
                    self._answered.set()
            yield line if line.endswith("\n") else line + "\n"
        with anyio.move_on_after(DRAIN_SECONDS):
            while self._pending:
                self._answered = anyio.Event()
                await self._answered.wait()

    async def write(self, text: str) -> None:
        """Called by the SDK with one serialized message (plus newline) at a time."""
        reply = wire.decode_json(text)
        if isinstance(reply, dict) and ("result" in reply or "error" in reply):
            request = self._pending.pop(_key(reply.get("id")), None)
            self._answered.set()
            if request is not None and self._tamper.response is not None:
                await self._emit(self._tamper.response(request, reply))
                return
        await self._write_raw(text if text.endswith("\n") else text + "\n")

    async def flush(self) -> None:
        """Each write already flushes."""

    async def _emit(self, message: wire.Message) -> None:
        await self._write_raw(json.dumps(message, separators=(",", ":")) + "\n")

    async def _write_raw(self, text: str) -> None:
        async with self._lock:
            await self._sink.write(text)
            await self._sink.flush()


class _Lines:
    """The async-iterable stdin the SDK's `stdio_server` reads lines from."""

    def __init__(self, lines: AsyncIterator[str]) -> None:
        self._lines = lines

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines


def _key(request_id: object) -> str:
    return json.dumps(request_id)
