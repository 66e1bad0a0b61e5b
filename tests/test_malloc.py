"""glibc's malloc arenas under `evalcore.commands.malloc.limit_arenas`, counted by glibc itself (`malloc_stats`) in a new process."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="arenas are glibc's")

# Eight threads that each allocate from the C heap at once (objects over pymalloc's 512 bytes), then glibc's count of arenas.
THREADS = """
import ctypes, sys, threading
from evalcore.commands.malloc import limit_arenas
if sys.argv[1] == "limit":
    limit_arenas()
barrier = threading.Barrier(8)
def allocate():
    barrier.wait()
    kept = [bytearray(4096) for _ in range(2000)]
    barrier.wait()
threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
ctypes.CDLL(None).malloc_stats()
"""


def arenas(mode: str, **environment: str) -> int:
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"} | environment
    result = subprocess.run([sys.executable, "-c", THREADS, mode], capture_output=True, text=True, env=env, timeout=120, check=True)
    return sum(line.startswith("Arena ") for line in result.stderr.splitlines())


def test_without_the_cap_each_thread_gets_an_arena_of_its_own():
    """What the cap is for: the count below is not glibc's behaviour anyway."""
    assert arenas("default") > 2


def test_the_cap_keeps_two_arenas():
    assert arenas("limit") <= 2


def test_a_users_malloc_arena_max_is_left_as_it_is():
    assert 2 < arenas("limit", MALLOC_ARENA_MAX="4") <= 4
