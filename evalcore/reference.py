"""I/O layer: start the bundled reference server (`evalcore.demo_server`) as a subprocess on loopback.

Used by `conformance --reference`, the benchmarks and the tests, so all of
them exercise the same real server process a user would run.
"""

from __future__ import annotations

import collections
import contextlib
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence

from evalcore.errors import TargetError

_LISTENING = re.compile(r"listening on (?P<url>http://\S+)")


class ReferenceServerProcess:
    """`python -m evalcore.demo_server --http --port 0 [extra_args]`, started at once, its URL read when asked for."""

    def __init__(self, extra_args: Sequence[str] = ()) -> None:
        command = [sys.executable, "-m", "evalcore.demo_server", "--http", "--host", "127.0.0.1", "--port", "0", *extra_args]
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
        self._found.wait(timeout)
        if self._url is None:
            reason = self._tail[-1] if self._tail else f"no 'listening on' line within {timeout:g}s"
            raise TargetError(f"the reference server did not start: {reason}")
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
def running_reference_server(extra_args: Sequence[str] = (), *, startup_timeout: float = 30.0) -> Iterator[str]:
    """Run the reference server over HTTP on a free loopback port; yield its URL; stop it afterwards."""
    server = ReferenceServerProcess(extra_args)
    try:
        yield server.url(startup_timeout)
    finally:
        server.stop()
