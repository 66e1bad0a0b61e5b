"""I/O layer: start the sim HTTP endpoint (`python -m evalcore.models.sim.server`) as a subprocess on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from evalcore.errors import ModelError
from evalcore.mcp.local_server import STARTUP_TIMEOUT_S, LocalServerProcess


class SimServerProcess(LocalServerProcess):
    """`python -m evalcore.models.sim.server --port 0 [--latency-ms N]`; `url()` is the API base `http://127.0.0.1:PORT/v1`."""

    def __init__(self, latency_ms: float = 0.0, aliases: Mapping[str, str] | None = None, *, rate_limit_every: int = 0, retry_after: str = "1") -> None:
        args = ["--port", "0", "--latency-ms", str(latency_ms)] + [f"--alias={name}={policy}" for name, policy in (aliases or {}).items()]
        if rate_limit_every:
            args += ["--rate-limit-every", str(rate_limit_every), f"--retry-after={retry_after}"]
        super().__init__("evalcore.models.sim.server", args, label="sim model server", error=ModelError)


@contextlib.contextmanager
def running_sim_server(
    latency_ms: float = 0.0, *, startup_timeout: float = STARTUP_TIMEOUT_S, rate_limit_every: int = 0, retry_after: str = "1"
) -> Iterator[str]:
    """Run the sim endpoint on a free loopback port; yield its API base (use with `hosted_vllm/sim-lexical`); stop it afterwards.

    `rate_limit_every=N` makes every Nth chat request a 429 with `Retry-After: retry_after`."""
    server = SimServerProcess(latency_ms, rate_limit_every=rate_limit_every, retry_after=retry_after)
    try:
        yield server.url(startup_timeout)
    finally:
        server.stop()
