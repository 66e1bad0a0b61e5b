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


@contextlib.contextmanager
def running_reference_server(extra_args: Sequence[str] = (), *, startup_timeout: float = 30.0) -> Iterator[str]:
    """Run `python -m evalcore.demo_server --http --port 0 [extra_args]`; yield its URL; stop it afterwards."""
    command = [sys.executable, "-m", "evalcore.demo_server", "--http", "--host", "127.0.0.1", "--port", "0", *extra_args]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = threading.Event()
    url: list[str] = []
    tail: collections.deque[str] = collections.deque(maxlen=10)

    def drain() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            tail.append(line.rstrip())
            match = _LISTENING.search(line)
            if match and not url:
                url.append(match["url"])
                found.set()
        found.set()  # process ended: wake the waiter either way

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        found.wait(startup_timeout)
        if not url:
            reason = tail[-1] if tail else f"no 'listening on' line within {startup_timeout:g}s"
            raise TargetError(f"the reference server did not start: {reason}")
        yield url[0]
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(2)
