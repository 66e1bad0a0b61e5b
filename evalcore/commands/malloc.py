"""The C allocator's arenas: how many glibc's malloc keeps for this process's threads.

glibc gives each thread that allocates while another holds an arena a new arena of its own, up to eight per core,
and an arena's freed memory stays in it. A run's threads (DuckDB's workers and the batch writer's, each opening
and checkpointing the store, beside the event loop's) left some 35 MB more of heap by the end of a 2,000-case run
with glibc's default than with two arenas (`bench/peer_workload.py --scale 100`; docs/openai-compatible-models.md,
"Memory at scale"), for no measured cost in CPU. Set once, before the process starts its threads; a no-op off glibc.
"""

from __future__ import annotations

import ctypes
import os

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_arenas() -> None:
    """Cap glibc's malloc arenas at `ARENAS`, unless the user's MALLOC_ARENA_MAX (glibc's own variable) says otherwise."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this Python is linked with
    except (OSError, AttributeError):  # not glibc (musl, macOS): its allocator has no such arenas
        return
    mallopt(_M_ARENA_MAX, ARENAS)
