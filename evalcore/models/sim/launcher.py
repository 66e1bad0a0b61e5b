"""I/O layer: start the sim HTTP endpoint (`python -m evalcore.models.sim.server`) as a subprocess on loopback.

Mirrors `evalcore.reference`: the URL is read from the server's
`listening on ...` line, never guessed or waited for with sleeps.
"""

from __future__ import annotations

import collections
import contextlib
import re
import subprocess
import sys
import threading
from collections.abc import Iterator

from evalcore.errors import ModelError

_LISTENING = re.compile(r"listening on (?P<url>http://\S+)")


class SimServerProcess:
    """`python -m evalcore.models.sim.server --port 0 [--latency-ms N]`, started at once, its URL read when asked for."""

    def __init__(self, latency_ms: float = 0.0) -> None:
        command = [sys.executable, "-m", "evalcore.models.sim.server", "--port", "0", "--latency-ms", str(latency_ms)]
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self._found = threading.Event()
        self._url: str | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=10)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            self._tail.append(line.rstrip())
            match = _LISTENING.search(line)
            if match and self._url is None:
                self._url = match["url"]
                self._found.set()
        self._found.set()  # the process ended: wake any waiter

    def url(self, timeout: float = 30.0) -> str:
        """The API base, `http://127.0.0.1:PORT/v1`."""
        self._found.wait(timeout)
        if self._url is None:
            reason = self._tail[-1] if self._tail else f"no 'listening on' line within {timeout:g}s"
            raise ModelError(f"the sim model server did not start: {reason}")
        return self._url

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(2)


@contextlib.contextmanager
def running_sim_server(latency_ms: float = 0.0, *, startup_timeout: float = 30.0) -> Iterator[str]:
    """Run the sim endpoint on a free loopback port; yield its API base (use with `hosted_vllm/sim-lexical`); stop it afterwards."""
    server = SimServerProcess(latency_ms)
    try:
        yield server.url(startup_timeout)
    finally:
        server.stop()
