"""The environment a timed evalcore process runs in: the bench's own, as a user's shell has it.

A user's evalcore has its bytecode: pip compiles it at install, and a checkout writes it on its first run. With
PYTHONDONTWRITEBYTECODE set in the shell the bench runs from, every timed process would compile evalcore's sources
again (about 0.3 s of CPU), a cost of that shell, not of evalcore; so the timed processes never inherit it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def user_environment(environment: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """`environment` (default: this process's) without PYTHONDONTWRITEBYTECODE, with `extra` set."""
    source = os.environ if environment is None else environment
    return {**{name: value for name, value in source.items() if name != "PYTHONDONTWRITEBYTECODE"}, **extra}
