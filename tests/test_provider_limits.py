"""Provider limits: connection limit, token-bucket rate and Retry-After, through real litellm calls to a local endpoint.

Time is injected (a clock that only the injected sleep moves): the tests assert the requests sent and the waits
taken, never how long anything took.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from evalcore.errors import ConfigError, ModelError
from evalcore.models.adapter import Backoff, complete
from evalcore.models.limits import (
    CALLS,
    NO_LIMITS,
    ProviderGate,
    ProviderLimits,
    TokenBucket,
    parse_limits,
    provider_gate,
    provider_key,
    retry_after_seconds,
)
from evalcore.models.sim.launcher import running_sim_server
from evalcore.models.tool_format import ToolNameMap
from evalcore.models.types import ModelSpec
from tests.throttling_provider import ThrottlingProvider, throttling_provider

ROOT = Path(__file__).resolve().parents[1]
NO_WAIT = Backoff(initial_s=0.0, max_s=0.0)
WALL = 1_800_000_000.0  # the wall clock the tests hand to complete(), for Retry-After dates
HELLO = [{"role": "user", "content": "hi"}]


class FakeTime:
    """A clock that only `sleep` moves; every sleep is recorded."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture(scope="module")
def provider() -> Iterator[ThrottlingProvider]:
    with throttling_provider() as running:
        yield running


def _call(spec: ModelSpec, fake: FakeTime) -> object:
    return complete(spec, HELLO, [], ToolNameMap(), backoff=NO_WAIT, clock=fake.clock, wall_clock=lambda: WALL, sleep=fake.sleep)


# --- pure parts ------------------------------------------------------------------------------------


def test_token_bucket_queues_callers_behind_each_other():
    fake = FakeTime()
    bucket = TokenBucket(per_second=1.0, capacity=2, clock=fake.clock)
    assert [bucket.reserve() for _ in range(4)] == [0.0, 0.0, 1.0, 2.0]  # two in the bucket, then one a second, in turn
    fake.now += 10  # the queue drains and the bucket refills, but never beyond its capacity
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 1.0]


def test_retry_after_takes_seconds_or_an_http_date():
    assert retry_after_seconds("7", WALL) == 7.0
    assert retry_after_seconds(" 1.5 ", WALL) == 1.5
    assert retry_after_seconds(email.utils.formatdate(WALL + 30, usegmt=True), WALL) == 30.0
    assert retry_after_seconds(email.utils.formatdate(WALL - 30, usegmt=True), WALL) == 0.0  # a date past: go now
    assert retry_after_seconds("-3", WALL) == 0.0
    assert retry_after_seconds("soon", WALL) is None and retry_after_seconds(None, WALL) is None and retry_after_seconds("", WALL) is None


def test_limits_per_provider_or_api_base():
    table = parse_limits(["8", "openai=2", "http://127.0.0.1:9000/v1/=3"], ["openai=120"], max_wait_s=60)
    assert table.for_provider(provider_key("openai/gpt-4o", None)) == ProviderLimits(2, 120.0, None, 60)
    assert table.for_provider(provider_key("hosted_vllm/m", "http://127.0.0.1:9000/v1")) == ProviderLimits(3, None, None, 60)
    assert table.for_provider(provider_key("anthropic/claude", None)) == ProviderLimits(8, None, None, 60)
    assert ProviderLimits(requests_per_minute=600).capacity == 10 and ProviderLimits(requests_per_minute=30).capacity == 1


def test_a_stored_spec_keeps_its_limits():
    """A run stores its model specs as JSON (asdict); `--resume` builds them back with the limits they had."""
    spec = ModelSpec("openai/gpt-4o", limits=ProviderLimits(max_connections=2, requests_per_minute=90.0))
    assert ModelSpec(**json.loads(json.dumps(asdict(spec)))) == spec
    assert ModelSpec(**{key: value for key, value in asdict(spec).items() if key != "limits"}).limits == NO_LIMITS  # a run stored before limits


@pytest.mark.parametrize(
    ("connections", "rates", "wait", "message"),
    [
        (["openai=four"], [], 300.0, "--max-connections takes N or PROVIDER=N"),
        ([], ["0"], 300.0, "--requests-per-minute must be positive"),
        ([], ["openai=inf"], 300.0, "--requests-per-minute must be positive"),
        ([], [], 0.0, "--rate-limit-wait must be between 0 and 86400 seconds"),
    ],
)
def test_bad_limits_are_refused(connections, rates, wait, message):
    with pytest.raises(ConfigError, match=message):
        parse_limits(connections, rates, max_wait_s=wait)


def test_connection_limit_holds_calls_back():
    """Six calls at once through a gate of two: never more than two inside (without the gate all six would be)."""

    async def scenario() -> int:
        fake = FakeTime()
        gate = ProviderGate(ProviderLimits(max_connections=2), fake.clock, fake.sleep)
        inside, peak = 0, 0
        entered: asyncio.Queue[int] = asyncio.Queue()
        release = [asyncio.Event() for _ in range(6)]

        async def call(index: int) -> None:
            nonlocal inside, peak
            async with gate.slot():
                inside += 1
                peak = max(peak, inside)
                await entered.put(index)
                await release[index].wait()
                inside -= 1

        tasks = [asyncio.create_task(call(index)) for index in range(6)]
        for _ in range(6):
            release[await entered.get()].set()  # each call that got in lets the next one in as it leaves
        await asyncio.gather(*tasks)
        assert fake.sleeps == []  # a connection limit queues; it never sleeps
        return peak

    assert asyncio.run(scenario()) == 2


# --- through litellm to a local endpoint ----------------------------------------------------------


def test_retry_after_is_waited_out_and_does_not_spend_the_retries(provider: ThrottlingProvider):
    """Two 429s saying Retry-After: 7, with max_retries=0: two waits of 7 s, a third request, an answer."""
    fake = FakeTime()
    before = CALLS.snapshot()
    spec = ModelSpec("hosted_vllm/m", api_base=provider.route("seconds", [429, 429], retry_after="7"), max_retries=0)
    turn = asyncio.run(_call(spec, fake))
    assert turn.text == "fine" and turn.retries == 2  # type: ignore[attr-defined]
    assert provider.requests["seconds"] == 3 and fake.sleeps == [7.0, 7.0]
    assert (CALLS.calls - before.calls, CALLS.retries - before.retries, CALLS.rate_limited - before.rate_limited) == (3, 2, 2)
    assert CALLS.errors == before.errors and CALLS.waited_s - before.waited_s == 14.0


def test_retry_after_as_an_http_date_and_in_milliseconds(provider: ThrottlingProvider):
    fake = FakeTime()
    date = email.utils.formatdate(WALL + 42, usegmt=True)
    asyncio.run(_call(ModelSpec("hosted_vllm/m", api_base=provider.route("date", [429], retry_after=date)), fake))
    asyncio.run(_call(ModelSpec("hosted_vllm/m", api_base=provider.route("ms", [429], retry_after="9", retry_after_ms="1500")), fake))
    assert fake.sleeps == [42.0, 1.5] and provider.requests["date"] == 2 and provider.requests["ms"] == 2


def test_a_wait_beyond_the_bound_is_a_provider_error(provider: ThrottlingProvider):
    """Retry-After: 120 every time under a 300 s bound: two waits, then the third 429 fails the call, saying why."""
    fake = FakeTime()
    before = CALLS.snapshot()
    limits = ProviderLimits(max_rate_limit_wait_s=300)
    spec = ModelSpec("hosted_vllm/m", api_base=provider.route("forever", [429] * 10, retry_after="120"), limits=limits)
    with pytest.raises(
        ModelError, match=r"RateLimitError.*\(gave up after 2 retries; rate limited: waiting 120 s more, as the provider asked, would pass the 300 s bound\)$"
    ) as caught:
        asyncio.run(_call(spec, fake))
    assert caught.value.retries == 2 and provider.requests["forever"] == 3 and fake.sleeps == [120.0, 120.0]
    assert CALLS.errors - before.errors == 1


def test_a_429_pauses_every_call_to_that_provider(provider: ThrottlingProvider):
    """The Retry-After is waited out in the provider's gate (not in the call's own retry), and it holds back every call
    to that provider, under any limits (a simulated user's calls too), while another provider's calls go on."""

    async def scenario(fake: FakeTime) -> tuple[list[float], list[float], list[float]]:
        base = provider.route("shared", [429], retry_after="5")
        await _call(ModelSpec("hosted_vllm/a", api_base=base), fake)  # type: ignore[misc]
        key = provider_key("hosted_vllm/b", base)
        shared, other_limits = provider_gate(key, NO_LIMITS), provider_gate(key, ProviderLimits(max_connections=1), clock=fake.clock, sleep=fake.sleep)
        elsewhere = provider_gate(provider_key("hosted_vllm/b", provider.route("elsewhere", [])), NO_LIMITS, clock=fake.clock, sleep=fake.sleep)
        shared.pause(5)  # as that 429 did: a call starting now waits, a call to another provider does not
        async with other_limits.slot(), elsewhere.slot():
            pass
        return shared.waits, other_limits.waits, elsewhere.waits

    fake = FakeTime()
    shared_waits, other_waits, elsewhere_waits = asyncio.run(scenario(fake))
    assert shared_waits == [5.0] and other_waits == [5.0] and elsewhere_waits == []
    assert fake.sleeps == [5.0, 5.0] and provider.requests["shared"] == 2


def test_request_rate_spaces_calls_per_provider(provider: ThrottlingProvider):
    """60 requests a minute (a bucket of one): three calls at once-per-second, a call elsewhere unaffected."""

    async def scenario(fake: FakeTime) -> None:
        limits = ProviderLimits(requests_per_minute=60)
        base = provider.route("paced", [])
        for _ in range(3):
            await _call(ModelSpec("hosted_vllm/m", api_base=base, limits=limits), fake)  # type: ignore[misc]
        await _call(ModelSpec("hosted_vllm/m", api_base=provider.route("unpaced", []), limits=limits), fake)  # type: ignore[misc]

    fake = FakeTime()
    asyncio.run(scenario(fake))
    assert fake.sleeps == [1.0, 1.0] and provider.requests["paced"] == 3 and provider.requests["unpaced"] == 1


def test_run_refuses_bad_limits_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "run", "--models", "sim/lexical", "--max-connections", "openai=lots", "--db", str(tmp_path / "e.duckdb")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "error: --max-connections takes N or PROVIDER=N (e.g. openai=4, or http://127.0.0.1:8000/v1=2), got 'openai=lots'"
    ]
    assert not (tmp_path / "e.duckdb").exists()


# --- a whole run against a rate-limited provider (the sim endpoint, every third request a 429) ----------------------

GATED = ("selection_accuracy", "argument_accuracy", "sequence_accuracy", "over_call_rate", "pass_rate")


def _run(tmp_path: Path, name: str, api_base: str, server_url: str, *extra: str) -> tuple[int, dict]:
    from evalcore.cli import main

    out = tmp_path / f"{name}.json"
    argv = ["run", "--models", "hosted_vllm/sim-lexical", "--api-base", api_base, "--url", server_url, "--runs", "1", "--db", str(tmp_path / f"{name}.duckdb")]
    code = main([*argv, "--out", str(out), *extra])
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_a_rate_limited_run_slows_down_and_scores_as_an_unlimited_one(tmp_path, reference_url, capsys):
    with running_sim_server() as free:
        code, unlimited = _run(tmp_path, "free", free, reference_url)
    assert code == 1 and unlimited["gate"]["status"] == "no_baseline"  # sim/lexical misses case gates: a first run, not green
    with running_sim_server(rate_limit_every=3, retry_after="0") as limited_base:
        code, limited = _run(tmp_path, "limited", limited_base, reference_url, "--max-connections", "2")
    assert code == 1 and not limited.get("incomplete") and limited["gate"]["status"] == "no_baseline"
    (free_model,), (limited_model,) = unlimited["models"], limited["models"]
    assert {m: limited_model["metrics"][m] for m in GATED} == {m: free_model["metrics"][m] for m in GATED}
    assert limited_model["metrics"]["errored"] == 0 and limited_model["metrics"]["retries"] >= 9  # a third of 28+ requests
    assert free_model["metrics"]["retries"] == 0
    final = capsys.readouterr().err.strip().splitlines()
    assert any("28/28 attempts" in line and "rate-limited" in line and "0 errors" in line for line in final)


def test_a_provider_asking_for_more_than_the_bound_makes_the_run_incomplete(tmp_path, reference_url):
    with running_sim_server(rate_limit_every=2, retry_after="30") as base:
        code, report = _run(tmp_path, "bounded", base, reference_url, "--rate-limit-wait", "5")
    assert code == 1 and report["incomplete"] and "would pass the 5 s bound" in report["incomplete"]["reason"]
    (model,) = report["models"]
    assert model["metrics"]["errored"] >= 1
