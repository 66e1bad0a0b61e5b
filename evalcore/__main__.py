"""Entry point for `python -m evalcore`."""

from __future__ import annotations

import signal
import sys
from types import FrameType

from evalcore.cli import main


def _stop_like_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a CI timeout, `kill`) stops as Ctrl-C does: the run is marked cancelled, and the servers and model
    workers it started stop with it, where the default would end the process on the spot and leave them running."""
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_like_ctrl_c)
    sys.exit(main())
