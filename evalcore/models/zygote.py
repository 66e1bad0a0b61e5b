"""I/O layer: the process model workers are forked from, with litellm imported and warmed up once.

    python -m evalcore.models.zygote CONTROL_FD

The parent's side (`Zygote`, `the_zygote()`): a `ModelWorkerPool` asks for
workers; the first request starts the zygote, which later pools in the same
process reuse. The zygote's side (`main`): import litellm (~2 s), make two
offline calls (one `sim/lexical`, one to an OpenAI-compatible port that
refuses), which load the ~70 modules litellm imports on its first call, and
freeze the garbage collector's view of it all; then wait on the control
socket (SOCK_SEQPACKET). Each request is the environment for a new worker as
JSON, with the worker's end of a socket pair attached (SCM_RIGHTS); the
zygote forks, answers with the worker's pid and waits again. It exits when
the control socket closes, at the latest when the evalcore process that
started it ends.

Why not `multiprocessing`'s fork server: every process it starts first
re-imports the parent's `__main__` script (spawn semantics), which costs
each worker that script's imports and fails outright for a script without an
`if __name__ == "__main__":` guard.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn

from evalcore.errors import ModelWorkerError

MAX_REQUEST_BYTES = 1024 * 1024
MAX_WORKERS_PER_REQUEST = 64  # under the kernel's 253 descriptors per message
START_TIMEOUT_S = 120.0  # the zygote imports litellm before its first fork
FORK_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0


# --- the parent's side: one zygote per evalcore process, started on first use ---


class Zygote:
    """The parent's handle on its zygote: start it, ask it for workers."""

    def __init__(self) -> None:
        from evalcore.local_server import child_environment

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "evalcore.models.zygote", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=child_environment(),
            )
        self._control = ours
        self._lock = threading.Lock()
        self._ready = False
        self.owner = os.getpid()

    def alive(self) -> bool:
        return self.owner == os.getpid() and self._process.poll() is None

    def fork(self, environ: Mapping[str, str], socks: Sequence[socket.socket]) -> list[int]:
        """New workers, one serving each of `socks`, with `environ`; their pids. Blocks (the first time until litellm is imported)."""
        with self._lock:
            try:
                if not self._ready:
                    self._control.settimeout(START_TIMEOUT_S)
                    if self._control.recv(16) != b"ready":
                        self.stop()
                        raise ModelWorkerError(f"the model worker zygote exited while starting (exit code {self._process.poll()})")
                    self._ready = True
                self._control.settimeout(FORK_TIMEOUT_S)
                socket.send_fds(self._control, [json.dumps(dict(environ)).encode("utf-8")], [sock.fileno() for sock in socks])
                reply = self._control.recv(16 * len(socks))
            except OSError as exc:  # socket.timeout included
                self.stop()
                raise ModelWorkerError(f"the model worker zygote did not answer ({type(exc).__name__}: {exc})") from exc
        pids = reply.split(b",")
        if len(pids) != len(socks) or not all(pid.isdigit() for pid in pids):
            self.stop()
            raise ModelWorkerError(f"the model worker zygote stopped (exit code {self._process.poll()})")
        return [int(pid) for pid in pids]

    def stop(self) -> None:
        self._control.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(STOP_TIMEOUT_S)
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()


_zygote: Zygote | None = None
_zygote_lock = threading.Lock()


def the_zygote() -> Zygote:
    """This process's zygote, started on first use (and again if it died)."""
    global _zygote
    with _zygote_lock:
        if _zygote is None or not _zygote.alive():
            _zygote = Zygote()
        return _zygote


# --- the zygote's side ---


def _warm_up() -> None:
    """One offline call of each kind, so the modules and setup litellm defers to its first call are done once, here."""
    from evalcore.errors import ModelError
    from evalcore.models.adapter import complete_blocking
    from evalcore.models.tool_format import ToolNameMap
    from evalcore.models.types import ModelSpec

    messages = [{"role": "user", "content": "warm up"}]
    # An OpenAI-compatible endpoint on a port nothing listens on: request building and the HTTP client, refused at once.
    refused = ModelSpec(name="hosted_vllm/warm-up", api_base="http://127.0.0.1:9/v1", max_retries=0, timeout_s=5)
    complete_blocking(ModelSpec(name="sim/lexical"), messages, [], ToolNameMap())
    with contextlib.suppress(ModelError):
        complete_blocking(refused, messages, [], ToolNameMap())
    # litellm keeps the HTTP client it built (TLS context and all, ~20 ms of CPU) for later calls: every worker gets a
    # copy. It holds no open connection (the only one was refused), so no socket is shared across the fork.


def _serve_forks(control: socket.socket) -> None:
    from evalcore.models.workers import worker_main

    while True:
        message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST_BYTES, MAX_WORKERS_PER_REQUEST)
        if not message:
            return
        environ = json.loads(message)
        pids = []
        for fd in fds:
            pid = os.fork()
            if pid == 0:
                control.close()
                for other in fds:
                    if other != fd:
                        os.close(other)  # a sibling's socket kept open here would hide that sibling's exit from the pool
                _run_worker(worker_main, fd, environ)
            pids.append(pid)
        for fd in fds:
            os.close(fd)
        control.send(",".join(map(str, pids)).encode())


def _run_worker(worker_main: Callable[[socket.socket, Mapping[str, str]], None], fd: int, environ: Mapping[str, str]) -> NoReturn:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    gc.enable()
    code = 0
    try:
        worker_main(socket.socket(fileno=fd), environ)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def main(argv: list[str]) -> int:
    # As the gc module's documentation advises for fork without exec: no collections here, everything frozen
    # before the first fork, collections back on in each worker. Otherwise a worker's first full collection
    # writes to every object the zygote made, copying its whole heap page by page (~0.1 s of CPU per worker).
    gc.disable()
    control = socket.socket(fileno=int(argv[0]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which then closes the control socket
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped as they exit
    _warm_up()
    gc.freeze()
    control.send(b"ready")
    _serve_forks(control)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
