"""I/O layer: provider limits — at most N calls in flight and a token-bucket request rate per provider, and `Retry-After`.

A provider is a model string's provider (`openai` for `openai/gpt-4o`), or its `api_base` when it has one
(a local vLLM is its own provider, whatever the model string says). `ProviderLimits` says, per provider:

- `max_connections`: calls in flight at once (None: no limit beyond the run's concurrency);
- `requests_per_minute`: a token bucket of capacity `burst` (default one second's worth, at least 1) refilled
  at that rate; a call takes a token or waits for the next one, in turn (None: no rate);
- `max_rate_limit_wait_s`: how long one call may spend waiting out 429s before it fails as a provider error.

A 429 answer's `Retry-After` (seconds, or an HTTP date; OpenAI's `retry-after-ms` too) is the wait before the
retry, and it pauses the whole provider, so the calls in flight beside it hold back too instead of spending their
own retries on the same limit: a rate-limited run slows down rather than fails.

Gates live per event loop (asyncio primitives belong to one loop) and per provider and limits. `CALLS` counts
what every call did, process-wide, for the progress line.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from evalcore.errors import ConfigError

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
DEFAULT_RATE_LIMIT_WAIT_S: Final = 300.0
# A server that answers 429 with "Retry-After: 0" forever still ends: the retries are bounded by count too.
MAX_RATE_LIMIT_RETRIES: Final = 50


@dataclass(frozen=True)
class ProviderLimits:
    max_connections: int | None = None
    requests_per_minute: float | None = None
    burst: int | None = None
    max_rate_limit_wait_s: float = DEFAULT_RATE_LIMIT_WAIT_S

    @property
    def capacity(self) -> int:
        """The bucket's size: `burst`, else one second's worth of requests, at least 1."""
        if self.burst is not None:
            return self.burst
        return max(1, math.floor((self.requests_per_minute or 60.0) / 60.0))


NO_LIMITS: Final = ProviderLimits()


@dataclass(frozen=True)
class LimitsTable:
    """Limits per provider key, with a default for the rest: what `run --max-connections/--requests-per-minute` say."""

    default: ProviderLimits = NO_LIMITS
    by_provider: Mapping[str, ProviderLimits] = field(default_factory=dict)

    def for_provider(self, key: str) -> ProviderLimits:
        return self.by_provider.get(key.rstrip("/"), self.default)


def provider_key(model: str, api_base: str | None) -> str:
    """Whose limits a call meets: its api_base when it has one, else the provider prefix of the model string."""
    return api_base.rstrip("/") if api_base else model.split("/", 1)[0]


def parse_limits(connections: Sequence[str], rates: Sequence[str], *, max_wait_s: float = DEFAULT_RATE_LIMIT_WAIT_S) -> LimitsTable:
    """The table from option values `N` (every provider) or `PROVIDER=N` (a provider name or an api_base URL)."""
    if not 0 < max_wait_s <= 86400:
        raise ConfigError(f"--rate-limit-wait must be between 0 and 86400 seconds, got {max_wait_s:g}")
    default: dict[str, Any] = {}
    per: dict[str, dict[str, Any]] = {}
    for option, values, field_name, kind in (
        ("--max-connections", connections, "max_connections", int),
        ("--requests-per-minute", rates, "requests_per_minute", float),
    ):
        for value in values:
            key, _, number = value.rpartition("=")
            try:
                parsed = kind(number)
            except ValueError:
                raise ConfigError(f"{option} takes N or PROVIDER=N (e.g. openai=4, or http://127.0.0.1:8000/v1=2), got {value!r}") from None
            if not parsed > 0 or not math.isfinite(parsed):
                raise ConfigError(f"{option} must be positive, got {value!r}")
            (per.setdefault(key.rstrip("/"), {}) if key else default)[field_name] = parsed
    common = {"max_rate_limit_wait_s": max_wait_s}
    base = ProviderLimits(**{**default, **common})
    return LimitsTable(base, {key: ProviderLimits(**{**default, **values, **common}) for key, values in per.items()})


class TokenBucket:
    """A token bucket that hands out reservations: `reserve()` takes a token now and says how long to wait for it.

    Tokens may go negative: each caller queues behind the ones before it, so waits are fair and no caller polls.
    Pure given its clock.
    """

    def __init__(self, per_second: float, capacity: int, clock: Clock) -> None:
        self.per_second = per_second
        self.capacity = float(capacity)
        self.tokens = float(capacity)
        self.clock = clock
        self.updated = clock()

    def reserve(self) -> float:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.per_second)
        self.updated = now
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.per_second


@dataclass
class CallCounters:
    """What model calls did, process-wide (read by the progress line; a reader keeps its own starting point)."""

    calls: int = 0  # requests sent, retries included
    retries: int = 0
    rate_limited: int = 0  # 429 answers
    errors: int = 0  # calls that failed beyond their retries
    waited_s: float = 0.0  # time spent waiting for a token, a slot or a provider's Retry-After

    def snapshot(self) -> CallCounters:
        return CallCounters(self.calls, self.retries, self.rate_limited, self.errors, self.waited_s)


CALLS = CallCounters()


@dataclass
class Pause:
    """Until when a provider asked for quiet (a `Retry-After`); shared by every gate of that provider."""

    until: float = -math.inf


class ProviderGate:
    """One provider's limits, on one event loop: a slot (`async with gate.slot()`) waits for the connection, the token
    and any pause a `Retry-After` set."""

    def __init__(self, limits: ProviderLimits, clock: Clock, sleep: Sleep, pause: Pause | None = None) -> None:
        self.limits = limits
        self.clock = clock
        self.sleep = sleep
        self.connections = asyncio.Semaphore(limits.max_connections) if limits.max_connections else None
        rate = limits.requests_per_minute
        self.bucket = TokenBucket(rate / 60.0, limits.capacity, clock) if rate else None
        self.paused = pause if pause is not None else Pause()
        self.waits: list[float] = []  # every wait this gate imposed, in order (what tests read)

    @property
    def paused_until(self) -> float:
        return self.paused.until

    def pause(self, seconds: float) -> None:
        """The provider asked for `seconds` of quiet: no call to it starts before then (through any of its gates)."""
        self.paused.until = max(self.paused.until, self.clock() + seconds)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self.connections if self.connections is not None else contextlib.nullcontext():
            while True:  # a pause may be extended while we wait for it
                paused = self.paused.until - self.clock()
                if paused <= 0:
                    break
                await self._wait(paused)
            if self.bucket is not None:
                wait = self.bucket.reserve()
                if wait > 0:
                    await self._wait(wait)
            yield

    async def _wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        CALLS.waited_s += seconds
        await self.sleep(seconds)


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, ProviderLimits], ProviderGate]] = weakref.WeakKeyDictionary()
_PAUSES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Pause]] = weakref.WeakKeyDictionary()


def provider_gate(key: str, limits: ProviderLimits, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> ProviderGate:
    """The gate every call to provider `key` under `limits` shares on the running loop (made by the first caller).

    Calls under other limits (a simulated user's, say) have a gate of their own, but share the provider's pause.
    """
    loop = asyncio.get_running_loop()
    gates = _GATES.setdefault(loop, {})
    gate = gates.get((key, limits))
    if gate is None:
        pause = _PAUSES.setdefault(loop, {}).setdefault(key, Pause())
        gate = gates[(key, limits)] = ProviderGate(limits, clock, sleep, pause)
    return gate


def retry_after_seconds(value: str | None, now_epoch: float) -> float | None:
    """A `Retry-After` value (RFC 9110: delay-seconds or an HTTP date) as seconds from now; None if absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        seconds = moment.timestamp() - now_epoch
    return max(0.0, seconds) if math.isfinite(seconds) else None


def retry_after_of(exc: BaseException, now_epoch: float) -> float | None:
    """The wait a provider's error asks for: `retry-after-ms`, else `Retry-After`, from the response headers litellm kept."""
    for headers in (getattr(exc, "litellm_response_headers", None), getattr(getattr(exc, "response", None), "headers", None), getattr(exc, "headers", None)):
        if not headers:
            continue
        try:
            lowered = {str(name).lower(): str(value) for name, value in dict(headers).items()}
        except (TypeError, ValueError):
            continue
        milliseconds = retry_after_seconds(lowered.get("retry-after-ms"), now_epoch)
        if milliseconds is not None and "retry-after-ms" in lowered and _is_number(lowered["retry-after-ms"]):
            return milliseconds / 1000.0
        seconds = retry_after_seconds(lowered.get("retry-after"), now_epoch)
        if seconds is not None:
            return seconds
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
