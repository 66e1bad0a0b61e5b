"""Entry point for `python -m evalcore` (the installed `evalcore` command is `evalcore.cli:console_main`)."""

from __future__ import annotations

from evalcore.cli import entry_point

if __name__ == "__main__":
    entry_point("python -m evalcore")
