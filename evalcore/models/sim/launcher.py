"""I/O layer: start the sim HTTP endpoint (`python -m evalcore.models.sim.server`) as a subprocess on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from evalcore.errors import ModelError
from evalcore.local_server import STARTUP_TIMEOUT_S, LocalServerProcess


class SimServerProcess(LocalServerProcess):
    """`python -m evalcore.models.sim.server --port 0 [--latency-ms N]`; `url()` is the API base `http://127.0.0.1:PORT/v1`."""

    def __init__(self, latency_ms: float = 0.0, aliases: Mapping[str, str] | None = None) -> None:
        args = ["--port", "0", "--latency-ms", str(latency_ms)] + [f"--alias={name}={policy}" for name, policy in (aliases or {}).items()]
        super().__init__("evalcore.models.sim.server", args, label="sim model server", error=ModelError)


@contextlib.contextmanager
def running_sim_server(latency_ms: float = 0.0, *, startup_timeout: float = STARTUP_TIMEOUT_S) -> Iterator[str]:
    """Run the sim endpoint on a free loopback port; yield its API base (use with `hosted_vllm/sim-lexical`); stop it afterwards."""
    server = SimServerProcess(latency_ms)
    try:
        yield server.url(startup_timeout)
    finally:
        server.stop()
