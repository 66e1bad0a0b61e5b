"""I/O layer: child processes that never outlive the evalcore process that started them, and the leftovers of those that did.

Three independent guards, so a `kill -9` of the parent takes every child with it:

- **Own process group.** Each child leads a new group, so stopping it stops
  whatever it started too (`stop`), and a terminal's Ctrl-C reaches only the
  parent, which then stops its children in order.
- **A lifeline pipe.** The parent holds the write end of one pipe for its whole
  life and never hands it to anyone; each child gets the read end
  (`EVALCORE_LIFELINE_FD`). The kernel closes the write end when the parent
  dies, however it dies, and evalcore's own children (`watch_lifeline`, called
  first thing in their `main`) then kill their group at once.
- **PR_SET_PDEATHSIG** (Linux, through `prctl`): the kernel sends the child
  SIGKILL when its parent dies, before the child runs a line of its own, so
  also a command that is not evalcore's (a `--stdio` server). It is set only
  when the child is started from the main thread: the kernel ties it to the
  thread that started the child, and a worker thread may end first.

Elsewhere (macOS, Windows) only the group and the lifeline apply, and a stdio
server still sees its stdin close. Each child also carries
`EVALCORE_OWNER_PID` in its environment (inherited by its own children), so
`leftovers()` can find processes whose owner is gone, for `evalcore runs`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.redaction import clip

LIFELINE_FD_VARIABLE = "EVALCORE_LIFELINE_FD"
OWNER_VARIABLE = "EVALCORE_OWNER_PID"
PR_SET_PDEATHSIG = 1

_lifeline_lock = threading.Lock()
_lifeline: tuple[int, int, int] | None = None  # (owner pid, read end, write end)


def process_exists(pid: int) -> bool:
    """True while a process with this id exists (also one of another user's, which signal 0 may not reach)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lifeline_read_end() -> int:
    """The read end of this process's lifeline pipe, created on first use (again after a fork)."""
    global _lifeline
    with _lifeline_lock:
        if _lifeline is None or _lifeline[0] != os.getpid():
            read_end, write_end = os.pipe()  # both non-inheritable: the read end is passed explicitly, the write end never
            _lifeline = (os.getpid(), read_end, write_end)
        return _lifeline[1]


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL = _load_prctl()  # loaded here, not in the forked child, where taking the loader's locks could hang


def _die_with_parent(parent: int) -> Callable[[], None]:
    """The pre-exec step: SIGKILL when the parent dies, and exit now if it already did (a race with the fork)."""
    prctl = _PRCTL

    def arm() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arm


def child_options(env: dict[str, str] | None = None) -> dict[str, Any]:
    """Keyword arguments for `subprocess.Popen` or `asyncio.create_subprocess_exec` that tie the child to this process.

    `env` is the child's environment (default: this process's); the lifeline variables are added to it.
    """
    read_end = _lifeline_read_end()
    environment = dict(os.environ if env is None else env)
    environment[LIFELINE_FD_VARIABLE] = str(read_end)
    environment[OWNER_VARIABLE] = str(os.getpid())
    options: dict[str, Any] = {"env": environment, "pass_fds": (read_end,), "start_new_session": True}
    if threading.current_thread() is threading.main_thread() and os.name == "posix":
        options["preexec_fn"] = _die_with_parent(os.getpid())
    return options


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while a child is spawned with `child_options`, and deliver them once it is.

    A spawn with a pre-exec step runs Python's at-fork handlers in this process (logging takes its lock before the
    fork and gives it back after), and CPython swallows an exception raised in one. A KeyboardInterrupt landing there
    was lost, so the run went on uncancelled, and logging's lock stayed taken: the next import that logs, on another
    thread, waited for it forever. Held here, the signal's handler runs after the spawn, in this thread's own code.

    Spawns on one event loop overlap (each awaits its own), so the first to start swaps the handlers in and the last
    to end puts them back and delivers what came meanwhile.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # Python runs signal handlers in the main thread only
        return
    if _HOLDING.depth == 0:
        for stopping in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(stopping) is not None:  # None: a handler set outside Python, left alone
                _HOLDING.previous[stopping] = signal.signal(stopping, lambda received, _frame: _HOLDING.held.append(received))
    _HOLDING.depth += 1
    try:
        yield
    finally:
        _HOLDING.depth -= 1
        if _HOLDING.depth == 0:
            previous, held = dict(_HOLDING.previous), list(dict.fromkeys(_HOLDING.held))
            _HOLDING.previous.clear()
            _HOLDING.held.clear()
            for restored, handler in previous.items():
                signal.signal(restored, handler)
            for delivered in held:
                signal.raise_signal(delivered)


@dataclass
class _Holding:
    """`signals_held`'s state (main thread only): how many spawns are under way, the handlers they replaced, and the
    signals that came meanwhile."""

    depth: int = 0
    previous: dict[int, Any] = field(default_factory=dict)
    held: list[int] = field(default_factory=list)


_HOLDING = _Holding()


def watch_lifeline() -> None:
    """In an evalcore child: end this process (and its group) as soon as the parent's lifeline closes. Call first thing."""
    value = os.environ.pop(LIFELINE_FD_VARIABLE, None)
    if value is None or not value.isdigit():
        return
    fd = int(value)
    with contextlib.suppress(OSError):
        os.set_inheritable(fd, False)

    def wait() -> None:
        with contextlib.suppress(OSError):
            while os.read(fd, 1):
                pass  # nobody writes; only EOF (the parent is gone) ends the wait
        with contextlib.suppress(OSError):
            if os.getpgrp() == os.getpid():
                os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=wait, name="evalcore-lifeline", daemon=True).start()


def stop(process: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """SIGTERM to the child's group, SIGKILL after `timeout` seconds; reaped either way."""
    if process.poll() is None:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
    stop_group(process.pid)


def stop_group(pgid: int) -> None:
    """SIGKILL what is left of a child's group (what it started and left behind)."""
    _signal_group(pgid, signal.SIGKILL)


def adopt_children() -> None:
    """Mark whatever this process starts, by any means, as this process's (for `leftovers`), and follow its own lifeline."""
    watch_lifeline()
    os.environ[OWNER_VARIABLE] = str(os.getpid())


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


@dataclass(frozen=True)
class Leftover:
    """A process an evalcore process started, still running after its owner is gone."""

    pid: int
    owner_pid: int
    command: str


def leftovers(proc: Path = Path("/proc")) -> list[Leftover]:
    """This user's processes carrying `EVALCORE_OWNER_PID` of a process that no longer exists (Linux: read from /proc)."""
    found: list[Leftover] = []
    if not proc.is_dir():
        return found
    marker = f"{OWNER_VARIABLE}=".encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
        except OSError:
            continue  # another user's process, or it just ended
        owner = next((item[len(marker) :] for item in environ.split(b"\0") if item.startswith(marker)), None)
        if owner is None or not owner.isdigit() or process_exists(int(owner)):
            continue
        found.append(Leftover(int(entry.name), int(owner), clip(command, 200)))
    return sorted(found, key=lambda leftover: leftover.pid)


def stop_leftover(leftover: Leftover) -> None:
    """SIGKILL a leftover and the group it leads."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(leftover.pid) == leftover.pid:
            os.killpg(leftover.pid, signal.SIGKILL)
            return
        os.kill(leftover.pid, signal.SIGKILL)
