"""Prices from litellm's cost map, read once per model, give litellm's own per-call figures to the last digit."""

from __future__ import annotations

import pytest

from evalcore.models import pricing
from evalcore.models.litellm_loader import litellm
from evalcore.models.pricing import litellm_unit_prices, turn_cost
from evalcore.models.types import ModelSpec

# Models of several providers with a flat price in the bundled (offline) cost map.
FLAT = ("openai/gpt-4o-mini", "openai/gpt-4.1-mini", "gpt-4o", "mistral/mistral-small-latest", "deepseek/deepseek-chat")
TOKENS = ((0, 0), (1, 1), (1234, 56), (98_765, 4_321), (3, 250_000))


def _tiered_model() -> str:
    """A model in the bundled map whose price changes above a call size."""
    return next(name for name, entry in sorted(litellm.model_cost.items()) if isinstance(entry, dict) and any("_above_" in key for key in entry))


@pytest.mark.parametrize("model", FLAT)
def test_flat_prices_read_once_equal_litellms_cost_of_every_call(model: str) -> None:
    assert isinstance(litellm_unit_prices(model), tuple)
    for input_tokens, output_tokens in TOKENS:
        per_call = sum(litellm.cost_per_token(model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens))
        usage = {"prompt_tokens": input_tokens, "completion_tokens": output_tokens, "total_tokens": input_tokens + output_tokens}
        response = litellm.ModelResponse(model=model, usage=usage)
        assert turn_cost(ModelSpec(model), input_tokens, output_tokens) == per_call
        assert turn_cost(ModelSpec(model), input_tokens, output_tokens) == litellm.completion_cost(completion_response=response, model=model)


def test_a_price_tiered_by_call_size_is_litellms_on_both_sides_of_the_tier() -> None:
    model = _tiered_model()
    assert litellm_unit_prices(model) == "tiered"
    small, large = turn_cost(ModelSpec(model), 1_000, 100), turn_cost(ModelSpec(model), 300_000, 100)
    assert small == sum(litellm.cost_per_token(model=model, prompt_tokens=1_000, completion_tokens=100))
    assert large == sum(litellm.cost_per_token(model=model, prompt_tokens=300_000, completion_tokens=100))
    assert small is not None and large is not None and large / 300 != pytest.approx(small)  # the rate did change


def test_litellm_is_asked_once_per_model_and_again_when_its_map_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    real = litellm.cost_per_token

    def counting(**kwargs: object) -> object:
        asked.append(str(kwargs["model"]))
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pricing, "_LITELLM_PRICES", {})
    monkeypatch.setattr(litellm, "cost_per_token", counting)
    for _ in range(50):
        turn_cost(ModelSpec("mistral/mistral-small-latest"), 100, 10)
        turn_cost(ModelSpec("openai/gpt-4o-mini"), 100, 10)  # the direct route's: priced from the bundled map's file
        assert turn_cost(ModelSpec("hosted_vllm/nobody-prices-this"), 100, 10) is None
    assert sorted(set(asked)) == ["hosted_vllm/nobody-prices-this", "mistral/mistral-small-latest"]
    assert len(asked) == 3  # a priced model: one input token and one output token, once; an unknown one: one refusal
    entry = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "litellm_provider": "hosted_vllm", "mode": "chat"}
    monkeypatch.setitem(litellm.model_cost, "hosted_vllm/nobody-prices-this", entry)
    assert turn_cost(ModelSpec("hosted_vllm/nobody-prices-this"), 100, 10) == 100 * 1e-6 + 10 * 2e-6
