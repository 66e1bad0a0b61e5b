"""I/O layer: run one of evalcore's own servers (`python -m <module>`) as a subprocess on loopback.

The server prints `listening on http://...` to stderr once its socket is
bound; the URL is read from that line, never guessed or waited for with
sleeps. Used for the reference MCP server and the sim model endpoint. The
child dies with this process (`evalcore.processes`) and gets no API key.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from evalcore import processes
from evalcore.errors import EvalcoreError
from evalcore.redaction import without_secrets

_LISTENING = re.compile(r"listening on (?P<url>http://\S+)")
# How long to wait for the `listening on` line. The wait ends at that line, or at once when the process exits, so only
# a server alive and silent waits it out; generous, because an interpreter starting on a busy machine is slow, not broken.
STARTUP_TIMEOUT_S = 120.0
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds the evalcore package


def child_environment(*, with_keys: bool = True) -> dict[str, str]:
    """This process's environment, with PYTHONPATH set so a `python -m evalcore...` child finds evalcore, installed or not.

    Without `with_keys`, credential variables are left out: a child that makes no model call never holds a key.
    """
    pythonpath = os.pathsep.join(p for p in (_PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    environment = {**os.environ, "PYTHONPATH": pythonpath}
    return environment if with_keys else without_secrets(environment)


class LocalServerProcess:
    """`python -m module args...`, started at once; its URL read when asked for."""

    def __init__(self, module: str, args: Sequence[str], *, label: str, error: type[EvalcoreError]) -> None:
        with processes.signals_held():  # a Ctrl-C during the spawn is delivered after it, never lost
            self._process = subprocess.Popen(
                [sys.executable, "-m", module, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                **processes.child_options(child_environment(with_keys=False)),  # dies with this process, holds no key
            )
        self._label = label
        self._error = error
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

    @property
    def pid(self) -> int:
        """The child's process id (benchmarks read its CPU time from it)."""
        return self._process.pid

    def url(self, timeout: float = STARTUP_TIMEOUT_S) -> str:
        self._found.wait(timeout)
        if self._url is None:
            reason = self._tail[-1] if self._tail else f"no 'listening on' line within {timeout:g}s"
            raise self._error(f"the {self._label} did not start: {reason}")
        return self._url

    def stop(self) -> None:
        processes.stop(self._process)
        self._reader.join(2)
