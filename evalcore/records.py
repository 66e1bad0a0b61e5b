"""Pure data (ground floor): the typed, versioned records of Layer 1 and 2, from a model turn to a run's report.

Everything may import this module; it imports nothing of evalcore. A record
that is stored or written to a file carries `SCHEMA_VERSION` in its JSON
(`schemaVersion`), so a reader can tell which shape it holds.

    ToolCall, ModelTurn          what the model asked for, one response
    ToolExecution                a tool call as the MCP server answered it
    Transcript                   one attempt's conversation (stored as JSON)
    JudgeVerdict                 the judge model's verdict on an answer
    Score                        one scorer's verdict on one attempt (scorer id, value, applies, reason)
    AttemptScore                 an attempt's scores together, and whether it passed
    RobustnessScore              the Layer 2 verdicts of an attempt under a fault or attack
    AttemptRecord                one finished attempt, as stored

The report records (case, model and run results) live in `evalcore.scoring.metrics`'
output and are serialised by `evalcore.behaviour.report`; their JSON Schema is
docs/report.schema.json.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

SCHEMA_VERSION: Final = 1  # of every record's JSON below; bump it with any change a reader would notice

StopReason = Literal["final", "step_limit", "model_error", "server_error"]


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


@dataclass(frozen=True)
class ToolExecution:
    """A model's tool call as executed on the MCP server."""

    call: ToolCall
    result: Mapping[str, Any] | None  # the CallToolResult, when one came back
    error: str | None  # protocol or transport error, one line
    is_error: bool  # result.isError, or an error
    latency_ms: float
    request_ids: tuple[int | str, ...] = ()  # JSON-RPC ids sent; more than one when a cut stream was re-issued
    error_type: str | None = None  # JSON-RPC error code, transport failure kind, or "tool_error"
    fault: str | None = None  # the fault injected into this call, when a fault layer reports one


@dataclass(frozen=True)
class Transcript:
    messages: tuple[Mapping[str, Any], ...]  # the whole conversation as sent to / received from the model
    turns: tuple[ModelTurn, ...]
    executions: tuple[ToolExecution, ...]
    final_text: str | None
    stop_reason: StopReason
    error: str | None = None
    retries: int = 0  # provider retries spent on a call that failed beyond them (stop_reason model_error)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for turn in self.turns for call in turn.tool_calls)

    def to_json(self) -> str:
        """The stored form (`behaviour_attempts.transcript_json`): messages, per-turn telemetry, tool executions."""
        return json.dumps(
            {
                "schemaVersion": SCHEMA_VERSION,
                "messages": list(self.messages),
                "turns": [
                    {
                        "latency_ms": round(t.latency_ms, 3),
                        "input_tokens": t.input_tokens,
                        "output_tokens": t.output_tokens,
                        "cost_usd": t.cost_usd,
                        "model_version": t.model_version,
                        "retries": t.retries,
                        "finish_reason": t.finish_reason,
                        "tool_calls": [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in t.tool_calls],
                    }
                    for t in self.turns
                ],
                "executions": [
                    {
                        "tool": e.call.name,
                        "arguments": dict(e.call.arguments),
                        "result": e.result,
                        "error": e.error,
                        "is_error": e.is_error,
                        "latency_ms": round(e.latency_ms, 3),
                        "request_ids": list(e.request_ids),
                        "error_type": e.error_type,
                        "fault": e.fault,
                    }
                    for e in self.executions
                ],
                "final_text": self.final_text,
                "stop_reason": self.stop_reason,
                "error": self.error,
                "retries": self.retries,
            },
            default=str,
        )


@dataclass(frozen=True)
class JudgeVerdict:
    passed: bool
    score: float | None  # 0..1 when the rubric yields a grade
    reason: str
    judge_model: str


@dataclass(frozen=True)
class Score:
    """One scorer's verdict on one attempt (a row of the store's `attempt_scores`).

    `value` is 1.0 / 0.0 for a yes/no verdict (a grade in between where the scorer
    has one); it is None exactly when `applies` is false: the scorer has nothing to
    say about this attempt (argument correctness after the wrong tool was chosen,
    over-call on a positive case), and the attempt is in none of its denominators.
    `label` names a categorical outcome (a robustness outcome such as "retry").
    """

    scorer: str  # the registered id, e.g. "selection"
    value: float | None
    applies: bool
    reasons: tuple[str, ...] = ()  # why the verdict is not the best one; empty when it is
    label: str | None = None

    @property
    def reason(self) -> str | None:
        return "; ".join(self.reasons) if self.reasons else None

    @property
    def verdict(self) -> bool | None:
        """The value as a yes/no verdict (a value of 1 is yes); None when it does not apply."""
        return None if self.value is None else self.value >= 1.0


@dataclass(frozen=True)
class AttemptScore:
    """An attempt's scores, one per registered scorer that ran, and whether the attempt passed.

    The named properties read the scores of today's scorers, `None` meaning "not
    applicable to this attempt".
    """

    scores: tuple[Score, ...]
    passed: bool
    reasons: tuple[str, ...] = ()  # every failing reason, in scorer order (what `reasons_json` stores)

    def get(self, scorer: str) -> Score | None:
        return next((score for score in self.scores if score.scorer == scorer), None)

    def verdict(self, scorer: str) -> bool | None:
        score = self.get(scorer)
        return None if score is None else score.verdict

    @property
    def selection_correct(self) -> bool | None:
        return self.verdict("selection")

    @property
    def args_correct(self) -> bool | None:
        return self.verdict("arguments")

    @property
    def sequence_correct(self) -> bool | None:
        return self.verdict("sequence")

    @property
    def over_call(self) -> bool | None:
        return self.verdict("over_call")

    @property
    def task_completed(self) -> bool | None:
        return self.verdict("judge")


RobustnessOutcome = Literal["retry", "fallback", "honest_error", "claimed_success", "not_reached", "no_answer"]


@dataclass(frozen=True)
class RobustnessScore:
    """Layer 2 verdicts for an attempt of a case with `inject:`; see `evalcore.scoring.robustness`.

    `outcome` applies to call faults, `attack_attempted` and `refused` to attack cases.
    """

    fault: str
    outcome: RobustnessOutcome | None
    attack_attempted: bool | None
    refused: bool | None
    passed: bool
    reasons: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class AttemptRecord:
    """One finished attempt, as stored: the score, the telemetry and the whole transcript."""

    model: str
    case_id: str
    attempt: int
    case_hash: str
    case_kind: str
    simulated: bool
    model_version: str | None
    score: AttemptScore
    tool_calls: tuple[ToolCall, ...]
    final_text: str | None
    stop_reason: str
    error: str | None
    latency_ms: float | None  # model time summed over the attempt's turns
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    retries: int
    transcript_json: str
    judge: JudgeVerdict | None = None
    cached_from: str | None = None  # the run whose stored attempt was reused (--cache)
    robustness: RobustnessScore | None = None  # Layer 2, for cases with `inject:`
