"""Command-line progress of a run: a bar redrawn in place on a terminal, a plain line every few seconds elsewhere (CI logs).

Each line carries the attempts done, their rate, the ETA and what the model calls did since the run started
(calls sent, retries, 429s, calls that failed beyond their retries, time spent waiting on provider limits).
The rate is per second from one attempt a second up, per minute below that, so a slow run never reads "0.0/s".
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from evalcore.models.limits import CallCounters

PLAIN_INTERVAL_S = 5.0
BAR_WIDTH = 30


def format_rate(per_second: float) -> str:
    """Attempts per second from 1/s up, per minute below (one decimal either way)."""
    return f"{per_second:.1f}/s" if per_second >= 1.0 else f"{per_second * 60:.1f}/min"


def format_duration(seconds: float) -> str:
    """`45s`, `12m05s`, `3h07m`: what an ETA needs."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class Progress:
    """Called with (done, total) as attempts finish; `heartbeat()` redraws without a new attempt (a stalled run).

    On a terminal it redraws one bar line; otherwise (a CI log, a file) it prints a plain line at most once per
    `interval_s`, and always at the end, so a log shows the run is alive without a line per attempt. Once the
    first attempt finishes off a terminal, a daemon thread calls `heartbeat()` every `interval_s` until the run
    ends or `close()`: a run held up by a provider's rate limit still shows life in the log.
    """

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        interval_s: float = PLAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        counters: CallCounters | None = None,
        background: bool = True,
    ) -> None:
        from evalcore.models.limits import CALLS  # not at the top: the parser imports this package's modules

        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.interval_s = interval_s
        self.clock = clock
        self.counters = counters if counters is not None else CALLS
        self.at_start = self.counters.snapshot()  # the process may have made calls before this run
        self.started = clock()
        self.last_line: float | None = None
        self.terminal = self.stream.isatty()
        self.done = 0
        self.total = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None
        self.background = background

    def __call__(self, done: int, total: int) -> None:
        if total == 0:
            return
        with self.lock:
            self.done, self.total = done, total
            self._draw(final=done >= total)
        if done >= total:
            self.close()
        elif self.background and self.thread is None:
            self.thread = threading.Thread(target=self._beat, name="progress", daemon=True)
            self.thread.start()

    def heartbeat(self) -> None:
        """A line (off a terminal: when `interval_s` has passed) with the counts as they are now."""
        with self.lock:
            if self.total and self.done < self.total:
                self._draw(final=False)

    def close(self) -> None:
        self.stopped.set()

    def _beat(self) -> None:
        while not self.stopped.wait(self.interval_s):
            self.heartbeat()

    def line(self) -> str:
        """The counts: `3/10 attempts · 36.0/min · ETA 12s · 14 calls, 2 retries (1 rate-limited), 0 errors`."""
        now = self.clock()
        elapsed = max(1e-9, now - self.started)
        rate = self.done / elapsed
        eta = f"ETA {format_duration((self.total - self.done) / rate)}" if 0 < self.done < self.total else None
        calls = self._calls()
        parts = [f"{self.done}/{self.total} attempts", format_rate(rate) if self.done else "starting", *([eta] if eta else []), calls]
        return " · ".join(parts)

    def _calls(self) -> str:
        c, s = self.counters, self.at_start
        retries, limited = c.retries - s.retries, c.rate_limited - s.rate_limited
        text = f"{c.calls - s.calls} calls, {retries} retries" + (f" ({limited} rate-limited)" if limited else "") + f", {c.errors - s.errors} errors"
        waited = c.waited_s - s.waited_s
        return text + (f", waited {format_duration(waited)} on provider limits" if waited >= 0.5 else "")

    def _draw(self, *, final: bool) -> None:
        now = self.clock()
        if self.terminal:
            filled = int(BAR_WIDTH * self.done / self.total)
            end = "\n" if final else ""
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.line()}\x1b[K{end}")
        elif final or (now - (self.started if self.last_line is None else self.last_line)) >= self.interval_s:
            self.last_line = now
            self.stream.write(f"{self.label}: {self.line()}\n")
        else:
            return
        self.stream.flush()
