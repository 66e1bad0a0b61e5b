"""Waiting in tests, in one place: on an event where the code under test offers one, else a bounded poll of a real condition.

Not a test module. Deadlines are generous (a busy 2-core machine is slow, not broken) and every timeout fails with a
message saying what did not happen. Test modules never sleep or read the clock themselves (tests/test_hygiene.py).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

DEADLINE_S = 120.0
T = TypeVar("T")


def wait_for_exit(pid: int, *, what: str, deadline_s: float = DEADLINE_S) -> None:
    """Block until process `pid` exits (any process, not only a child; a zombie counts as exited).

    The event is the kernel's: a pidfd becomes readable when the process ends. It does not reap a child, so whoever
    owns it (e.g. `jobs.job_status`) still reads its exit.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already gone
    try:
        readable, _, _ = select.select([pidfd], [], [], deadline_s)
    finally:
        os.close(pidfd)
    if not readable:
        raise AssertionError(f"{what} (pid {pid}) was still running after {deadline_s:g}s")


def wait_until(condition: Callable[[], T], *, what: str, deadline_s: float = DEADLINE_S, interval_s: float = 0.1) -> T:
    """Poll `condition` until it returns something truthy, and return that; for states no event announces (rows stored)."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not so after {deadline_s:g}s")
        time.sleep(interval_s)


def wait_for_http(url: str, process: subprocess.Popen[bytes] | subprocess.Popen[str], *, what: str, log: Callable[[], str] | None = None) -> None:
    """Wait until `url` answers 200 (a server's health endpoint), failing at once with the log's tail if `process` ended."""

    def answering() -> bool:
        if process.poll() is not None:
            tail = log()[-2000:] if log is not None else ""
            raise AssertionError(f"{what} exited with code {process.returncode} before answering: {tail}")
        try:
            return httpx.get(url, timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(answering, what=f"{what} answering {url}", interval_s=0.2)
