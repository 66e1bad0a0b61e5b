"""Prices from litellm's cost map, read once per model, give litellm's own per-call figures to the last digit."""

from __future__ import annotations

import pytest

from evalcore.models import pricing
from evalcore.models.cost_map import bundled_entry
from evalcore.models.litellm_loader import litellm
from evalcore.models.pricing import UsageDetails, litellm_unit_prices, map_cost, turn_cost
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
        turn_cost(ModelSpec("openai/gpt-4o-mini"), 100, 10)  # the OpenAI-wire route's: priced from the bundled map's file
        assert turn_cost(ModelSpec("hosted_vllm/nobody-prices-this"), 100, 10) is None
    assert sorted(set(asked)) == ["hosted_vllm/nobody-prices-this", "mistral/mistral-small-latest"]
    assert len(asked) == 3  # a priced model: one input token and one output token, once; an unknown one: one refusal
    entry = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "litellm_provider": "hosted_vllm", "mode": "chat"}
    monkeypatch.setitem(litellm.model_cost, "hosted_vllm/nobody-prices-this", entry)
    assert turn_cost(ModelSpec("hosted_vllm/nobody-prices-this"), 100, 10) == 100 * 1e-6 + 10 * 2e-6


# (prompt, completion, cached input, audio input, reasoning, audio output) tokens
DETAILED_USAGE = ((1000, 10, 800, 0, 0, 0), (1234, 567, 1024, 0, 0, 0), (5000, 900, 0, 0, 700, 0), (2000, 300, 500, 400, 0, 120), (3, 9, 3, 0, 8, 0))
# Flat-priced models of the bundled map: with a cached-input price, with audio prices, a reasoning model, none of them.
DETAILED_MODELS = ("openai/gpt-4o-mini", "gpt-4.1-mini", "gpt-4o", "gpt-4o-audio-preview-2024-12-17", "gpt-audio-mini", "o3-mini", "gpt-3.5-turbo")


@pytest.mark.parametrize("model", DETAILED_MODELS)
def test_cached_audio_and_reasoning_tokens_are_priced_as_litellm_prices_them_without_litellm(model: str) -> None:
    """The OpenAI-wire route prices from the map read as a file (`map_cost`): litellm's own figure, to the last digit."""
    entry = bundled_entry(model)
    assert entry is not None and entry.flat
    for prompt, completion, cached, audio_in, reasoning, audio_out in DETAILED_USAGE:
        usage = litellm.Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
            prompt_tokens_details={"cached_tokens": cached, "audio_tokens": audio_in},
            completion_tokens_details={"reasoning_tokens": reasoning, "audio_tokens": audio_out},
        )
        theirs = sum(litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion, usage_object=usage))
        details = UsageDetails(cached_input=cached, audio_input=audio_in, reasoning=reasoning, audio_output=audio_out)
        assert map_cost(entry, prompt, completion, details) == theirs


def test_cached_input_tokens_cost_what_litellm_says_on_both_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 prompt tokens (800 of them cached) and 10 output tokens on gpt-4o-mini: $0.000096, not $0.000156."""
    details = UsageDetails(cached_input=800)
    on_route = turn_cost(ModelSpec("openai/gpt-4o-mini"), 1000, 10, details)
    monkeypatch.setenv("EVALCORE_MODEL_ROUTE", "litellm")
    through_litellm = turn_cost(ModelSpec("openai/gpt-4o-mini"), 1000, 10, details)
    assert on_route == pytest.approx(0.000096, rel=1e-9) and through_litellm == pytest.approx(0.000096, rel=1e-9)


def test_a_model_no_price_list_knows_has_no_price_and_given_prices_it_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the OpenAI-wire route, a name the map does not have is "no price" (None), never $0; `--prices` prices it,
    every token at the input or output price (as litellm prices a call given its two prices)."""
    spec = ModelSpec("openai/my-local-llama", api_base="http://127.0.0.1:8080/v1")
    assert turn_cost(spec, 1000, 10, UsageDetails(cached_input=800)) is None
    assert turn_cost(ModelSpec("hosted_vllm/qwen", api_base="http://127.0.0.1:8000/v1"), 1000, 10) is None
    monkeypatch.setattr(pricing, "_REGISTERED", {})
    pricing.register_prices({"openai/my-local-llama": (1e-6, 2e-6)})
    assert turn_cost(spec, 1000, 10, UsageDetails(cached_input=800)) == pytest.approx(1000 * 1e-6 + 10 * 2e-6)
