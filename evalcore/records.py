"""Pure data (ground floor): the typed, versioned records of Layer 1 and 2, from a model turn to a run's report.

Everything may import this module; of evalcore it imports only
`evalcore.redaction` (pure, standard library only). A record that is stored or
written to a file carries `SCHEMA_VERSION` in its JSON (`schemaVersion`), so a
reader can tell which shape it holds.

Every serialisation of a record here (`to_json`, `to_row`) returns through
`published`, the one redaction seam of records: each secret evalcore knows (the
credential variables litellm reads, `--header` values) is replaced by
`[redacted:NAME]` in every form it took (`evalcore.redaction`). The record in
memory keeps the real values (the leak checks read them); what leaves the
process is its serialisation, so any writer of a record (the store, the report
file, an export) is covered without a redaction of its own. The conformance
report's serialisations (`evalcore.conformance.report`) return through it too.

    ToolCall, ModelTurn          what the model asked for, one response
    InputRequest, InputAnswer    an MRTR input request of the server, and the client's answer and who gave it
    InputRound                   one input_required answer and what the client sent back on the retry
    ToolExecution                a tool call as the MCP server answered it (through its MRTR rounds)
    UserTurn, StateReading       a simulated user's message; an `expect_state` read after the conversation
    Transcript                   one attempt's conversation (stored as JSON)
    JudgeVerdict                 the judge model's verdict on an answer
    Score                        one scorer's verdict on one attempt (scorer id, value, applies, reason)
    AttemptScore                 an attempt's scores together, and whether it passed
    RobustnessScore              the Layer 2 verdicts of an attempt under a fault or attack
    AttemptRecord                one finished attempt, as stored
    RecordedExchange             one MCP request of a run and the server's answer, as recorded for replay
    JudgeLabel                   a human's label of an attempt (does the final answer meet the rubric?)
    LabelledVerdict              a judge's verdict on an attempt beside a human's label of it
    JudgeTrust                   how far a judge (model and rubric) has shown it agrees with people, as a run used it

The report records (case, model and run results) live in `evalcore.scoring.metrics`'
output and are serialised by `evalcore.behaviour.report`; their JSON Schema is
docs/report.schema.json.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Literal, TypeVar, cast

from evalcore.redaction import clip, redact
from evalcore.taxonomy import ErrorKind

SCHEMA_VERSION: Final = 1  # of every record's JSON below; bump it with any change a reader would notice

StopReason = Literal["final", "step_limit", "model_error", "server_error"]
_Serialised = TypeVar("_Serialised")


def published(serialised: _Serialised) -> _Serialised:
    """A record's serialisation as it may leave the process: every secret evalcore knows replaced by `[redacted:NAME]`,
    in each string of it (JSON text, or the strings of a JSON-ready value)."""
    return cast(_Serialised, redact(serialised))


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
    refusal: str | None = None  # the model's refusal (`message.refusal`): its answer when it gives no other


InputMethod = Literal["elicitation/create", "sampling/createMessage", "roots/list"]
AnsweredBy = Literal["user", "model", "case", "client"]


@dataclass(frozen=True)
class InputRequest:
    """One entry of an `input_required` result's `inputRequests`: the server's key, the method and its params as sent."""

    key: str
    method: InputMethod
    params: Mapping[str, Any]

    @property
    def elicitation_mode(self) -> Literal["form", "url"] | None:
        if self.method != "elicitation/create":
            return None
        return "url" if self.params.get("mode") == "url" else "form"  # `mode` absent means form

    def summary(self) -> str:
        """A one-line account of what is asked, for transcripts and error messages."""
        if self.method == "elicitation/create":
            return f"{self.elicitation_mode} elicitation: {clip(str(self.params.get('message', '')), 200)}"
        if self.method == "sampling/createMessage":
            return f"sampling ({len(self.params.get('messages') or [])} messages, maxTokens {self.params.get('maxTokens')})"
        return "roots/list"


@dataclass(frozen=True)
class InputAnswer:
    """The client's answer to one input request, and who gave it: the simulated `user` (elicitation), a `model`
    (sampling), the `case` (roots), or the `client` itself (a request it refused without asking anyone)."""

    response: Mapping[str, Any]  # the InputResponse sent: ElicitResult, CreateMessageResult or ListRootsResult
    answered_by: AnsweredBy
    answerer: str  # e.g. "sim/user", the sampling model's name, "case roots"
    note: str | None = None  # why, when the answer is a refusal


@dataclass(frozen=True)
class InputRound:
    """One `input_required` answer and what the client sent back for it on the retry."""

    request_ids: tuple[int | str, ...]  # the request answered with input_required (more than one id if a cut stream was re-issued)
    requests: tuple[InputRequest, ...]
    answers: Mapping[str, InputAnswer]
    request_state: str | None  # echoed exactly on the retry; opaque, never stored

    def to_json(self, number: int) -> dict[str, Any]:
        return {
            "round": number,
            "request_ids": list(self.request_ids),
            "request_state_echoed": self.request_state is not None,
            "requests": [{**_request_json(request), **_answer_json(self.answers.get(request.key))} for request in self.requests],
        }


def _request_json(request: InputRequest) -> dict[str, Any]:
    return {"key": request.key, "method": request.method, "mode": request.elicitation_mode, "summary": request.summary(), "params": dict(request.params)}


def _answer_json(answer: InputAnswer | None) -> dict[str, Any]:
    if answer is None:
        return {"answered_by": None, "answerer": None, "response": None, "note": "not answered"}
    return {"answered_by": answer.answered_by, "answerer": answer.answerer, "response": dict(answer.response), "note": answer.note}


@dataclass(frozen=True)
class UserTurn:
    """A message the simulated user wrote (after the first prompt): where it sits in `Transcript.messages`."""

    message_index: int
    text: str
    user: str  # who played the user: `sim/user` or a model string


@dataclass(frozen=True)
class StateReading:
    """One `expect_state` read after the conversation: what was read, what came back at the path, and the verdict."""

    target: str  # e.g. "get_ticket(ticket_id='TCK-7003') $.structuredContent.status"
    passed: bool
    actual: Any  # the value at the path (None when the read failed or the path is missing)
    reason: str


# The error_type of a tool call evalcore refused to send because its arguments carry a secret it knows.
LEAK_ATTEMPT: Final = "leak_attempt"
DISTRACTOR: Final = "distractor"  # a call of a tool `evalcore perturb` listed but the server does not have: never sent


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
    rounds: tuple[InputRound, ...] = ()  # MRTR: each input_required answer and what the client sent back, in order


@dataclass(frozen=True)
class Transcript:
    messages: tuple[Mapping[str, Any], ...]  # the whole conversation as sent to / received from the model
    turns: tuple[ModelTurn, ...]
    executions: tuple[ToolExecution, ...]
    final_text: str | None
    stop_reason: StopReason
    error: str | None = None
    retries: int = 0  # provider retries spent on a call that failed beyond them (stop_reason model_error)
    user_turns: tuple[UserTurn, ...] = ()  # the simulated user's follow-up messages, marked as such
    state: tuple[StateReading, ...] = ()  # `expect_state` reads after the conversation
    failed_call_ms: float = 0.0  # the model call that failed beyond its retries: how long it took to fail (stop_reason model_error)

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for turn in self.turns for call in turn.tool_calls)

    @property
    def refused(self) -> bool:
        """The attempt ended on the model's refusal (`message.refusal`): its final answer is that refusal."""
        return self.stop_reason == "final" and bool(self.turns) and bool(self.turns[-1].refusal) and not self.turns[-1].tool_calls

    def to_json(self) -> str:
        """The stored form (`behaviour_attempts.transcript_json`): messages, per-turn telemetry, tool executions (with their
        MRTR rounds in order: the request, who answered, what was sent), the simulated user's messages, the state reads.
        Published (the JSON text, so a secret inside any value, whatever its type, is caught)."""
        return published(self._json())

    def _json(self) -> str:
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
                        **({"refusal": t.refusal} if t.refusal else {}),
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
                        "rounds": [item.to_json(number) for number, item in enumerate(e.rounds, start=1)],
                    }
                    for e in self.executions
                ],
                "user_turns": [{"message_index": u.message_index, "text": u.text, "user": u.user} for u in self.user_turns],
                "state": [{"target": r.target, "passed": r.passed, "actual": r.actual, "reason": r.reason} for r in self.state],
                "final_text": self.final_text,
                "stop_reason": self.stop_reason,
                "error": self.error,
                "retries": self.retries,
                "failed_call_ms": round(self.failed_call_ms, 3),
            },
            default=str,
        )


@dataclass(frozen=True)
class JudgeVerdict:
    passed: bool
    score: float | None  # 0..1 when the rubric yields a grade
    reason: str
    judge_model: str
    votes: tuple[bool, ...] = ()  # under `--judge-repeats K` > 1: each grading's verdict; `passed` is their majority

    def to_json(self) -> dict[str, Any]:
        """As the store keeps it (`judge_json`): the votes only when there were several gradings."""
        document = asdict(self)
        if not self.votes:
            del document["votes"]
        return document


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
    """Layer 2 verdicts for an attempt of a case with `inject:`; see `evalcore.scoring.robustness_rules`.

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
    error_kind: ErrorKind | None = None  # set when the attempt is errored (`evalcore.taxonomy`): no score, no denominator

    @property
    def errored(self) -> bool:
        return self.error_kind is not None

    def to_row(self) -> dict[str, Any]:
        """The attempt's stored columns (the store's `attempts`, but run_id and recorded_at), published."""
        return published(
            {
                "model": self.model,
                "case_id": self.case_id,
                "attempt": self.attempt,
                "case_hash": self.case_hash,
                "case_kind": self.case_kind,
                "simulated": self.simulated,
                "model_version": self.model_version,
                "passed": self.score.passed,
                "reasons_json": json.dumps(list(self.score.reasons)),
                "tool_calls_json": json.dumps([{"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in self.tool_calls]),
                "final_text": self.final_text,
                "stop_reason": self.stop_reason,
                "error": self.error,
                "latency_ms": self.latency_ms,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cost_usd": self.cost_usd,
                "retries": self.retries,
                "transcript_json": self.transcript_json,
                "judge_json": json.dumps(self.judge.to_json()) if self.judge else None,
                "cached_from": self.cached_from,
                "fault": self.robustness.fault if self.robustness is not None else None,
                "error_kind": self.error_kind,
            }
        )

    def score_rows(self) -> list[tuple[str, float | None, bool, str | None, str | None]]:
        """Each score's stored columns (the store's `attempt_scores`: scorer, value, applies, reason, label), published."""
        return published([(score.scorer, score.value, score.applies, score.reason, score.label) for score in self.score.scores])


@dataclass(frozen=True)
class RecordedExchange:
    """One MCP request of a run and what the server answered, as recorded for replay (`evalcore.mcp.recording`).

    `params` is the request's params without `_meta` (which carries per-request trace context); `answer` is the
    JSON-RPC message's `result` or `error` member (`{"result": ...}` or `{"error": ...}`), None when no usable
    answer came (then `failure` is the transport's `kind: detail`). Stored whole, redacted like every record.
    """

    sequence: int  # the order the answers came in, over the run
    method: str
    params: Mapping[str, Any]
    answer: Mapping[str, Any] | None
    failure: str | None = None
    conversation: str | None = None  # the W3C trace id the request carried: one attempt's conversation is one trace

    @staticmethod
    def to_rows(exchanges: Sequence[RecordedExchange]) -> list[list[Any]]:
        """The stored columns of each (the store's `run_exchanges`, but run_id): sequence, method, params, answer,
        failure, conversation; published at once (a run records thousands; the redactor reads the environment per call)."""
        return published([exchange._row() for exchange in exchanges])

    def _row(self) -> list[Any]:
        params = json.dumps(dict(self.params), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        answer = json.dumps(dict(self.answer), ensure_ascii=False, default=str) if self.answer is not None else None
        return [self.sequence, self.method, params, answer, self.failure, self.conversation]


MetricScope = Literal["case", "model", "run"]
RUN_SCOPE: Final = ""  # the model / case id of a set above their scope


@dataclass(frozen=True)
class MetricSet:
    """The metrics of one case of one model, of one model, or of a whole run (`model` and `case_id` are "" above their scope).

    Computed by `evalcore.scoring.metrics`, stored as rows of `run_metrics`.
    """

    scope: MetricScope
    model: str
    case_id: str
    values: Mapping[str, float | None]

    def get(self, metric: str) -> float | None:
        return self.values.get(metric)


@dataclass(frozen=True)
class AttemptOutcome:
    """One attempt of a case in a run's report: whether it passed, the error kind when it errored, and its failing
    reasons (the error's text for an errored attempt; none for one that passed)."""

    attempt: int
    passed: bool
    error_kind: str | None
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "passed": self.passed, "errored": self.error_kind, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class CaseResult:
    """One case of one model in a run's report: its counts, its metrics (see `evalcore.scoring.metrics`), its gate."""

    id: str
    kind: str
    metrics: Mapping[str, float | None]
    failing_reasons: tuple[tuple[str, int], ...]  # (reason, failed attempts that gave it), most common first
    score_metrics: tuple[str, ...] = ()  # the registered scorers' metric names, shown under "scores"
    attempt_results: tuple[AttemptOutcome, ...] = ()  # each attempt's verdict and reasons, by attempt number

    def to_json(self, runs: int) -> dict[str, Any]:
        m = self.metrics
        return {
            "id": self.id,
            "kind": self.kind,
            "passes": _count(m.get("passes")),
            "runs": _count(m.get("scored")),  # attempts scored: errored ones are in no denominator
            "attempts": _count(m.get("attempts")),
            "errored": _count(m.get("errored")),
            "pass_rate": m.get("pass_rate"),
            "pass_rate_interval": [m.get("pass_rate_low"), m.get("pass_rate_high")],
            "pass_hat_k": m.get(f"pass_hat_k@{runs}"),
            "pass_at_1": m.get("pass_at_k@1"),
            "passHatK": {str(k): m.get(f"pass_hat_k@{k}") for k in range(1, runs + 1)},
            "passAtK": {str(k): m.get(f"pass_at_k@{k}") for k in range(1, runs + 1)},
            "gate_passed": m.get("gate_passed") == 1.0,
            "scores": {name: value for name, value in m.items() if name in self.score_metrics},
            "failing_reasons": [{"reason": reason, "count": count} for reason, count in self.failing_reasons],
            "attempt_results": [outcome.to_json() for outcome in self.attempt_results],
        }


@dataclass(frozen=True)
class ModelResult:
    """One model in a run's report."""

    model: str
    simulated: bool
    model_versions: tuple[str, ...]
    metrics: Mapping[str, float | None]
    cases: tuple[CaseResult, ...]
    price_known: bool  # false when some attempt's cost is unknown, so cost_usd is null
    model_calls: Mapping[str, Any] = field(default_factory=dict)  # per model call telemetry (`evalcore.scoring.calls`)
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    robustness: Mapping[str, Any] | None = None

    def to_json(self, runs: int, cases: Any = None) -> dict[str, Any]:
        """The model's part of the report; `cases`, when given, stands in for its cases' list (`RunReport.json_text`)."""
        return {
            "model": self.model,
            "simulated": self.simulated,
            "modelVersions": list(self.model_versions),
            "metrics": dict(self.metrics),
            "priceKnown": self.price_known,
            "modelCalls": dict(self.model_calls),
            "toolCalls": [dict(t) for t in self.tool_calls],
            "robustness": dict(self.robustness) if self.robustness is not None else None,
            "cases": [case.to_json(runs) for case in self.cases] if cases is None else cases,
        }


@dataclass(frozen=True)
class Regression:
    """A regression-gated metric of one model that got worse than the baseline's by more than the bound."""

    model: str
    metric: str
    baseline: float
    current: float | None  # None: not measured in this run (every attempt of a case errored)
    drop: float  # how much worse, always positive
    cases: tuple[str, ...]  # the model's cases whose pass rate fell against the baseline, largest fall first

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "metric": self.metric, "baseline": self.baseline, "current": self.current, "drop": self.drop, "cases": list(self.cases)}


@dataclass(frozen=True)
class Incomplete:
    """A run that measured fewer attempts than it was asked for: its errored attempts per model, and whether the user accepted that many."""

    errored: Mapping[str, int]  # model -> errored attempts
    error_rate: float  # errored / attempts over the run
    max_error_rate: float  # what `--max-error-rate` accepts (0 by default)
    reason: str  # one line: per model, how many errored and the first error

    @property
    def accepted(self) -> bool:
        return self.error_rate <= self.max_error_rate

    def to_json(self) -> dict[str, Any]:
        return {
            "errored": dict(self.errored),
            "errorRate": self.error_rate,
            "maxErrorRate": self.max_error_rate,
            "accepted": self.accepted,
            "reason": self.reason,
        }


GateStatus = Literal["pass", "fail", "no_baseline", "incomplete"]


@dataclass(frozen=True)
class RunGate:
    """The run gate's verdict (`evalcore.scoring.gate.decide`).

    `status`: `pass` (no regression against the baseline), `fail` (a regression, or a model whose figures could not be
    measured), `no_baseline` (nothing to compare with yet), `incomplete` (errored attempts beyond what the user accepted).
    `passed` is what CI reads: true only for `pass`, and for `no_baseline` when the run is green itself.
    `green`: the run may become the baseline of later runs: it passed (or had no baseline), it is complete, and every
    case gate is met. Otherwise only `evalcore baseline accept RUN_ID` makes it one.
    """

    status: GateStatus
    passed: bool
    green: bool
    reason: str  # one line a user can act on
    baseline_run_id: str | None = None
    max_drop: float = 0.02
    regressions: tuple[Regression, ...] = ()
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "passed": self.passed,
            "green": self.green,
            "reason": self.reason,
            "baselineRunId": self.baseline_run_id,
            "maxDrop": self.max_drop,
            "regressions": [r.to_json() for r in self.regressions],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class CaseCell:
    """One model x case of a finished run as the dashboard's matrix shows it: its case's numbers and top failing reason
    in the run's report (`RunReport.case_cells`), stored as a row of `case_cells` so the matrix reads a few thousand
    rows, not the run's attempts."""

    model: str
    case_id: str
    kind: str
    simulated: bool
    passes: int
    runs: int  # attempts scored: errored ones are in no denominator
    attempts: int
    errored: int
    pass_rate: float | None
    pass_hat_k: float | None  # at k = the run's runs
    top_failing_reason: str | None  # the reason most failed attempts gave (ties: alphabetical); None when none failed


@dataclass(frozen=True)
class RunReport:
    """A behaviour run's report, typed; its JSON (`to_json`) is what `run --out` writes, the store keeps and `gate` reads,
    described by docs/report.schema.json. `gate` is set once the run is compared with its baseline, `drift` once the
    history is read; until then they are None."""

    run_id: str
    started_at: str
    run_date: str
    runs: int
    golden: Mapping[str, Any]  # path, hash, cases
    server: Mapping[str, Any]  # target, name, fingerprint
    metrics: Mapping[str, float | None]  # the run's, over every model
    models: tuple[ModelResult, ...]
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    scorers: tuple[str, ...] = ()  # the ids of the scorers that scored this run
    incomplete: Incomplete | None = None
    gate: RunGate | None = None
    drift: Mapping[str, Any] | None = None
    run_kind: str = "run"  # what the run is (evalcore.run_kinds): a run, merged shards, an arm, a replay
    judge_consistency: Mapping[str, Any] | None = None  # under `--judge-repeats K` > 1: flip rates and Fleiss' κ
    judge: JudgeTrust | None = None  # the run's judge, its agreement with people when the run started, and whether it gated

    @property
    def failing_cases(self) -> list[dict[str, Any]]:
        """Every (model, case) whose case gate is not met, with its errored attempts (print it with `case_tally`)."""
        return [
            {
                "model": model.model,
                "case": case.id,
                "kind": case.kind,
                "passes": _count(case.metrics.get("passes")),
                "runs": _count(case.metrics.get("scored")),
                "errored": _count(case.metrics.get("errored")),
            }
            for model in self.models
            for case in model.cases
            if case.metrics.get("gate_passed") != 1.0
        ]

    def case_cells(self) -> list[CaseCell]:
        """Every (model, case) of the report as one matrix cell: the numbers `CaseResult.to_json` gives, and the first
        of its failing reasons (they are most common first)."""
        return [
            CaseCell(
                model=model.model,
                case_id=case.id,
                kind=case.kind,
                simulated=model.simulated,
                passes=_count(case.metrics.get("passes")),
                runs=_count(case.metrics.get("scored")),
                attempts=_count(case.metrics.get("attempts")),
                errored=_count(case.metrics.get("errored")),
                pass_rate=case.metrics.get("pass_rate"),
                pass_hat_k=case.metrics.get(f"pass_hat_k@{self.runs}"),
                top_failing_reason=case.failing_reasons[0][0] if case.failing_reasons else None,
            )
            for model in self.models
            for case in model.cases
        ]

    def to_json(self) -> dict[str, Any]:
        """The report as `run` writes it and the store keeps it (`report_json`), published."""
        return published(self._json())

    def json_text(self, indent: int | None = None) -> str:
        """`json.dumps(self.to_json(), indent=indent)`, character for character, built a case at a time."""
        text = io.StringIO()
        for piece in self.json_pieces(indent):
            text.write(piece)
        return text.getvalue()

    def json_pieces(self, indent: int | None = None) -> Iterator[str]:
        """The text of `json.dumps(self.to_json(), indent=indent)` in pieces (write them to a file as they come).

        The report of a large run is mostly its cases (4,000 at 2,000 cases and two models): each case's part is built,
        published and serialised on its own, so the whole report is never held as one JSON-ready value, nor twice
        (`published` copies what it redacts) while it is serialised.
        """
        markers = [f"\u0000evalcore:cases:{n}\u0000" for n in range(len(self.models))]
        skeleton = json.dumps(published(self._json(cases=markers)), indent=indent)
        position = 0
        for model, marker in zip(self.models, markers, strict=True):
            quoted = json.dumps(marker)
            at = skeleton.index(quoted, position)
            yield skeleton[position:at]
            position = at + len(quoted)
            if not model.cases:
                yield "[]"
                continue
            line_start = skeleton.rindex("\n", 0, at) + 1 if indent is not None else at
            outer = "\n" + " " * (len(skeleton[line_start:at]) - len(skeleton[line_start:at].lstrip(" ")))  # the "cases" key's
            inner = outer + " " * indent if indent is not None else ""
            yield "["
            for n, case in enumerate(model.cases):
                part = json.dumps(published(case.to_json(self.runs)), indent=indent)
                if indent is None:
                    yield (", " if n else "") + part
                else:
                    yield ("," if n else "") + inner + part.replace("\n", inner)
            yield (outer if indent is not None else "") + "]"
        yield skeleton[position:]

    def _json(self, cases: Sequence[Any] | None = None) -> dict[str, Any]:
        failing = self.failing_cases
        gate = self.gate
        return {
            "kind": "behaviour",
            "schemaVersion": SCHEMA_VERSION,
            "runId": self.run_id,
            "runKind": self.run_kind,
            "startedAt": self.started_at,
            "runDate": self.run_date,
            "runs": self.runs,
            "golden": dict(self.golden),
            "server": dict(self.server),
            "scorers": list(self.scorers),
            "metrics": dict(self.metrics),
            "unpricedModels": [model.model for model in self.models if not model.price_known],
            "models": [model.to_json(self.runs, None if cases is None else cases[n]) for n, model in enumerate(self.models)],
            "toolCalls": [dict(t) for t in self.tool_calls],
            "caseGates": {"passed": not failing, "failing": failing},
            "incomplete": self.incomplete.to_json() if self.incomplete is not None else None,
            "gate": gate.to_json() if gate is not None else None,
            # The gate's verdict at the top level too, as `gate` and CI have always read it.
            "passed": gate.passed if gate is not None else False,
            "baseline": gate.baseline_run_id if gate is not None else None,
            "regressions": [r.to_json() for r in gate.regressions] if gate is not None else [],
            "drift": dict(self.drift) if self.drift is not None else None,
            "judge": self.judge.to_json() if self.judge is not None else None,
            "judgeConsistency": dict(self.judge_consistency) if self.judge_consistency is not None else None,
        }


def _count(value: float | None) -> int:
    return int(value) if value is not None else 0


def case_tally(passes: int, runs: int, errored: int = 0) -> str:
    """A case's count as every view prints it (docs/metrics.md): "4/5" (passes of the scored attempts), "1/1 · 4 errored",
    or "5 errored" when none was scored, so a gate missed because attempts errored never reads as met."""
    if not runs:
        return f"{errored} errored" if errored else "no verdict"
    return f"{passes}/{runs} · {errored} errored" if errored else f"{passes}/{runs}"


HumanLabel = Literal["pass", "fail"]
HUMAN_LABELS: Final[tuple[HumanLabel, ...]] = ("pass", "fail")
NO_RUBRIC: Final = "none"  # the rubric hash of a run whose golden set has no rubric file (its cases' rubrics alone)
UNKNOWN_RUBRIC: Final = "unknown"  # the rubric hash of a run stored before runs kept their plan
JudgeStatus = Literal["uncalibrated", "unreliable", "advisory", "trusted"]
JudgePolicy = Literal["always", "trusted"]
JUDGE_POLICIES: Final[tuple[JudgePolicy, ...]] = ("always", "trusted")


@dataclass(frozen=True)
class JudgeLabel:
    """A human's label of one attempt: does its final answer meet the rubric (`pass`) or not (`fail`)? It belongs to the
    attempt and to the rubric the attempt was judged against (`rubric_hash`, its run plan's), never to a later rubric."""

    run_id: str
    model: str
    case_id: str
    attempt: int
    label: HumanLabel
    labeller: str
    note: str
    rubric_hash: str
    labelled_at: str = ""  # ISO time it was stored; empty before

    def to_json(self) -> dict[str, Any]:
        return published(
            {
                "run_id": self.run_id,
                "model": self.model,
                "case_id": self.case_id,
                "attempt": self.attempt,
                "label": self.label,
                "labeller": self.labeller,
                "note": self.note,
                "rubric_hash": self.rubric_hash,
                "labelled_at": self.labelled_at,
            }
        )


@dataclass(frozen=True)
class LabelledVerdict:
    """A judge's verdict on an attempt (`judge_passed`) beside a human's label of it (`human_passed`)."""

    run_id: str
    model: str
    case_id: str
    attempt: int
    judge_model: str
    rubric_hash: str
    judge_passed: bool
    human_passed: bool


@dataclass(frozen=True)
class JudgeTrust:
    """A run's judge and how far it has shown it agrees with people (`evalcore.scoring.agreement`), as the run saw it when
    it started, and whether its verdicts enter `passed` and the gate (`gated`: policy `always`, or the judge `trusted`)."""

    model: str
    rubric_hash: str
    status: JudgeStatus
    kappa: float | None  # None when κ is undefined (no labels, or every label and verdict of one class)
    n: int
    policy: JudgePolicy = "always"

    @property
    def gated(self) -> bool:
        return self.policy == "always" or self.status == "trusted"

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "rubricHash": self.rubric_hash,
            "status": self.status,
            "kappa": self.kappa,
            "n": self.n,
            "policy": self.policy,
            "gated": self.gated,
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> JudgeTrust:
        kappa = document.get("kappa")
        return cls(
            model=str(document["model"]),
            rubric_hash=str(document["rubricHash"]),
            status=document["status"],
            kappa=float(kappa) if kappa is not None else None,
            n=int(document["n"]),
            policy=document.get("policy", "always"),
        )

    def gate_line(self) -> str:
        """What the CLI's gate line says of the judge, e.g. `judge uncalibrated (12 labels): task_completion reported, not gated`."""
        kappa = f", κ {self.kappa:.2f}" if self.kappa is not None else ""
        use = "task_completion gated" if self.gated else "task_completion reported, not gated"
        why = "" if self.gated or self.policy != "trusted" else " (--judge-policy trusted)"
        return f"judge {self.model} {self.status} ({self.n} label{'s' if self.n != 1 else ''}{kappa}): {use}{why}"
