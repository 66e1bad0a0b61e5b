"""I/O layer: the offline `sim/` provider, registered with litellm as a custom provider.

`register_sim_provider()` adds a `SimProvider` under the name `sim` to
`litellm.custom_provider_map` (once), after which any litellm call with a
`sim/...` model string lands here. litellm strips the provider prefix
(`model="lexical"`, `"judge"` or `"script:<path>"`), passes `tools` in
`optional_params["tools"]`, and passes the caller's `metadata=` unchanged as
`litellm_params["metadata"]`; `evalcore.models.adapter.complete` puts the run
context (case id, attempt, run date) under `metadata["evalcore"]`.

Simulated latency is real (`asyncio.sleep`), and a latency beyond the call's
timeout fails as a timeout. Scripted errors and bad scripts are raised as
`CustomLLMError` with an HTTP status, which litellm maps to its usual
exceptions (429 -> RateLimitError, 503 -> ServiceUnavailableError, 400 ->
BadRequestError, 408 -> Timeout), so they meet the same retry rules as a real
provider's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import httpx

from evalcore.errors import ConfigError
from evalcore.models.litellm_loader import CustomLLM, CustomLLMError, ModelResponse, litellm
from evalcore.models.sim.catalog import SIM_PROVIDER, sim_reply
from evalcore.models.sim.reply import SimReply, assistant_turns, openai_message


def evalcore_context(litellm_params: Mapping[str, Any] | None) -> Mapping[str, Any]:
    metadata = (litellm_params or {}).get("metadata") or {}
    context = metadata.get("evalcore") if isinstance(metadata, Mapping) else None
    return context if isinstance(context, Mapping) else {}


def _seconds(timeout: float | httpx.Timeout | None) -> float | None:
    if isinstance(timeout, httpx.Timeout):
        return timeout.read
    return None if timeout is None else float(timeout)


def _reply(model: str, messages: list[Any], optional_params: Mapping[str, Any], litellm_params: Mapping[str, Any] | None) -> SimReply:
    try:
        return sim_reply(model, messages, optional_params.get("tools"), evalcore_context(litellm_params))
    except (ConfigError, ValueError) as exc:  # a bad script or context is the caller's mistake: a 400, never retried
        raise CustomLLMError(status_code=400, message=str(exc)) from exc


def _fill(model_response: ModelResponse, model: str, reply: SimReply, turn: int) -> ModelResponse:
    if reply.error_status is not None:
        raise CustomLLMError(status_code=reply.error_status, message=f"sim/{model}: {reply.error_message}")
    model_response.choices[0].message = litellm.Message(**openai_message(reply, turn))
    model_response.choices[0].finish_reason = reply.finish_reason
    model_response.model = f"{SIM_PROVIDER}/{model}"
    model_response.system_fingerprint = reply.model_version
    model_response.usage = litellm.Usage(  # type: ignore[attr-defined]
        prompt_tokens=reply.input_tokens, completion_tokens=reply.output_tokens, total_tokens=reply.input_tokens + reply.output_tokens
    )
    return model_response


def _delay(reply: SimReply, timeout: float | httpx.Timeout | None) -> tuple[float, bool]:
    """(seconds to wait, whether the call then times out)."""
    wanted = reply.latency_ms / 1000
    limit = _seconds(timeout)
    return (limit, True) if limit is not None and wanted > limit else (wanted, False)


class SimProvider(CustomLLM):
    """litellm's entry point to the sim policies; the policies themselves are pure."""

    async def acompletion(
        self,
        model: str,
        messages: list[Any],
        api_base: str,
        custom_prompt_dict: dict[str, Any],
        model_response: ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict[str, Any],
        acompletion: Any = None,
        litellm_params: dict[str, Any] | None = None,
        logger_fn: Any = None,
        headers: dict[str, Any] | None = None,
        timeout: float | httpx.Timeout | None = None,
        client: Any = None,
    ) -> ModelResponse:
        reply = _reply(model, messages, optional_params, litellm_params)
        seconds, times_out = _delay(reply, timeout)
        await asyncio.sleep(seconds)
        if times_out:
            raise CustomLLMError(status_code=408, message=f"sim/{model}: simulated latency {reply.latency_ms:g} ms exceeds the {seconds:g} s timeout")
        return _fill(model_response, model, reply, assistant_turns(messages))

    def completion(
        self,
        model: str,
        messages: list[Any],
        api_base: str,
        custom_prompt_dict: dict[str, Any],
        model_response: ModelResponse,
        print_verbose: Any,
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict[str, Any],
        acompletion: Any = None,
        litellm_params: dict[str, Any] | None = None,
        logger_fn: Any = None,
        headers: dict[str, Any] | None = None,
        timeout: float | httpx.Timeout | None = None,
        client: Any = None,
    ) -> ModelResponse:
        reply = _reply(model, messages, optional_params, litellm_params)
        seconds, times_out = _delay(reply, timeout)
        time.sleep(seconds)
        if times_out:
            raise CustomLLMError(status_code=408, message=f"sim/{model}: simulated latency {reply.latency_ms:g} ms exceeds the {seconds:g} s timeout")
        return _fill(model_response, model, reply, assistant_turns(messages))


def register_sim_provider() -> None:
    """Make `sim/...` model strings work in litellm. Idempotent; leaves other custom providers alone."""
    if not any(item.get("provider") == SIM_PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append({"provider": SIM_PROVIDER, "custom_handler": SimProvider()})


def register_sim_price(model: str) -> None:
    """Enter a `sim/...` model string in litellm's cost map at price zero (once), as `litellm.register_model` documents.

    litellm prices every response for its own logging; for a model missing from its map that is a
    search of every map entry and fallback rule, twice per call (~0.2 ms of CPU). evalcore's own
    cost for sim models is 0.0 either way (`pricing.turn_cost`).
    """
    if model not in litellm.model_cost:
        free = {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0, "cache_creation_input_token_cost": 0.0, "cache_read_input_token_cost": 0.0}
        litellm.register_model({model: {**free, "litellm_provider": SIM_PROVIDER, "mode": "chat"}})
