"""Pure data: what the harness asks of a model (a model turn's records live in `evalcore.records`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath

from evalcore.models.limits import NO_LIMITS, ProviderLimits
from evalcore.records import ModelTurn, ToolCall

__all__ = ["ModelSpec", "ModelTurn", "ToolCall", "short_model_name", "version_without_name"]


def short_model_name(name: str) -> str:
    """How a model is named to a reader: `sim/script:<path>` by the script's file name (`sim/script:steady.yaml`), any other as it is."""
    prefix, _, path = name.partition(":")
    if prefix.startswith("host/") and path:  # an agent host: the model it runs, shortened the same way
        return f"{prefix}:{short_model_name(path)}"
    return f"{prefix}:{PurePath(path).name}" if prefix == "sim/script" and path else name


def version_without_name(name: str, version: str | None) -> str | None:
    """A reported model version without the model's own name in front (a provider echoes the model, then its fingerprint)."""
    if version is None:
        return None
    return version.removeprefix(f"{name} ") if version.startswith(f"{name} ") else version


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
    limits: ProviderLimits = NO_LIMITS  # its provider's connection limit, request rate and Retry-After bound (run options)

    def __post_init__(self) -> None:
        if isinstance(self.limits, Mapping):  # a spec read back from a stored run's config (`--resume`)
            object.__setattr__(self, "limits", ProviderLimits(**self.limits))

    @property
    def simulated(self) -> bool:
        return self.name.startswith("sim/") or (self.name.startswith("host/") and ":sim/" in self.name)  # a host on a sim model
