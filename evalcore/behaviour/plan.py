"""Pure logic: the run plan, everything that decides a behaviour run's attempts, as one typed, versioned record.

A `RunPlan` is built once, when the run starts (from the command's `BehaviourConfig`, the golden set as loaded and
the server as discovered), stored once with the run (`behaviour_runs.plan_json`, and its `kind` beside it), and read
back with `RunPlan.from_json`. Everything downstream derives from it and from nothing else:

- the `--cache` key of each attempt (`attempt_key`, the one builder: a stored attempt's key is computed from its
  own run's stored plan with this same method);
- `--resume`, which restores the whole plan (kind, catalog rewrite and replayed run included);
- what a run may stand for (`evalcore.run_kinds.eligibility`, by the plan's `kind`);
- the report header and the Runs page's kind column.

Secrets never enter it: the target is its redacted description and a model's `api_base` is stored redacted (keys
live in the environment, never in a spec).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evalcore.errors import StoreError
from evalcore.mcp.fingerprint import canonical_json
from evalcore.models.tool_format import CatalogRewrite, ToolOverride
from evalcore.models.types import ModelSpec
from evalcore.records import JudgeTrust
from evalcore.redaction import redact
from evalcore.run_kinds import RUN_KINDS, RunKind

PLAN_SCHEMA = 1
# ModelSpec fields that change no attempt: how many attempts run at once, and the provider's connection limits.
_SCHEDULING_FIELDS = frozenset({"max_concurrency", "limits"})


@dataclass(frozen=True)
class RunPlan:
    """Everything that decides a run's attempts (see the module docstring)."""

    kind: RunKind
    golden_path: str  # the golden set's identity (evalcore.paths.golden_identity)
    golden_hash: str  # its content hash: a baseline is one of the same content
    cases: tuple[str, ...]  # the case ids run, in order
    rubric_sha256: str | None  # the golden set's rubric file, which the judge grades against
    models: tuple[ModelSpec, ...]  # names normalised (evalcore.paths.model_identity); api_base redacted
    runs: int
    judge: ModelSpec | None
    max_steps: int
    fault_timeout_s: float
    run_date: str  # ISO date the run stands for
    max_drop: float
    max_error_rate: float
    target: str  # the server as described to a reader, credentials redacted
    server_fingerprint: str
    evalcore_version: str
    catalog: CatalogRewrite = field(default_factory=CatalogRewrite)  # what the model sees changed (arms only)
    replay_of: str | None = None  # the recorded run a replay serves
    shard: str | None = None  # "I/K" for one shard of a sharded plan
    model_scripts: Mapping[str, str] = field(default_factory=dict)  # a scripted sim model's name -> its script's sha256
    # The judge's agreement with people when the run started, and `--judge-policy`: whether its verdicts enter `passed`
    judge_trust: JudgeTrust | None = None
    judge_repeats: int = 1  # `--judge-repeats K`: each attempt graded K times, the majority its verdict
    host_versions: Mapping[str, str] = field(default_factory=dict)  # a host model's name -> its host and version (evalcore.hosts)
    schema: int = PLAN_SCHEMA

    def __post_init__(self) -> None:
        if self.kind not in RUN_KINDS:
            raise StoreError(f"unknown run kind {self.kind!r}; known: {', '.join(RUN_KINDS)}")

    def model(self, name: str) -> ModelSpec | None:
        return next((spec for spec in self.models if spec.name == name), None)

    def attempt_key(self, model: ModelSpec, case_hash: str, attempt: int) -> str:
        """The `--cache` key: sha256 over every input that can change what one attempt does or records.

        The model and its parameters; the case (by content hash) and the attempt number (repeats stay independent
        samples); the server's surface (its fingerprint); the catalog rewrite the model saw; the judge, the rubric
        it grades against, whether its verdict entered `passed` and how many times it graded (each only when it differs
        from the default, so keys of runs stored before `--judge-policy` and `--judge-repeats` stay as they were); the
        harness (step limit, fault timeout, evalcore version). Not the kind: only the kinds that may serve the cache
        are ever looked up.
        """
        content = {
            "model": model_parameters(model),
            **({"host": self.host_versions[model.name]} if model.name in self.host_versions else {}),
            "case": case_hash,
            "attempt": attempt,
            "server": self.server_fingerprint,
            "catalog": catalog_json(self.catalog),
            "judge": model_parameters(self.judge) if self.judge is not None else None,
            "rubric": self.rubric_sha256,
            "harness": {"max_steps": self.max_steps, "fault_timeout_s": self.fault_timeout_s, "evalcore_version": self.evalcore_version},
        }
        if not self.judge_gates:
            content["judgeGates"] = False
        if self.judge_repeats != 1:
            content["judgeRepeats"] = self.judge_repeats
        return hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()

    @property
    def judge_gates(self) -> bool:
        """Whether the judge's verdicts enter `passed` and the gate: there is no judge, or its policy lets it."""
        return self.judge_trust is None or self.judge_trust.gated

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "kind": self.kind,
            "golden": {"path": self.golden_path, "hash": self.golden_hash, "cases": list(self.cases), "rubricSha256": self.rubric_sha256},
            "models": [_spec_json(spec) for spec in self.models],
            "modelScripts": dict(self.model_scripts),
            **({"hostVersions": dict(self.host_versions)} if self.host_versions else {}),
            "runs": self.runs,
            "judge": _spec_json(self.judge) if self.judge is not None else None,
            "judgeTrust": self.judge_trust.to_json() if self.judge_trust is not None else None,
            "judgeRepeats": self.judge_repeats,
            "maxSteps": self.max_steps,
            "faultTimeoutS": self.fault_timeout_s,
            "runDate": self.run_date,
            "maxDrop": self.max_drop,
            "maxErrorRate": self.max_error_rate,
            "target": {"description": redact(self.target), "fingerprint": self.server_fingerprint},
            "catalog": catalog_json(self.catalog),
            "replayOf": self.replay_of,
            "shard": self.shard,
            "evalcoreVersion": self.evalcore_version,
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> RunPlan:
        """The plan a run stored; StoreError naming what is wrong for a document this evalcore cannot read."""
        try:
            schema = int(document["schema"])
            if schema > PLAN_SCHEMA:
                raise StoreError(f"a run plan of schema {schema} is newer than this evalcore reads ({PLAN_SCHEMA}); upgrade evalcore")
            golden, target = document["golden"], document["target"]
            return cls(
                kind=document["kind"],
                golden_path=str(golden["path"]),
                golden_hash=str(golden["hash"]),
                cases=tuple(golden["cases"]),
                rubric_sha256=golden.get("rubricSha256"),
                models=tuple(ModelSpec(**spec) for spec in document["models"]),
                model_scripts=dict(document.get("modelScripts") or {}),
                host_versions=dict(document.get("hostVersions") or {}),
                runs=int(document["runs"]),
                judge=ModelSpec(**document["judge"]) if document.get("judge") else None,
                judge_trust=JudgeTrust.from_json(document["judgeTrust"]) if document.get("judgeTrust") else None,
                judge_repeats=int(document.get("judgeRepeats") or 1),
                max_steps=int(document["maxSteps"]),
                fault_timeout_s=float(document["faultTimeoutS"]),
                run_date=str(document["runDate"]),
                max_drop=float(document["maxDrop"]),
                max_error_rate=float(document["maxErrorRate"]),
                target=str(target["description"]),
                server_fingerprint=str(target["fingerprint"]),
                catalog=catalog_from_json(document.get("catalog") or {}),
                replay_of=document.get("replayOf"),
                shard=document.get("shard"),
                evalcore_version=str(document["evalcoreVersion"]),
                schema=schema,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"a stored run plan cannot be read ({type(exc).__name__}: {exc})") from exc


def model_parameters(model: ModelSpec) -> dict[str, Any]:
    """A model's fields that can change an attempt (all but scheduling ones, so a new field counts by default), its
    `api_base` redacted as the stored plan keeps it, so a stored attempt's key and this run's agree."""
    parameters = {k: v for k, v in asdict(model).items() if k not in _SCHEDULING_FIELDS}
    if parameters.get("api_base"):
        parameters["api_base"] = redact(parameters["api_base"])
    return parameters


def catalog_json(catalog: CatalogRewrite) -> dict[str, Any]:
    """The whole rewrite, so a resumed arm shows the model exactly what it showed before (distractors with their schemas)."""
    data: dict[str, Any] = {}
    if catalog.tools:
        data["tools"] = {name: asdict(override) for name, override in sorted(catalog.tools.items())}
    if catalog.distractors:
        data["distractors"] = [dict(tool) for tool in catalog.distractors]
    if catalog.order:
        data["order"] = list(catalog.order)
    return data


def catalog_from_json(data: Mapping[str, Any]) -> CatalogRewrite:
    tools = {name: ToolOverride(**override) for name, override in (data.get("tools") or {}).items()}
    return CatalogRewrite(tools=tools, distractors=tuple(data.get("distractors") or ()), order=tuple(data.get("order") or ()))


def _spec_json(spec: ModelSpec) -> dict[str, Any]:
    document = asdict(spec)
    if document.get("api_base"):
        document["api_base"] = redact(document["api_base"])
    return document


def script_hashes(models: Sequence[ModelSpec], read: Any) -> dict[str, str]:
    """sha256 of each scripted sim model's script (`read(path) -> bytes | None`), kept beside its name for drift."""
    found: dict[str, str] = {}
    for spec in models:
        prefix, _, path = spec.name.partition(":")
        if prefix == "sim/script" and path:
            content = read(path)
            if content is not None:
                found[spec.name] = hashlib.sha256(content).hexdigest()
    return found
