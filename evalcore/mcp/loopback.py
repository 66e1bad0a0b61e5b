"""I/O layer: an ASGI app served on a free 127.0.0.1 port, on a thread of its own, for as long as a block runs.

The fault proxy, the agent hosts' recording tap and the sim endpoint on the hosts' wires each run one beside a run.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import uvicorn

from evalcore.errors import EvalcoreError

STARTUP_TIMEOUT_S = 10.0


@contextlib.contextmanager
def serving_on_loopback(
    app: Any, *, name: str, what: str, error: type[EvalcoreError], lifespan: Literal["on", "off"] = "on", join_s: float = 5.0
) -> Iterator[str]:
    """Serve `app` until the block ends, and give its base URL (`http://127.0.0.1:PORT`). `error` names `what` when it
    does not start within STARTUP_TIMEOUT_S; at the end the server is told to exit and its thread given `join_s`."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan=lifespan, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:  # uvicorn sets it once the socket is bound: a poll of a flag, not a sleep for readiness
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise error(f"{what} did not start within {STARTUP_TIMEOUT_S:g}s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=join_s)
