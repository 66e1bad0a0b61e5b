"""I/O layer: start the bundled reference server (`evalcore.demo_server`) as a subprocess on loopback.

Used by `conformance --reference`, `run --server reference`, the benchmarks and
the tests, so all of them exercise the same real server process a user would run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from evalcore.errors import TargetError
from evalcore.mcp.local_server import STARTUP_TIMEOUT_S, LocalServerProcess


class ReferenceServerProcess(LocalServerProcess):
    """`python -m evalcore.demo_server --http --port 0 [extra_args]`, started at once."""

    def __init__(self, extra_args: Sequence[str] = ()) -> None:
        args = ["--http", "--host", "127.0.0.1", "--port", "0", *extra_args]
        super().__init__("evalcore.demo_server", args, label="reference server", error=TargetError)


@contextlib.contextmanager
def running_reference_server(extra_args: Sequence[str] = (), *, startup_timeout: float = STARTUP_TIMEOUT_S) -> Iterator[str]:
    """Run the reference server over HTTP on a free loopback port; yield its URL; stop it afterwards."""
    server = ReferenceServerProcess(extra_args)
    try:
        yield server.url(startup_timeout)
    finally:
        server.stop()
