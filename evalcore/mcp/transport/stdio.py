"""Transport layer: stdio (a subprocess speaking newline-delimited JSON-RPC).

One long-lived child process; a reader task routes each line to the request
whose id it answers. Lines are bounded in size, every wait is bounded in time,
and stderr is drained into a small tail kept for error messages.

The server under test starts with a minimal environment (`server_environment`): what it takes to
run a program (PATH, HOME, the locale, TMPDIR) and the variables it is passed by name. It never
inherits evalcore's own: no provider key, no token, nothing it was not given.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import shlex
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from evalcore.errors import TargetError
from evalcore.mcp.transport.base import JsonObject, Limits, RequestId, StopAt, WireFailure, WireResponse
from evalcore.processes import child_options, signals_held, stop_group
from evalcore.redaction import clip

# What a stdio server inherits from evalcore's environment; anything else it needs is passed by name (--server-env).
INHERITED_VARIABLES = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR"})


def server_environment(passed: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a stdio server starts with: `INHERITED_VARIABLES` and the locale (`LC_*`) from `environ`
    (default: this process's), plus `passed`."""
    env = os.environ if environ is None else environ
    inherited = {name: value for name, value in env.items() if name in INHERITED_VARIABLES or name.startswith("LC_")}
    return {**inherited, **(passed or {})}


# Notifications and stray messages kept for checks; past this many they are dropped (memory stays bounded).
MAX_UNSOLICITED = 1000


class StdioTransport:
    """Starts `command` once and exchanges JSON-RPC lines with it."""

    kind: Literal["http", "stdio"] = "stdio"

    def __init__(self, command: str | Sequence[str], limits: Limits | None = None, env: Mapping[str, str] | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise TargetError("the --stdio command is empty; give the command that starts your server")
        self.target = command if isinstance(command, str) else shlex.join(command)
        self.limits = limits or Limits()
        self.env = dict(env) if env is not None else None  # passed to the child, beside the minimal environment
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[RequestId, asyncio.Future[tuple[bytes, JsonObject | None, WireFailure | None]]] = {}
        self._stops: list[tuple[StopAt, asyncio.Future[tuple[bytes, JsonObject]]]] = []  # (stop_at, the line it stopped on)
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._tasks: list[asyncio.Task[None]] = []
        self._dead: WireFailure | None = None
        self.unsolicited: list[JsonObject] = []  # notifications and server requests, kept for checks
        self.started_at: float | None = None
        self.first_line_at: float | None = None  # when the process first wrote to stdout: it is up
        self._allowance_used = False  # the start-up allowance goes to the first request only

    async def start(self) -> None:
        if self._process is not None:
            return
        try:
            with signals_held():  # a Ctrl-C during the spawn is delivered after it, never lost
                self._process = await asyncio.create_subprocess_exec(
                    *self.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    limit=self.limits.max_response_bytes,
                    **child_options(server_environment(self.env)),  # it dies with this process (evalcore.processes)
                )
        except OSError as exc:
            raise TargetError(f"cannot start stdio server {self.target!r}: {exc.strerror or exc}") from exc
        self.started_at = time.perf_counter()
        self._tasks = [asyncio.create_task(self._read_stdout()), asyncio.create_task(self._read_stderr())]

    async def send(
        self,
        body: bytes,
        *,
        headers: Mapping[str, str],
        expect_id: RequestId | None,
        http_method: str = "POST",
        stop_at: StopAt | None = None,
    ) -> WireResponse:
        del headers, http_method  # no HTTP on stdio
        if self._process is None:
            await self.start()
        started = time.perf_counter()
        if self._dead is not None:
            return _wire(b"", None, self._dead, started)
        future: asyncio.Future[tuple[bytes, JsonObject | None, WireFailure | None]] | None = None
        stop: tuple[StopAt, asyncio.Future[tuple[bytes, JsonObject]]] | None = None
        if expect_id is not None:
            future = asyncio.get_running_loop().create_future()
            self._pending[expect_id] = future
            if stop_at is not None:
                stop = (stop_at, asyncio.get_running_loop().create_future())
                self._stops.append(stop)
        try:
            assert self._process is not None and self._process.stdin is not None
            self._process.stdin.write(body.replace(b"\n", b" ") + b"\n")
            await asyncio.wait_for(self._process.stdin.drain(), self.limits.connect_timeout)
        except (ConnectionError, TimeoutError) as exc:
            if expect_id is not None:
                self._pending.pop(expect_id, None)
            code = await self._exit_code()
            reason = f"server process exited with code {code}" if code is not None else f"cannot write to the server's stdin: {exc!r}"
            return _wire(b"", None, WireFailure("closed", f"{reason}{self._tail()}"), started)
        if future is None or expect_id is None:
            return _wire(b"", None, None, started)
        unsolicited_before = len(self.unsolicited)
        starting = self.first_line_at is None and not self._allowance_used
        self._allowance_used = True
        wait = self.limits.read_timeout + (self.limits.startup_timeout if starting else 0.0)
        try:
            stopped = await self._stopped(future, stop, wait)
            if stopped is not None:
                return _wire(stopped[0], None, None, started, (stopped[1],))
            line, message, failure = await asyncio.wait_for(future, wait)
        except TimeoutError:
            during = f" (+{self.limits.startup_timeout:g}s allowed for the process to start)" if starting else ""
            seen = self._not_responses_since(unsolicited_before)
            return _wire(b"", None, WireFailure("timeout", f"no response within {self.limits.read_timeout:g}s{during}{seen}{self._tail()}"), started)
        finally:
            self._pending.pop(expect_id, None)
            if stop is not None:
                self._stops.remove(stop)
        return _wire(line, message, failure, started)

    async def _stopped(
        self,
        future: asyncio.Future[tuple[bytes, JsonObject | None, WireFailure | None]],
        stop: tuple[StopAt, asyncio.Future[tuple[bytes, JsonObject]]] | None,
        wait: float,
    ) -> tuple[bytes, JsonObject] | None:
        """Wait for the response or the stop message, whichever comes first; the stop message if it came first."""
        if stop is None:
            return None
        waiting: set[asyncio.Future[Any]] = {future, stop[1]}
        done, _ = await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        if not done:
            raise TimeoutError
        return stop[1].result() if stop[1] in done and future not in done else None

    async def _exit_code(self) -> int | None:
        """The exit code of a server whose stdin closed, once it is reaped (None if it is still running after a second)."""
        assert self._process is not None
        try:
            return await asyncio.wait_for(self._process.wait(), 1.0)
        except TimeoutError:
            return None

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        discarding = False  # inside an oversized line: its remainder is dropped as it arrives
        while True:
            try:
                line = await stdout.readline()
            except ValueError as exc:  # asyncio's LimitOverrunError surfaces as ValueError; readline dropped the buffer
                # Keep reading (and dropping) so memory stays bounded, the process never blocks on a full
                # pipe, and the messages after the oversized line still get through.
                discarding = "not found" in str(exc)  # the line goes on; CPython words the other case "Separator is found"
                self._fail_pending(WireFailure("too_large", f"a stdout line exceeds {self.limits.max_response_bytes} bytes"), b"")
                continue
            if discarding:
                discarding = False
                if line.endswith(b"\n"):
                    continue  # the tail of the oversized line
            if not line:
                code = await self._process.wait()
                self._kill_all(WireFailure("closed", f"server process exited with code {code}{self._tail()}"))
                return
            if self.first_line_at is None:
                self.first_line_at = time.perf_counter()
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except RecursionError:
                self._fail_pending(
                    WireFailure("bad_json", f"stdout line nests JSON too deep to decode ({len(line)} bytes): {_clip(line, 40)!r}"), _clip(line, 200).encode()
                )
                continue
            except ValueError:
                # Only protocol messages may appear on stdout; garbage answers nobody,
                # so fail whatever is waiting rather than let it time out.
                self._fail_pending(WireFailure("bad_json", f"server wrote a non-JSON line to stdout: {_clip(line, 80)!r}"), _clip(line, 200).encode())
                continue
            if not isinstance(message, dict):
                self._fail_pending(WireFailure("bad_json", f"stdout line is JSON but not an object: {_clip(line, 80)!r}"), line)
                continue
            answer_id = message.get("id")
            is_answer = "result" in message or "error" in message
            future = self._pending.get(answer_id) if is_answer and isinstance(answer_id, int | str) else None
            if future is not None and not future.done():
                future.set_result((line, message, None))
                continue
            for stop_at, stopped in self._stops:
                if not stopped.done() and stop_at(message):
                    stopped.set_result((line, message))
            if len(self.unsolicited) < MAX_UNSOLICITED:
                self.unsolicited.append(message)

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        with contextlib.suppress(ValueError):
            async for raw in self._process.stderr:
                self._stderr_tail.append(_clip(raw.rstrip(), 300))

    def _fail_pending(self, failure: WireFailure, line: bytes) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_result((line, None, failure))

    def _kill_all(self, failure: WireFailure) -> None:
        self._dead = failure
        self._fail_pending(failure, b"")

    def _not_responses_since(self, index: int) -> str:
        """Why a wait saw lines but no answer: the messages that were not a response to anything pending."""
        seen = self.unsolicited[index:]
        if not seen:
            return ""
        return f"; meanwhile it wrote {len(seen)} message(s) that answer no request, e.g. {clip(json.dumps(seen[-1]), 100)}"

    def _tail(self) -> str:
        return f" (stderr: {self._stderr_tail[-1]})" if self._stderr_tail else ""

    async def aclose(self) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 2)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):  # it may exit between the wait and the kill
                    process.kill()
                await process.wait()
        if process is not None:
            stop_group(process.pid)  # what the server started and left running
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _clip(line: bytes, limit: int) -> str:
    """A stdout or stderr line of the server, decoded, redacted and cut (`evalcore.redaction.clip`)."""
    return clip(line.decode("utf-8", "replace"), limit)


def _wire(line: bytes, message: JsonObject | None, failure: WireFailure | None, started: float, others: tuple[JsonObject, ...] = ()) -> WireResponse:
    return WireResponse(
        status=None,
        headers={},
        body=line,
        messages=(message,) if message is not None else others,
        response=message,
        failure=failure,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )
