"""Pure logic: the one denominator rule, shared by scoring, metrics, the report and the run's completeness.

An attempt is *errored* when it failed for a provider or harness reason, not
because of what the model did: the model call failed beyond its retries
(provider error, timeout, rate limit after retries: stop reason
`model_error`), or the server could not be reached to start it
(`server_error`). An errored attempt

- gets no quality score (every scorer says "does not apply");
- counts in the error rate, and in none of the model-quality metrics (pass
  rate, pass^k, pass@k, every accuracy and rate), the same for every metric;
- still counts in spend and telemetry (tokens, cost, retries, latency): what
  it cost was paid.

A run with errored attempts measured fewer attempts than it was asked to;
`incomplete_attempts` counts them for a caller that must say so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

ERRORED_STOP_REASONS: Final = frozenset({"model_error", "server_error"})


def is_errored(stop_reason: str | None) -> bool:
    """Whether an attempt that stopped for this reason is errored (see the module docstring)."""
    return stop_reason in ERRORED_STOP_REASONS


def incomplete_attempts(stop_reasons: Iterable[str | None]) -> int:
    """How many of these attempts are errored."""
    return sum(1 for reason in stop_reasons if is_errored(reason))
