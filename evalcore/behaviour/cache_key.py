"""Pure logic: the `--cache` key of an attempt, over every input that can change what the attempt does or records.

A stored attempt is reused only by an attempt with the same key. The key holds:

- the model and its parameters (`ModelSpec`: name, api_base, temperature, seed, timeout, retries, prices);
- the case, by its content hash (prompt, system prompt, expectations, case rubric, conversation), and the
  attempt number (repeats stay independent samples);
- the server's surface, by its fingerprint (tools, their descriptions and schemas, instructions);
- the judge (its model and parameters) and the golden set's rubric text it grades against;
- the harness: the step limit, the fault timeout and the evalcore version.

A run stores what it set for all its attempts (`RunInputs.to_json`, in the run's config), so a later run
recomputes a stored attempt's key with this same function. A run stored without them is never reused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from evalcore.mcp.fingerprint import canonical_json
from evalcore.models.types import ModelSpec

# ModelSpec fields that change no attempt: how many attempts run at once.
_SCHEDULING_FIELDS = frozenset({"max_concurrency"})


@dataclass(frozen=True)
class RunInputs:
    """What a run sets for every attempt, beside the model, the case and the attempt number."""

    server_fingerprint: str
    judge: ModelSpec | None
    rubric_text: str | None  # the golden set's rubric file, which the judge grades against
    max_steps: int
    fault_timeout_s: float
    evalcore_version: str

    def to_json(self) -> dict[str, Any]:
        """The part stored with the run's config (the judge and the step limit are stored there already)."""
        return {"rubric_sha256": _sha256(self.rubric_text), "fault_timeout_s": self.fault_timeout_s, "evalcore_version": self.evalcore_version}


def attempt_cache_key(model: ModelSpec, case_hash: str, attempt: int, run: RunInputs) -> str:
    """sha256 over every input of one attempt (see the module docstring)."""
    return _key(model_parameters(model), case_hash, attempt, run.server_fingerprint, _judge(run.judge), _sha256(run.rubric_text), _harness(run))


def stored_attempt_key(row: Mapping[str, Any], run_config: Mapping[str, Any], server_fingerprint: str) -> str | None:
    """The key of a stored attempt (`model`, `case_hash`, `attempt`), from its run's stored config; None when that run
    did not store every input (it ran before the key held them all)."""
    inputs = run_config.get("cache_inputs")
    model = next((spec for spec in run_config.get("models") or () if spec.get("name") == row["model"]), None)
    if not isinstance(inputs, Mapping) or model is None or "max_steps" not in run_config or "judge" not in run_config:
        return None
    judge = run_config["judge"]
    harness = {"max_steps": run_config["max_steps"], "fault_timeout_s": inputs.get("fault_timeout_s"), "evalcore_version": inputs.get("evalcore_version")}
    model_json = {k: v for k, v in model.items() if k not in _SCHEDULING_FIELDS}
    judge_json = {k: v for k, v in judge.items() if k not in _SCHEDULING_FIELDS} if judge else None
    return _key(model_json, row["case_hash"], int(row["attempt"]), server_fingerprint, judge_json, inputs.get("rubric_sha256"), harness)


def model_parameters(model: ModelSpec) -> dict[str, Any]:
    """A model's fields that can change an attempt (all but scheduling ones, so a new field counts by default)."""
    return {k: v for k, v in asdict(model).items() if k not in _SCHEDULING_FIELDS}


def _judge(judge: ModelSpec | None) -> dict[str, Any] | None:
    return model_parameters(judge) if judge is not None else None


def _harness(run: RunInputs) -> dict[str, Any]:
    return {"max_steps": run.max_steps, "fault_timeout_s": run.fault_timeout_s, "evalcore_version": run.evalcore_version}


def _key(
    model: Mapping[str, Any],
    case_hash: str,
    attempt: int,
    server_fingerprint: str,
    judge: Mapping[str, Any] | None,
    rubric_sha256: str | None,
    harness: Mapping[str, Any],
) -> str:
    content = {
        "model": dict(model),
        "case": case_hash,
        "attempt": attempt,
        "server": server_fingerprint,
        "judge": dict(judge) if judge is not None else None,
        "rubric": rubric_sha256,
        "harness": dict(harness),
    }
    return hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()


def _sha256(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text is not None else None
