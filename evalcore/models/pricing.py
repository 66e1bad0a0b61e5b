"""Pure logic (with a lazy look-up in litellm's bundled cost map): what one model turn cost, in USD.

Where the price comes from, first match wins:
1. `sim/` models: 0.0 (they run locally and are free).
2. The `ModelSpec` overrides, when both `input_cost_per_token` and `output_cost_per_token` are set.
3. A table given to `register_prices` (custom or self-hosted models), keyed by the model string.
4. litellm's cost map, looked up by the model string as configured, once per model: a flat price becomes unit
   prices (litellm's own figure for one token of each); a price tiered by call size, or a call with cached, audio
   or reasoning tokens, is priced by litellm's `cost_per_token` call by call. A model on the OpenAI-wire route
   (`evalcore.models.openai_route`) is priced from the map read as a file, by its own name, with litellm's formula
   (`map_cost`), so litellm is not imported for it.
5. Otherwise `None`: the price is unknown ("no price"). Never a guess, never $0, never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from evalcore.errors import ConfigError
from evalcore.models.cost_map import CostMapEntry, bundled_entry
from evalcore.models.types import ModelSpec

_REGISTERED: dict[str, tuple[float, float]] = {}


@dataclass(frozen=True)
class UsageDetails:
    """What a call's usage says of its tokens beyond the two counts: cached and audio input, reasoning and audio output."""

    cached_input: int = 0
    audio_input: int = 0
    reasoning: int = 0
    audio_output: int = 0

    @property
    def any(self) -> bool:
        return bool(self.cached_input or self.audio_input or self.reasoning or self.audio_output)


NO_DETAILS: Final = UsageDetails()


def register_prices(table: Mapping[str, tuple[float, float]]) -> None:
    """Add or replace prices: `{model string: (USD per input token, USD per output token)}`, like litellm's register_model."""
    for model, prices in table.items():
        if len(prices) != 2 or not all(isinstance(p, int | float) and math.isfinite(p) and p >= 0 for p in prices):
            raise ConfigError(f"price for {model!r} must be two non-negative numbers (USD per input token, per output token), got {prices!r}")
        _REGISTERED[model] = (float(prices[0]), float(prices[1]))


def registered_price(model: str) -> tuple[float, float] | None:
    return _REGISTERED.get(model)


def unit_prices(spec: ModelSpec) -> tuple[float, float] | None:
    """(USD per input token, USD per output token) from overrides or the registered table; None to ask litellm."""
    if spec.input_cost_per_token is not None and spec.output_cost_per_token is not None:
        return spec.input_cost_per_token, spec.output_cost_per_token
    return registered_price(spec.name)


def with_registered_price(spec: ModelSpec) -> ModelSpec:
    """The spec with its registered price written into its overrides, for a process that does not share this one's table."""
    prices = unit_prices(spec)
    return spec if prices is None else replace(spec, input_cost_per_token=prices[0], output_cost_per_token=prices[1])


# litellm's verdict per model string: flat unit prices, "tiered" (priced per call by litellm), or None (no price),
# with the cost map's size when it was asked. Asking litellm walks the map's fallback rules (about 0.3 ms of CPU)
# and a run prices every turn, so each model is asked once; a model registered with litellm later grows the map,
# which clears the verdict.
_LITELLM_PRICES: dict[str, tuple[int, tuple[float, float] | Literal["tiered"] | None]] = {}


def litellm_unit_prices(model: str) -> tuple[float, float] | Literal["tiered"] | None:
    """What litellm's cost map charges for `model`, asked once per model string.

    (USD per input token, USD per output token) when the price is flat: litellm's own `cost_per_token` for one
    token of each, so tokens x these prices is litellm's per-call figure. "tiered" when the price depends on the
    size of the call (a `*_above_*_tokens` rate): those calls are priced by litellm one by one. None: no price.
    """
    from evalcore.models.litellm_loader import litellm

    map_size = len(litellm.model_cost)
    known = _LITELLM_PRICES.get(model)
    if known is not None and known[0] == map_size:
        return known[1]
    verdict: tuple[float, float] | Literal["tiered"] | None
    try:
        input_price = float(litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=0)[0])
        output_price = float(litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=1)[1])
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises a variety of errors for models it has no price for; all mean "unknown"
        verdict = None
    else:
        tiered = any("_above_" in key and value is not None for key, value in info.items())
        flat = math.isfinite(input_price) and math.isfinite(output_price)
        verdict = "tiered" if tiered else (input_price, output_price) if flat else None
    _LITELLM_PRICES[model] = (map_size, verdict)
    return verdict


def known_unit_prices(spec: ModelSpec) -> tuple[float, float] | None:
    """The flat unit prices of a priced model, from any source (overrides, registered table, litellm's map); else None.

    A model on the OpenAI-wire route is priced from litellm's map read without litellm (`evalcore.models.cost_map`).
    """
    prices = unit_prices(spec)
    if prices is not None or spec.simulated:
        return prices
    from evalcore.models.openai_route import route_of

    if route_of(spec) is not None:
        entry = bundled_entry(spec.name)
        if entry is None or not entry.flat or entry.input_cost_per_token is None or entry.output_cost_per_token is None:
            return None
        return entry.input_cost_per_token, entry.output_cost_per_token
    from_litellm = litellm_unit_prices(spec.name)
    return from_litellm if isinstance(from_litellm, tuple) else None


def _litellm_call_cost(model: str, input_tokens: int, output_tokens: int, details: UsageDetails) -> float | None:
    from evalcore.models.litellm_loader import litellm

    usage = None
    if details.any:
        usage = litellm.Usage(
            prompt_tokens=input_tokens,
            completion_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
            prompt_tokens_details={"cached_tokens": details.cached_input, "audio_tokens": details.audio_input},
            completion_tokens_details={"reasoning_tokens": details.reasoning, "audio_tokens": details.audio_output},
        )
    try:
        input_cost, output_cost = litellm.cost_per_token(model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens, usage_object=usage)
    except Exception:  # as in litellm_unit_prices: no price
        return None
    total = float(input_cost) + float(output_cost)
    return total if math.isfinite(total) else None


def map_cost(entry: CostMapEntry, input_tokens: int, output_tokens: int, details: UsageDetails) -> float:
    """A call's cost from a flat map entry, as litellm's `generic_cost_per_token` computes it for a call with no
    service tier (same terms, same order, so the same float): text, cached and audio input tokens at their prices,
    then text, audio and reasoning output tokens at theirs; a detail without a price of its own at the base price."""
    prices = entry.prices
    input_price, output_price = entry.input_cost_per_token or 0.0, entry.output_cost_per_token or 0.0
    text_input = max(input_tokens - details.cached_input - details.audio_input, 0)
    prompt_cost = float(text_input) * input_price
    prompt_cost += float(details.cached_input) * _or(prices.get("cache_read_input_token_cost"), input_price)
    if details.audio_input:
        prompt_cost += float(details.audio_input) * _or(prices.get("input_cost_per_audio_token"), input_price)
    if not (details.reasoning or details.audio_output):
        return prompt_cost + float(output_tokens) * output_price
    completion_cost = float(max(0, output_tokens - details.reasoning - details.audio_output)) * output_price
    if details.audio_output:
        completion_cost += float(details.audio_output) * _or(prices.get("output_cost_per_audio_token"), output_price)
    if details.reasoning:
        completion_cost += float(details.reasoning) * _or(prices.get("output_cost_per_reasoning_token"), output_price)
    return prompt_cost + completion_cost


def _or(price: float | None, fallback: float) -> float:
    return fallback if price is None else price


def turn_cost(spec: ModelSpec, input_tokens: int | None, output_tokens: int | None, details: UsageDetails | None = None) -> float | None:
    """The cost of one call that used these tokens (`details`: how many were cached, audio, reasoning), or None when
    the tokens or the price are unknown. Never $0 for an unknown price."""
    if spec.simulated:
        return 0.0
    if input_tokens is None or output_tokens is None:
        return None
    details = details or NO_DETAILS
    prices = unit_prices(spec)
    if prices is not None:  # as litellm prices a call given its own two prices: every token at one of them
        return input_tokens * prices[0] + output_tokens * prices[1]
    from evalcore.models.openai_route import route_of

    if route_of(spec) is not None:
        entry = bundled_entry(spec.name)
        if entry is None:
            return None
        if entry.flat:
            return map_cost(entry, input_tokens, output_tokens, details)
        return _litellm_call_cost(spec.name, input_tokens, output_tokens, details)
    from_litellm = litellm_unit_prices(spec.name)
    if from_litellm is None:
        return None
    if isinstance(from_litellm, tuple) and not details.any:
        return input_tokens * from_litellm[0] + output_tokens * from_litellm[1]
    return _litellm_call_cost(spec.name, input_tokens, output_tokens, details)
