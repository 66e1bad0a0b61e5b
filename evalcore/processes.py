"""I/O layer: whether a process is still there, asked of the operating system."""

from __future__ import annotations

import os


def process_exists(pid: int) -> bool:
    """True while a process with this id exists (also one of another user's, which signal 0 may not reach)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
