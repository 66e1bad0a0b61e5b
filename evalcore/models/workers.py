"""I/O layer: model calls served by worker processes, one call at a time each, through litellm's synchronous path.

litellm spends 2.6-3 ms of CPU per call on the event loop that awaits it
(request building in an executor thread, response pricing and logging), in
a dozen hops through that loop. With many calls in flight on one loop every
hop waits behind the others', so a 50 ms call takes 80 ms at 16 in flight
(`bench/concurrency.py`). A `ModelWorkerPool` gives each call in flight a
process of its own that makes the call with `litellm.completion` (2.6 ms of
CPU, no event loop, no hand-offs), spread over the machine's cores.

Workers are forked from a zygote (`evalcore.models.zygote`) that imported
litellm once, so starting one costs milliseconds. Each worker takes the
environment of the process that starts the pool, as it is then (keys
included; they travel over a local socket pair and are never written
anywhere). A call is one JSON line each way over the worker's socket. A
worker that stops with calls in flight fails them with `ModelWorkerError`,
which stops the run (every acknowledged attempt is already stored;
`--resume` finishes it).

`InProcessModels` is the same interface without workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import os
import signal
import socket
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from evalcore.errors import ConfigError, EvalcoreError, ModelError, ModelWorkerError
from evalcore.models.tool_format import ToolNameMap
from evalcore.models.types import ModelSpec, ModelTurn, ToolCall
from evalcore.models.zygote import the_zygote
from evalcore.processes import process_exists

IN_PROCESS_UP_TO = 4  # calls in flight that the caller's own loop serves well (at 4: 57 ms for a 50 ms call)
MAX_MODEL_WORKERS = 32  # each costs ~20 MB of its own memory (the rest is shared with the zygote); beyond, calls queue
MAX_LINE_BYTES = 64 * 1024 * 1024
STOP_TIMEOUT_S = 5.0
_ERRORS: dict[str, type[EvalcoreError]] = {"ModelError": ModelError, "ConfigError": ConfigError}


class ModelCaller(Protocol):
    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        name_map: ToolNameMap,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> ModelTurn: ...


class InProcessModels:
    """Model calls on the caller's own event loop."""

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        name_map: ToolNameMap,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> ModelTurn:
        from evalcore.models.adapter import complete

        return await complete(spec, messages, tools, name_map, context=context)


IN_PROCESS = InProcessModels()


def auto_worker_count(concurrency: int) -> int:
    """Workers for a run with `concurrency` attempts in flight: none up to IN_PROCESS_UP_TO, then one per attempt in flight."""
    return 0 if concurrency <= IN_PROCESS_UP_TO else min(concurrency, MAX_MODEL_WORKERS)


# --- the wire between pool and worker: one JSON object per line ---


def turn_to_wire(turn: ModelTurn) -> dict[str, Any]:
    return asdict(turn)


def turn_from_wire(data: Mapping[str, Any]) -> ModelTurn:
    calls = tuple(ToolCall(**call) for call in data["tool_calls"])
    return ModelTurn(**{**data, "tool_calls": calls})


@functools.lru_cache(maxsize=64)
def _spec_fields(spec: ModelSpec) -> dict[str, Any]:
    """The spec as JSON fields; a run sends the same few specs with every call."""
    return asdict(spec)


def request_to_wire(
    call_id: int,
    spec: ModelSpec,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    name_map: ToolNameMap,
    context: Mapping[str, Any] | None,
) -> bytes:
    request = {
        "id": call_id,
        "spec": _spec_fields(spec),
        "messages": list(messages),
        "tools": list(tools),
        "names": [dict(name_map.model_by_mcp), dict(name_map.mcp_by_model)],
        "context": dict(context or {}),
    }
    return json.dumps(request, default=str).encode("utf-8") + b"\n"


def _answer(request: Mapping[str, Any]) -> dict[str, Any]:
    from evalcore.models.adapter import complete_blocking
    from evalcore.models.redaction import redact

    spec = ModelSpec(**request["spec"])
    model_by_mcp, mcp_by_model = request["names"]
    name_map = ToolNameMap(model_by_mcp, mcp_by_model)
    try:
        turn = complete_blocking(spec, request["messages"], request["tools"], name_map, context=request["context"])
    except EvalcoreError as exc:
        return {"id": request["id"], "error": type(exc).__name__, "message": str(exc)}
    except Exception as exc:  # a bug, not a model failure: the parent stops the run with this line
        return {"id": request["id"], "error": "crash", "message": redact(f"{spec.name}: {type(exc).__name__}: {exc}")[:500]}
    return {"id": request["id"], "turn": turn_to_wire(turn)}


def worker_main(sock: socket.socket, environ: Mapping[str, str]) -> None:
    """A worker process: answer calls one at a time, until the pool closes the socket."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which closes the socket
    os.environ.clear()
    os.environ.update(environ)
    with sock, sock.makefile("rb") as requests, sock.makefile("wb") as replies:
        for line in requests:
            replies.write(json.dumps(_answer(json.loads(line)), default=str).encode("utf-8") + b"\n")
            replies.flush()


# --- the pool ---


@dataclass
class _Worker:
    pid: int
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    pending: dict[int, asyncio.Future[ModelTurn]]
    listener: asyncio.Task[None] | None = None
    failure: ModelWorkerError | None = None


class ModelWorkerPool:
    """`workers` processes serving `complete()`; each call goes to the worker with the fewest calls in flight."""

    def __init__(self, workers: int) -> None:
        if not 1 <= workers <= MAX_MODEL_WORKERS:
            raise ConfigError(f"a model worker pool takes 1 to {MAX_MODEL_WORKERS} workers, not {workers}")
        self._size = workers
        self._workers: list[_Worker] = []
        self._ids = itertools.count(1)
        self._starting: asyncio.Task[None] | None = None

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    def start_soon(self) -> None:
        """Begin starting the workers (the caller's loop goes on); calls wait for them, and a failed start fails every call."""
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._start_workers())

    async def start(self) -> None:
        """Start the workers and wait until they are up."""
        self.start_soon()
        assert self._starting is not None
        await self._starting

    async def _start_workers(self) -> None:
        zygote = the_zygote()
        pairs = [socket.socketpair() for _ in range(self._size)]
        try:
            # Off the loop: the first request waits for the zygote's litellm import.
            pids = await asyncio.to_thread(zygote.fork, dict(os.environ), [theirs for _, theirs in pairs])
        except BaseException:
            for ours, _ in pairs:
                ours.close()
            raise
        finally:
            for _, theirs in pairs:
                theirs.close()
        for pid, (ours, _) in zip(pids, pairs, strict=True):
            reader, writer = await asyncio.open_unix_connection(sock=ours, limit=MAX_LINE_BYTES)
            worker = _Worker(pid, reader, writer, {})
            worker.listener = asyncio.create_task(self._listen(worker))
            self._workers.append(worker)

    async def _listen(self, worker: _Worker) -> None:
        try:
            while line := await worker.reader.readline():
                reply = json.loads(line)
                future = worker.pending.pop(reply["id"], None)
                if future is None or future.done():
                    continue  # its caller gave up (timeout or cancel)
                if "turn" in reply:
                    future.set_result(turn_from_wire(reply["turn"]))
                else:
                    future.set_exception(_ERRORS.get(reply["error"], ModelWorkerError)(reply["message"]))
            reason = "stopped"
        except ConnectionError:  # a reset instead of an end of file: it died with requests it had not read yet
            reason = "stopped"
        except (ValueError, KeyError, TypeError) as exc:  # readline's ValueError: a reply over MAX_LINE_BYTES
            reason = f"answered out of protocol ({type(exc).__name__}: {exc})"
        worker.failure = ModelWorkerError(f"model worker (pid {worker.pid}) {reason} with {len(worker.pending)} call(s) in flight")
        for future in worker.pending.values():
            if not future.done():
                future.set_exception(worker.failure)
        worker.pending.clear()

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        name_map: ToolNameMap,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> ModelTurn:
        from evalcore.models.pricing import with_registered_price

        if self._starting is None:
            raise ModelWorkerError("the model worker pool is not running")
        await self._starting  # at once when the workers are up (a done task does not yield)
        worker = min(self._workers, key=lambda w: len(w.pending))
        if worker.failure is not None:
            raise worker.failure
        call_id = next(self._ids)
        future: asyncio.Future[ModelTurn] = asyncio.get_running_loop().create_future()
        worker.pending[call_id] = future
        try:
            try:
                worker.writer.write(request_to_wire(call_id, with_registered_price(spec), messages, tools, name_map, context))
                await worker.writer.drain()
            except ConnectionError:
                pass  # the worker is gone: its listener fails this future with the reason
            return await future
        finally:
            worker.pending.pop(call_id, None)

    async def close(self) -> None:
        """Stop every worker and wait until it is gone: an idle one exits when its socket closes; one still in a call
        (nobody waits for that answer any more) is killed, as is one that does not exit within STOP_TIMEOUT_S."""
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*(t for t in [self._starting] if t is not None))  # its failure, if any, was every call's
        self._starting = None
        for worker in self._workers:
            if worker.pending:
                _kill(worker.pid)
            worker.writer.close()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for worker in self._workers:
            while process_exists(worker.pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
            if process_exists(worker.pid):
                _kill(worker.pid)
                while process_exists(worker.pid) and time.monotonic() < deadline + STOP_TIMEOUT_S:
                    await asyncio.sleep(0.002)
            if worker.listener is not None:
                worker.listener.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await worker.listener
        self._workers = []


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def model_callers(workers: int) -> AsyncIterator[ModelCaller]:
    """`workers` > 0: a pool, starting while the caller goes on (its calls wait for it), closed on exit; 0: in-process calls."""
    if workers <= 0:
        yield IN_PROCESS
        return
    pool = ModelWorkerPool(workers)
    try:
        pool.start_soon()
        yield pool
    finally:
        await pool.close()
