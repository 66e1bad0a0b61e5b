"""Transport layer: Streamable HTTP (one endpoint, POST, JSON or SSE answers) over aiohttp.

aiohttp, not httpx: on the event loop it costs about a quarter of httpx's CPU per request (its parser is C), and a
conformance run or a behaviour run makes hundreds of requests (bench/profile_run.py). The client advertises no
content coding (no `Accept-Encoding`) and sets no `Content-Type` a request did not give: the bytes read are the
bytes the server sent, and a check that leaves a header out sends it without.

Keeps the raw exchange (status, headers, body) and bounds time, size and event
count, so a hostile server produces a `WireFailure`, never a hang.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from typing import Literal

import aiohttp

from evalcore.mcp.transport.base import JsonObject, Limits, RequestId, StopAt, WireFailure, WireResponse, find_response
from evalcore.mcp.transport.sse import SseDecoder
from evalcore.redaction import clip
from evalcore.tls import verifying_context


class HttpTransport:
    """Sends each message as its own POST (or another HTTP method for negative checks)."""

    kind: Literal["http", "stdio"] = "http"

    def __init__(self, url: str, limits: Limits | None = None, *, headers: Mapping[str, str] | None = None) -> None:
        """`headers` go on every request (a server's `Authorization`); a header a request sets itself wins."""
        self.target = url
        self.limits = limits or Limits()
        self._headers = dict(headers or {})
        self._session: aiohttp.ClientSession | None = None  # made on the event loop, by the first request

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                # certifi's bundle, as httpx's default, read once and only for an https URL; no connection limit
                connector=aiohttp.TCPConnector(limit=0, ssl=verifying_context()),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.limits.connect_timeout, sock_read=self.limits.read_timeout),
                skip_auto_headers=("Accept-Encoding", "Content-Type"),
                auto_decompress=False,
                trust_env=False,  # never route loopback traffic through a proxy from the environment
            )
        return self._session

    async def send(
        self,
        body: bytes,
        *,
        headers: Mapping[str, str],
        expect_id: RequestId | None,
        http_method: str = "POST",
        stop_at: StopAt | None = None,
    ) -> WireResponse:
        return await self._roundtrip(http_method, self.target, body, headers, _BodyReader(self.limits, expect_id, stop_at))

    def sends_header(self, name: str) -> bool:
        """Whether every request carries the header `name` (one given with --header, say `Authorization`)."""
        return name.lower() in (header.lower() for header in self._headers)

    async def fetch(self, url: str) -> WireResponse:
        """GET a document beside the endpoint (protected resource metadata, say), under the same limits, no redirects.

        The caller decides which URLs may be fetched: this client carries the user's headers.
        """
        return await self._roundtrip("GET", url, b"", {"Accept": "application/json"}, _BodyReader(self.limits, None))

    async def _roundtrip(self, http_method: str, url: str, body: bytes, headers: Mapping[str, str], reader: _BodyReader) -> WireResponse:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.limits.connect_timeout + self.limits.read_timeout):
                response = await self._client().request(http_method, url, data=body or None, headers=dict(headers), allow_redirects=False)
                try:
                    reader.start(response)
                    if http_method != "POST" and reader.is_event_stream:
                        return reader.finish((time.perf_counter() - started) * 1000)  # GET's stream: the status line is the answer
                    async for chunk in response.content.iter_any():
                        if reader.feed(chunk):
                            break
                finally:
                    if response.content.at_eof():
                        response.release()  # read to its end: the connection goes back to the pool
                    else:
                        response.close()  # left mid-answer: the connection goes, with whatever was still coming
        except aiohttp.ConnectionTimeoutError:
            reader.fail("timeout", f"ConnectTimeout after {self.limits.connect_timeout:g}s")
        except aiohttp.SocketTimeoutError:
            reader.fail("timeout", f"ReadTimeout after {self.limits.read_timeout:g}s")
        except TimeoutError:
            reader.fail("timeout", f"no complete answer within {self.limits.read_timeout:g}s")
        except aiohttp.ClientConnectorError as exc:
            reader.fail("connect", f"cannot connect to {url}: {_reason(exc)}")
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientOSError) as exc:
            reader.fail("stream_cut", f"connection closed mid-answer: {_reason(exc)}")
        except aiohttp.ClientError as exc:
            reader.fail("protocol", f"{type(exc).__name__}: {_reason(exc)}")
        return reader.finish((time.perf_counter() - started) * 1000)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class _BodyReader:
    """Accumulates one HTTP answer under the limits and decodes its JSON-RPC messages."""

    def __init__(self, limits: Limits, expect_id: RequestId | None, stop_at: StopAt | None = None) -> None:
        self.limits = limits
        self.expect_id = expect_id
        self.stop_at = stop_at
        self.stopped_at: JsonObject | None = None  # the message `stop_at` ended the read on
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.messages: list[JsonObject] = []
        self.failure: WireFailure | None = None
        self.events = 0
        self._sse: SseDecoder | None = None
        self._utf8 = _Utf8Stream()

    def start(self, response: aiohttp.ClientResponse) -> None:
        self.status = response.status
        # A header sent more than once reads as its values joined by ", " (RFC 9110, 5.3).
        self.headers = {name.lower(): ", ".join(response.headers.getall(name)) for name in response.headers}
        if _media_type(self.headers.get("content-type", "")) == "text/event-stream":
            self._sse = SseDecoder()

    @property
    def is_event_stream(self) -> bool:
        return self._sse is not None

    def feed(self, chunk: bytes) -> bool:
        """Take one chunk; True when reading should stop (response found or a limit hit)."""
        if len(self.body) + len(chunk) > self.limits.max_response_bytes:
            self.body.extend(chunk[: self.limits.max_response_bytes - len(self.body)])
            self.fail("too_large", f"answer exceeds {self.limits.max_response_bytes} bytes")
            return True
        self.body.extend(chunk)
        if self._sse is None:
            return False
        for event in self._sse.feed(self._utf8.decode(chunk)):
            self.events += 1
            if self.events > self.limits.max_sse_events:
                self.fail("too_many_events", f"SSE stream exceeds {self.limits.max_sse_events} events")
                return True
            if not event.data.strip():
                continue
            try:
                decoded = json.loads(event.data)
            except RecursionError:
                self.fail("bad_json", f"SSE event {self.events} nests JSON too deep to decode")
                return True
            except ValueError:
                self.fail("bad_json", f"SSE event {self.events} is not JSON: {clip(event.data, 80)!r}")
                return True
            messages = _as_messages(decoded)
            self.messages.extend(messages)
            if find_response(self.messages, self.expect_id) is not None:
                return True  # the stream ends with the response; stop reading there
            if self.stop_at is not None and (stop := next((m for m in messages if self.stop_at(m)), None)) is not None:
                self.stopped_at = stop
                return True  # a long-lived stream: what was asked for has arrived; closing it ends (cancels) the stream
        return False

    def fail(self, kind: str, detail: str) -> None:
        if self.failure is None:
            self.failure = WireFailure(kind, detail)  # type: ignore[arg-type]

    def finish(self, elapsed_ms: float) -> WireResponse:
        if self._sse is None and self.body and self.failure is None:
            self._decode_json_body()
        if self.failure is not None and self.failure.kind in ("timeout", "stream_cut") and self.body:
            self.failure = WireFailure(self.failure.kind, f"{self.failure.detail}; {self._what_was_sent()}")
        response = find_response(self.messages, self.expect_id)
        if response is None and self.expect_id is not None and self.failure is None and self.status is not None and self.stopped_at is None:
            if self._sse is not None:
                self.fail("stream_cut", f"SSE stream ended after {self.events} events without the response")
            elif not self.body:
                self.fail("protocol", f"HTTP {self.status} with an empty body where a JSON-RPC response was due")
            else:
                self.fail("protocol", f"HTTP {self.status} body holds no JSON-RPC response with id {self.expect_id!r}")
        return WireResponse(
            status=self.status,
            headers=self.headers,
            body=bytes(self.body),
            messages=tuple(self.messages),
            response=response,
            failure=self.failure,
            elapsed_ms=elapsed_ms,
            sse_events=self.events,
        )

    def _what_was_sent(self) -> str:
        """What an answer that never completed had sent so far, in the server's own bytes, naming a framing defect."""
        content_type = self.headers.get("content-type", "no Content-Type")
        sent = f"before that, HTTP {self.status} {content_type} sent {len(self.body)} bytes"
        if self._sse is not None:
            return f"{sent} ({self.events} SSE events, none the response), starting {bytes(self.body[:120])!r}"
        first_line = bytes(self.body).split(b"\n", 1)[0].strip()
        try:
            bare_message = isinstance(json.loads(first_line), dict)
        except (ValueError, RecursionError):
            bare_message = False
        if bare_message:
            return (
                f"{sent} and held the body open: a bare JSON line, which is neither a complete JSON response (the body "
                f"never ended) nor an SSE stream (no text/event-stream, no data: field): {first_line[:200]!r}"
            )
        return f"{sent} and held the body open: {bytes(self.body[:120])!r}"

    def _decode_json_body(self) -> None:
        # Decoded whatever the Content-Type says: a mislabelled body is judged by
        # the content-type check, while the other checks still see its messages.
        try:
            decoded = json.loads(self.body)
        except RecursionError:
            self.fail("bad_json", f"HTTP {self.status} body nests JSON too deep to decode ({len(self.body)} bytes)")
            return
        except ValueError:
            if self.expect_id is not None and _media_type(self.headers.get("content-type", "")) == "application/json":
                self.fail("bad_json", f"HTTP {self.status} body is not JSON: {clip(bytes(self.body).decode('utf-8', 'replace'), 80)!r}")
            return
        self.messages.extend(_as_messages(decoded))


class _Utf8Stream:
    """Decodes UTF-8 across chunk boundaries, replacing invalid bytes."""

    def __init__(self) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def decode(self, chunk: bytes) -> str:
        return self._decoder.decode(chunk)


def _as_messages(decoded: object) -> list[JsonObject]:
    if isinstance(decoded, dict):
        return [decoded]
    if isinstance(decoded, list):
        return [item for item in decoded if isinstance(item, dict)]
    return []


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
