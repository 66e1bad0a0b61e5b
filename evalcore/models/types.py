"""Pure data: what the harness asks of a model and what one model turn returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelSpec:
    """One model under test. Keys are never here: litellm reads them from the environment."""

    name: str  # any litellm model string: openai/gpt-4o, anthropic/..., hosted_vllm/..., sim/lexical, sim/script:path.yaml
    api_base: str | None = None
    max_concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 3  # for rate limits and 5xx, with exponential backoff
    temperature: float = 0.0
    seed: int | None = 7
    input_cost_per_token: float | None = None  # price overrides for custom models (USD)
    output_cost_per_token: float | None = None

    @property
    def simulated(self) -> bool:
        return self.name.startswith("sim/")


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the model made it, with the MCP tool name mapped back."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    raw_arguments: str = ""  # the JSON text the model produced (kept when it does not parse)
    arguments_valid_json: bool = True


@dataclass(frozen=True)
class ModelTurn:
    """One model response: text and/or tool calls, with telemetry."""

    text: str | None
    tool_calls: tuple[ToolCall, ...]
    latency_ms: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None  # None when the price is unknown, never a guess
    model_version: str | None = None  # what the provider reported (response.model / system fingerprint)
    retries: int = 0
    finish_reason: str | None = None
    raw_message: Mapping[str, Any] = field(default_factory=dict)  # the assistant message to append to the conversation
