"""I/O layer: the process model workers are forked from, with litellm imported and warmed up once.

    python -m evalcore.models.zygote CONTROL_FD

`ModelWorkerPool` starts one per evalcore process, on first use, and keeps
it for later pools. It imports litellm (~2 s) and makes two offline
calls (one `sim/lexical`, one to an OpenAI-compatible port that refuses), which
load the ~70 modules litellm imports on its first call, then waits on its control socket (SOCK_SEQPACKET) for requests: each
is the environment for a new worker as JSON, with the worker's end of a
socket pair attached (SCM_RIGHTS). It forks, answers with the worker's pid,
and goes back to waiting; it exits when the control socket closes, which
happens at the latest when the evalcore process that started it ends.

Why not `multiprocessing`'s fork server: every process it starts first
re-imports the parent's `__main__` script (spawn semantics), which costs
each worker that script's imports and fails outright for a script without an
`if __name__ == "__main__":` guard.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import signal
import socket
import sys
import traceback

MAX_REQUEST_BYTES = 1024 * 1024


def _warm_up() -> None:
    """One offline call of each kind, so the modules and setup litellm defers to its first call are done once, here."""
    from evalcore.errors import ModelError
    from evalcore.models.adapter import complete
    from evalcore.models.tool_format import ToolNameMap
    from evalcore.models.types import ModelSpec

    messages = [{"role": "user", "content": "warm up"}]
    # An OpenAI-compatible endpoint on a port nothing listens on: request building and the HTTP client, refused at once.
    # (litellm keys its cached HTTP clients by event loop, so a worker's loop never picks up this one's.)
    refused = ModelSpec(name="hosted_vllm/warm-up", api_base="http://127.0.0.1:9/v1", max_retries=0, timeout_s=5)
    asyncio.run(complete(ModelSpec(name="sim/lexical"), messages, [], ToolNameMap()))
    with contextlib.suppress(ModelError):
        asyncio.run(complete(refused, messages, [], ToolNameMap()))


def _serve_forks(control: socket.socket) -> None:
    from evalcore.models.workers import worker_main

    while True:
        message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST_BYTES, 1)
        if not message:
            return
        environ = json.loads(message)
        pid = os.fork()
        if pid == 0:
            control.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            gc.enable()
            code = 0
            try:
                worker_main(socket.socket(fileno=fds[0]), environ)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        control.send(str(pid).encode())


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
