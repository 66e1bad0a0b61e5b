"""I/O layer: one headless host session as a child process, within a wall-clock ceiling, its process tree ended after.

The host runs in its own process group, tied to evalcore's life (`evalcore.processes.child_options`), with the
environment it is given and nothing else, stdin closed (a host that would read a prompt from stdin gets none), and
its working folder. Its stdout is read line by line (the host's event stream), its stderr kept for the last lines.
When the ceiling passes, or the caller is cancelled (Ctrl-C), the whole group gets SIGKILL: a host never outlives
its attempt, nor does anything it started (an MCP server, a shell).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalcore.processes import child_options, signals_held, stop_group
from evalcore.redaction import clip

STDERR_TAIL_CHARS = 2000
STREAM_LIMIT = 16 * 1024 * 1024  # one event line may carry a large tool result


@dataclass(frozen=True)
class SessionOutput:
    """What a host session printed and how it ended."""

    lines: tuple[str, ...]  # stdout, one event per line
    returncode: int | None  # None when it was killed at the ceiling
    timed_out: bool
    stderr_tail: str
    elapsed_ms: float


async def run_session(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, ceiling_s: float) -> SessionOutput:
    """Run `argv` to its end or to `ceiling_s`, whichever comes first; the group is killed either way (see above)."""
    started = time.perf_counter()
    with signals_held():
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            limit=STREAM_LIMIT,
            **child_options(dict(env)),
        )
    lines: list[str] = []
    errors = bytearray()

    async def read_stdout() -> None:
        assert process.stdout is not None
        while line := await process.stdout.readline():
            lines.append(line.decode("utf-8", errors="replace").rstrip("\n"))

    async def read_stderr() -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.read(65536):
            errors.extend(chunk)
            del errors[: max(0, len(errors) - 4 * STDERR_TAIL_CHARS)]

    timed_out = False
    readers = asyncio.gather(read_stdout(), read_stderr())
    try:
        try:
            async with asyncio.timeout(ceiling_s):
                await process.wait()
                stop_group(process.pid)  # a child it left holding the pipes open would keep the readers waiting
                await readers
        except TimeoutError:
            timed_out = True
    finally:
        stop_group(process.pid)  # whatever it started goes with it, also on cancellation
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await readers
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
    tail = clip(errors.decode("utf-8", errors="replace").strip()[-STDERR_TAIL_CHARS:], STDERR_TAIL_CHARS)
    return SessionOutput(tuple(lines), None if timed_out else process.returncode, timed_out, tail, (time.perf_counter() - started) * 1000)
