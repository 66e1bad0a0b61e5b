"""Pure data: one attempt of one case by one model, from transcript to score."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evalcore.models.types import ModelTurn, ToolCall

StopReason = Literal["final", "step_limit", "model_error", "server_error"]


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

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for turn in self.turns for call in turn.tool_calls)


@dataclass(frozen=True)
class JudgeVerdict:
    passed: bool
    score: float | None  # 0..1 when the rubric yields a grade
    reason: str
    judge_model: str


@dataclass(frozen=True)
class AttemptScore:
    """Separate verdicts, because selection and arguments fail for different reasons.

    `None` means "not applicable to this case" (e.g. argument correctness when
    the wrong tool was chosen, over-call on a positive case).
    """

    selection_correct: bool
    args_correct: bool | None
    sequence_correct: bool | None
    over_call: bool | None
    task_completed: bool | None  # the judge's verdict, when a judge ran
    passed: bool
    reasons: tuple[str, ...] = field(default=())


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
