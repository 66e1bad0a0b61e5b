"""Entry point for `python -m evalcore`."""

from __future__ import annotations

import sys

from evalcore.cli import main

if __name__ == "__main__":
    sys.exit(main())
