"""Command-line progress of a run: a bar redrawn in place on a terminal, a plain line every few seconds elsewhere (CI logs)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

PLAIN_INTERVAL_S = 5.0
BAR_WIDTH = 30


class Progress:
    """Called with (done, total) as attempts finish.

    On a terminal it redraws one bar line; otherwise (a CI log, a file) it prints
    `label: done/total attempts · rate/s` at most once per `interval_s`, and always
    at the end, so a log shows the run is alive without a line per attempt.
    """

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        interval_s: float = PLAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self.clock = clock
        self.started = clock()
        self.last_line: float | None = None
        self.terminal = self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        if total == 0:
            return
        now = self.clock()
        rate = done / max(1e-9, now - self.started)
        counts = f"{done}/{total} attempts · {rate:.1f}/s"
        if self.terminal:
            filled = int(BAR_WIDTH * done / total)
            end = "\n" if done == total else ""
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {counts}{end}")
        elif done == total or (now - (self.started if self.last_line is None else self.last_line)) >= self.interval_s:
            self.last_line = now
            self.stream.write(f"{self.label}: {counts}\n")
        else:
            return
        self.stream.flush()
