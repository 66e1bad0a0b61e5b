"""I/O layer: one model turn through litellm (any provider string, or the offline `sim/`) or the OpenAI-wire route, with bounded retries.

`complete()` sends the conversation and the tools (OpenAI function tools from
`tool_format.to_openai_tools`) and returns a `ModelTurn`: text, tool calls with
their MCP names mapped back, tokens, cost, the provider's model version,
latency and the number of retries.

- Keys are never passed: litellm reads them from the environment (and the
  OpenAI-wire route from the provider's key variable, into the request's header only). Every
  error text this module produces goes through `secrets.redact`.
- Retries are ours alone (litellm's and the OpenAI SDK's own retries are off,
  `max_retries=0`, so the count is honest): rate limits (429), 5xx,
  connection errors and timeouts are retried up to `spec.max_retries` times
  with exponential backoff (0.5 s doubling, capped at 8 s, plus up to 25 %
  jitter so parallel attempts do not retry in lockstep). A 429 that says
  `Retry-After` is waited out as the provider asks, by every call to that
  provider (`evalcore.models.limits`), and retried for as long as those waits
  stay within `spec.limits.max_rate_limit_wait_s`. Other errors (auth,
  bad request, not found) fail at once. Either way the caller gets
  `ModelError("<model>: <one-line reason>")`.
- Every call passes its provider's gate first: the connection limit and the
  token-bucket request rate of `spec.limits`.
- `drop_params=True` lets providers that take no `seed` or `temperature` ignore
  them instead of failing.
- `context` (case id, attempt, run date) travels as `metadata={"evalcore": ...}`
  to `sim/` models only (the sim provider reads it). Other providers have no
  use for it, and litellm would carry it through its logging at ~0.3 ms of
  CPU per call.
- A model that speaks the OpenAI Chat Completions wire (`openai/NAME`,
  `hosted_vllm/NAME`, `lm_studio/NAME`) is called through the official `openai`
  SDK on the event loop (`evalcore.models.openai_route`): the same request,
  the same errors, retries, limits, tokens and cost, without litellm's
  per-call machinery, and without importing litellm at all when no other
  model needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import importlib
import json
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential_jitter

from evalcore.errors import ConfigError, ModelError
from evalcore.models import openai_route
from evalcore.models.limits import CALLS, MAX_RATE_LIMIT_RETRIES, Clock, ProviderGate, Sleep, provider_gate, provider_key, retry_after_of
from evalcore.models.pricing import UsageDetails, known_unit_prices, turn_cost
from evalcore.models.provider_errors import ProviderError
from evalcore.models.redaction import redact
from evalcore.models.tool_format import ToolNameMap
from evalcore.models.types import ModelSpec, ModelTurn, ToolCall
from evalcore.redaction import clip

RETRYABLE_STATUS = frozenset({408, 429})
MAX_REASON_CHARS = 300
# litellm enforces `timeout` on HTTP providers, not on every code path (custom providers, some SDKs):
# a hard ceiling a little above it keeps one stuck call from stalling a run.
TIMEOUT_GRACE_S = 5.0


@dataclass(frozen=True)
class Backoff:
    """Wait before retry n (n = 1, 2, ...): min(initial_s * 2**(n-1), max_s) plus jitter up to a quarter of initial_s."""

    initial_s: float = 0.5
    max_s: float = 8.0


DEFAULT_BACKOFF = Backoff()


def needs_litellm(spec: ModelSpec) -> bool:
    """Whether calls to this model go through litellm (every model but those on the OpenAI-wire route and agent hosts)."""
    return not spec.name.startswith("host/") and openai_route.route_of(spec) is None


def start_litellm_import(models: Sequence[ModelSpec | None] | None = None) -> None:
    """Import litellm, or the `openai` SDK, on a thread of its own, so that the import overlaps whatever the caller
    starts next.

    With `models`, litellm only when one of them goes through litellm (`needs_litellm`), and the SDK when one takes
    the OpenAI-wire route; a run whose models all take that route never imports litellm. Whoever needs a module
    first waits on Python's import lock until it is in; an import that fails there fails again, with its own error,
    where the module is used.
    """
    wanted = [spec for spec in models or () if spec is not None and not spec.simulated]
    modules = []
    if "evalcore.models.litellm_loader" not in sys.modules and (models is None or any(needs_litellm(spec) for spec in models if spec is not None)):
        modules.append("evalcore.models.litellm_loader")
    elif "openai" not in sys.modules and any(not needs_litellm(spec) for spec in wanted):
        modules.append("openai")  # litellm imports it too
    if not modules:
        return

    def load() -> None:
        for module in modules:
            with contextlib.suppress(Exception):  # reported by the import that needs it (see above)
                importlib.import_module(module)

    threading.Thread(target=load, name="model-imports", daemon=True).start()


def check_model_string(spec: ModelSpec) -> None:
    """A `ConfigError` for a model string no provider will take, before any call is made."""
    if not spec.name or spec.name != spec.name.strip():
        raise ConfigError(f"model {spec.name!r}: a model string looks like provider/model, e.g. openai/gpt-4o or sim/lexical")
    if spec.simulated:
        from evalcore.models.sim.catalog import check_sim_model

        check_sim_model(spec.name)
        return
    if openai_route.route_of(spec) is not None:
        return  # a provider prefix litellm's look-up would take as it is
    _check_provider(spec.name, spec.api_base)


@functools.lru_cache(maxsize=256)
def _check_provider(model: str, api_base: str | None) -> None:
    """litellm's provider look-up, once per model string: it is pure, and a run asks it on every turn.

    Only a success is cached (lru_cache does not keep exceptions), so a bad string fails every time.
    """
    from evalcore.models.litellm_loader import litellm

    try:
        litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception as exc:  # litellm raises BadRequestError for an unknown provider
        raise ConfigError(f"model {model!r}: litellm does not know its provider; write it as provider/model (e.g. openai/gpt-4o, hosted_vllm/name)") from exc


def build_request(
    spec: ModelSpec,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    context: Mapping[str, Any] | None,
    *,
    copied: bool = True,
) -> dict[str, Any]:
    """The keyword arguments for `litellm.completion`. No key: litellm takes it from the environment.

    The messages and tools are deep copies (litellm edits what it is given), unless `copied` is False: for a caller
    that only serializes the request before it returns, as the OpenAI-wire route does, copying them costs CPU for nothing.
    """
    clone = copy.deepcopy if copied else _as_is
    request: dict[str, Any] = {
        "model": spec.name,
        "messages": clone([dict(m) for m in messages]),
        "timeout": spec.timeout_s,
        "temperature": spec.temperature,
        "drop_params": True,
        "max_retries": 0,
    }
    if spec.simulated:
        request["metadata"] = {"evalcore": dict(context or {})}
    if spec.seed is not None:
        request["seed"] = spec.seed
    prices = None if spec.simulated else known_unit_prices(spec)
    if prices is not None:
        # litellm prices every response itself, for its own logging; told the price, it skips its cost-map search.
        # (Not for sim models: a zero price sends litellm into a slower "why is this call free" diagnostic.)
        request["input_cost_per_token"], request["output_cost_per_token"] = prices
    if spec.api_base:
        request["api_base"] = spec.api_base
    if tools:
        request["tools"] = clone([dict(t) for t in tools])
        request["tool_choice"] = "auto"
    return request


def _as_is(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return value


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, ProviderError):
        return exc.retryable
    if isinstance(exc, TimeoutError):
        return True
    loader = sys.modules.get("evalcore.models.litellm_loader")  # a litellm error exists only once litellm is imported
    if loader is not None:
        litellm = loader.litellm
        transient = (litellm.RateLimitError, litellm.ServiceUnavailableError, litellm.InternalServerError, litellm.APIConnectionError, litellm.Timeout)
        if isinstance(exc, transient):
            return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in RETRYABLE_STATUS or status >= 500)


def describe_error(exc: BaseException) -> str:
    """One line: the exception class and the first line of its message, without litellm's repeated prefix."""
    lines = str(exc).strip().splitlines()
    message = re.sub(r"^litellm\.\w+:\s*", "", lines[0] if lines else "")
    name = type(exc).__name__
    if not message.startswith(name):
        message = f"{name}: {message}" if message else name
    return clip(redact(message), MAX_REASON_CHARS)


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str, bool]:
    """(arguments, raw JSON text, valid): invalid or non-object JSON gives `{}` and False; empty text is `{}`."""
    if isinstance(raw, Mapping):
        return dict(raw), json.dumps(raw), True
    text = "" if raw is None else str(raw)
    if not text.strip():
        return {}, text, True
    try:
        parsed = json.loads(text)
    except ValueError:
        return {}, text, False
    return (parsed, text, True) if isinstance(parsed, dict) else ({}, text, False)


def _content_text(content: Any) -> str | None:
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return content if isinstance(content, str) and content else None


def _field(value: Any, name: str) -> Any:
    """`value[name]` of a JSON object (the OpenAI-wire route's answer), `value.name` of a litellm object; None when absent."""
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def _token_count(value: Any) -> int | None:
    """A usage count as a number: some servers send `"12"`; anything that is no count is unknown (None), not 0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _usage_details(usage: Any) -> UsageDetails:
    """The cached and audio input tokens, and the reasoning and audio output tokens, a usage block reports (0 when it does not)."""
    prompt = _field(usage, "prompt_tokens_details")
    completion = _field(usage, "completion_tokens_details")
    return UsageDetails(
        cached_input=_token_count(_field(prompt, "cached_tokens")) or 0,
        audio_input=_token_count(_field(prompt, "audio_tokens")) or 0,
        reasoning=_token_count(_field(completion, "reasoning_tokens")) or 0,
        audio_output=_token_count(_field(completion, "audio_tokens")) or 0,
    )


def parse_response(response: Any, spec: ModelSpec, name_map: ToolNameMap, *, latency_ms: float, retries: int) -> ModelTurn:
    """A litellm `ModelResponse`, or a Chat Completions answer's JSON, as a `ModelTurn`; `raw_message` keeps the
    model-side tool names, for the next turn."""
    choices = _field(response, "choices")
    if not choices or not isinstance(choices, Sequence):
        raise ModelError(f"{spec.name}: the response has no choices")
    choice = choices[0]
    message = _field(choice, "message")
    text = _content_text(_field(message, "content"))
    calls: list[ToolCall] = []
    wire_calls: list[dict[str, Any]] = []
    for index, call in enumerate(_field(message, "tool_calls") or []):
        function = _field(call, "function")
        model_name = str(_field(function, "name") or "")
        arguments, raw, valid = parse_arguments(_field(function, "arguments"))
        call_id = _field(call, "id") or f"call_{index}"
        calls.append(ToolCall(id=call_id, name=name_map.to_mcp(model_name), arguments=arguments, raw_arguments=raw, arguments_valid_json=valid))
        wire_calls.append({"id": call_id, "type": "function", "function": {"name": model_name, "arguments": raw}})
    raw_message: dict[str, Any] = {"role": "assistant", "content": text}
    if wire_calls:
        raw_message["tool_calls"] = wire_calls
    refusal = _field(message, "refusal")
    refusal = refusal.strip() if isinstance(refusal, str) and refusal.strip() else None
    if refusal is not None:
        raw_message["refusal"] = refusal
    usage = _field(response, "usage")
    input_tokens = _token_count(_field(usage, "prompt_tokens"))
    output_tokens = _token_count(_field(usage, "completion_tokens"))
    fingerprint = _field(response, "system_fingerprint")
    version = " ".join(str(part) for part in (_field(response, "model"), fingerprint) if part) or None
    return ModelTurn(
        text=text,
        tool_calls=tuple(calls),
        latency_ms=latency_ms,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=turn_cost(spec, input_tokens, output_tokens, _usage_details(usage)),
        model_version=version,
        retries=retries,
        finish_reason=_field(choice, "finish_reason"),
        raw_message=raw_message,
        refusal=refusal,
    )


def _prepare(spec: ModelSpec, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], context: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check the model string, register the sim provider for `sim/` models, and build the request."""
    check_model_string(spec)
    if spec.simulated:
        from evalcore.models.sim.provider import register_sim_price, register_sim_provider

        register_sim_provider()
        register_sim_price(spec.name)
    return build_request(spec, messages, tools, context)


class _RetryPolicy:
    """When to retry a failed call and how long to wait first (tenacity computes the wait, then asks whether to stop).

    A 429 with `Retry-After` pauses the provider's gate for the time asked, and the retry waits in the gate; such
    retries go on while the waits asked add up to at most `spec.limits.max_rate_limit_wait_s`. Every other
    retryable failure (a 429 without `Retry-After` included) spends one of `spec.max_retries`, after an
    exponential backoff that, for a 429, holds the whole provider back.
    """

    def __init__(self, spec: ModelSpec, backoff: Backoff, gate: ProviderGate, wall_clock: Clock) -> None:
        self.spec = spec
        self.gate = gate
        self.wall_clock = wall_clock
        self.backoff = wait_exponential_jitter(multiplier=backoff.initial_s, max=backoff.max_s, exp_base=2, jitter=backoff.initial_s / 4)
        self.other_failures = 0
        self.rate_limit_wait_s = 0.0
        self.gave_up_waiting: float | None = None  # the Retry-After that would have passed the bound

    def wait(self, state: RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome is not None else None
        rate_limited = _is_rate_limit(failure)
        asked = retry_after_of(failure, self.wall_clock()) if rate_limited and failure is not None else None
        if rate_limited:
            CALLS.rate_limited += 1
        if asked is None:
            self.other_failures += 1
            seconds = float(self.backoff(_nth_retry(state, self.other_failures)))
            if not rate_limited:
                return seconds
            self.gate.pause(seconds)
            return 0.0
        self.rate_limit_wait_s += asked
        if self.rate_limit_wait_s > self.spec.limits.max_rate_limit_wait_s:
            self.gave_up_waiting = asked
        else:
            self.gate.pause(asked)
        return 0.0

    def stop(self, state: RetryCallState) -> bool:
        if self.gave_up_waiting is not None or state.attempt_number > MAX_RATE_LIMIT_RETRIES:
            return True
        return self.other_failures > max(self.spec.max_retries, 0)

    def tenacity_arguments(self, sleep: Sleep) -> dict[str, Any]:
        async def backoff_sleep(seconds: float) -> None:  # a Retry-After is waited in the gate: nothing to sleep here
            if seconds > 0:
                await sleep(seconds)

        return {
            "stop": self.stop,
            "wait": self.wait,
            "retry": retry_if_exception(is_retryable),
            "reraise": True,
            "sleep": backoff_sleep,
            "before_sleep": _count_retry,
        }


def _nth_retry(state: RetryCallState, n: int) -> RetryCallState:
    """The state tenacity's exponential wait reads, numbered by this kind of failure only (a Retry-After does not grow it)."""
    numbered = copy.copy(state)
    numbered.attempt_number = n
    return numbered


def _count_retry(state: RetryCallState) -> None:
    CALLS.retries += 1


def _is_rate_limit(exc: BaseException | None) -> bool:
    return exc is not None and getattr(exc, "status_code", None) == 429


async def complete(
    spec: ModelSpec,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    name_map: ToolNameMap,
    *,
    context: Mapping[str, Any] | None = None,
    backoff: Backoff = DEFAULT_BACKOFF,
    clock: Clock = time.monotonic,
    wall_clock: Clock = time.time,
    sleep: Sleep = asyncio.sleep,
) -> ModelTurn:
    """One model turn. `ConfigError` for a bad model string, `ModelError` when the call fails beyond its retries.

    Each attempt is litellm's synchronous `completion` on a thread of its own (see `_on_a_thread`), or for a model
    on the OpenAI-wire route one request through the `openai` SDK on the event loop (`evalcore.models.openai_route`), sent once the provider's gate lets
    it; retries, their waits and the hard ceiling stay on the event loop. `latency_ms` is the successful attempt's
    own time; time lost to retries shows in `retries`. `clock`, `wall_clock` (for a `Retry-After` date) and `sleep`
    are the real ones outside tests.
    """
    route = openai_route.route_of(spec)
    if route is None:
        request = _prepare(spec, messages, tools, context)
        send = _litellm_sender(request)
    else:
        # The body is built once, here (the SDK encodes it at each attempt): the caller waits on this call meanwhile,
        # so the messages and tools it shares with the caller need no copy.
        body = openai_route.request_body(route, build_request(spec, messages, tools, context, copied=False))
        send = functools.partial(openai_route.send, route, body, spec.timeout_s)
    gate = provider_gate(provider_key(spec.name, spec.api_base), spec.limits, clock=clock, sleep=sleep)
    policy = _RetryPolicy(spec, backoff, gate, wall_clock)
    retries = 0
    try:
        async for attempt in AsyncRetrying(**policy.tenacity_arguments(sleep)):
            with attempt:
                retries = attempt.retry_state.attempt_number - 1
                async with gate.slot():
                    CALLS.calls += 1
                    started = time.perf_counter()
                    async with asyncio.timeout(spec.timeout_s + TIMEOUT_GRACE_S):
                        response = await send()
                    latency_ms = (time.perf_counter() - started) * 1000
    except Exception as exc:
        failure = exc
    else:
        return parse_response(response, spec, name_map, latency_ms=latency_ms, retries=retries)
    CALLS.errors += 1
    note = ""
    if policy.gave_up_waiting is not None:
        note = f"rate limited: waiting {policy.gave_up_waiting:g} s more, as the provider asked, would pass the {spec.limits.max_rate_limit_wait_s:g} s bound"
    _raise_model_error(spec, failure, retries, note)


def _litellm_sender(request: Mapping[str, Any]) -> Callable[[], Awaitable[Any]]:
    from evalcore.models.litellm_loader import litellm

    async def send() -> Any:
        return await _on_a_thread(functools.partial(litellm.completion, **request))

    return send


async def _on_a_thread(call: Callable[[], Any]) -> Any:
    """`call()` on a new daemon thread, awaited here.

    Why not `litellm.acompletion`: it builds each request in an executor thread anyway and then spends its
    pricing and logging on the event loop, in a dozen hops through it; its synchronous path does the same
    work with about a quarter less CPU and leaves the loop free for the MCP calls and the scoring
    (bench/concurrency.py). A daemon thread rather than a pool: a call the run stopped waiting for (its
    ceiling passed, Ctrl-C) holds up neither the run nor the interpreter's exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # the caller gave up (ceiling, cancellation)
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (call(), None)
        except BaseException as exc:  # handed to the awaiting caller, who maps it to a ModelError or re-raises it
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=run, name="model-call", daemon=True).start()
    return await future


def _raise_model_error(spec: ModelSpec, failure: BaseException, retries: int, note: str = "") -> NoReturn:
    error, quotes_secret = model_error(spec, failure, retries, note)
    if quotes_secret:
        raise error  # raised outside the except block, so neither __cause__ nor __context__ carries the secret
    raise error from failure


def model_error(spec: ModelSpec, exc: BaseException, retries: int, note: str = "") -> tuple[ModelError, bool]:
    """The `ModelError` for a call that failed, and whether the original exception quotes a secret; `note` says why it stopped."""
    raw = describe_error(exc)
    reasons = ([f"gave up after {retries} {'retry' if retries == 1 else 'retries'}"] if retries else []) + ([note] if note else [])
    gave_up = f" ({'; '.join(reasons)})" if reasons else ""
    quotes_secret = redact(raw) != raw or redact(str(exc)) != str(exc)
    return ModelError(f"{spec.name}: {redact(raw)}{gave_up}", retries=retries), quotes_secret


class ModelCaller(Protocol):
    """What the agent loop and the judge call a model through: `complete()` above, or a stand-in a test gives them."""

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        name_map: ToolNameMap,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> ModelTurn: ...


class InProcessModels:
    """Model calls through `complete()`, from the caller's own event loop."""

    async def complete(
        self,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        name_map: ToolNameMap,
        *,
        context: Mapping[str, Any] | None = None,
    ) -> ModelTurn:
        return await complete(spec, messages, tools, name_map, context=context)


IN_PROCESS = InProcessModels()
