"""Pure logic (with a lazy look-up in litellm's bundled cost map): what one model turn cost, in USD.

Where the price comes from, first match wins:
1. `sim/` models: 0.0 (they run locally and are free).
2. The `ModelSpec` overrides, when both `input_cost_per_token` and `output_cost_per_token` are set.
3. A table given to `register_prices` (custom or self-hosted models), keyed by the model string.
4. litellm's bundled cost map, looked up by the model string as configured, once per model: a flat price
   becomes unit prices (litellm's own figure for one token of each); a price tiered by call size is left to
   litellm's `cost_per_token` call by call.
5. Otherwise `None`: the price is unknown. Never a guess, never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from evalcore.errors import ConfigError
from evalcore.models.types import ModelSpec

_REGISTERED: dict[str, tuple[float, float]] = {}


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

    A model on the direct route is priced from litellm's bundled map read as a file (`evalcore.models.cost_map`):
    the route takes only models that map prices flat by their own name, so it is litellm's figure, without litellm.
    """
    prices = unit_prices(spec)
    if prices is not None or spec.simulated:
        return prices
    from evalcore.models.direct import route_of

    route = route_of(spec)
    if route is not None:
        from evalcore.models.cost_map import bundled_openai_chat_model

        entry = bundled_openai_chat_model(route.model)
        if entry is not None and entry.input_cost_per_token is not None and entry.output_cost_per_token is not None:
            return entry.input_cost_per_token, entry.output_cost_per_token
    from_litellm = litellm_unit_prices(spec.name)
    return from_litellm if isinstance(from_litellm, tuple) else None


def _litellm_call_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    from evalcore.models.litellm_loader import litellm

    try:
        input_cost, output_cost = litellm.cost_per_token(model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens)
    except Exception:  # as in litellm_unit_prices: no price
        return None
    total = float(input_cost) + float(output_cost)
    return total if math.isfinite(total) else None


def turn_cost(spec: ModelSpec, input_tokens: int | None, output_tokens: int | None) -> float | None:
    """The cost of one call that used these tokens, or None when the tokens or the price are unknown."""
    if spec.simulated:
        return 0.0
    if input_tokens is None or output_tokens is None:
        return None
    prices = known_unit_prices(spec)
    if prices is not None:
        return input_tokens * prices[0] + output_tokens * prices[1]
    if litellm_unit_prices(spec.name) == "tiered":
        return _litellm_call_cost(spec.name, input_tokens, output_tokens)
    return None
