"""Pure data (ground floor): the error taxonomy of an attempt, the one place that says what went wrong and how it counts.

    kind             what it covers                                    how it is counted
    provider error   the model API failed after its retries            errored: out of every quality denominator, in the
                     (HTTP status, timeout, auth, rate limit)          error rate; the run is incomplete
    judge failure    the judge could not grade an answer it had to     errored (judge): never passed without its rubric
    not in recording a replayed run (`run --replay-run`) met a tool    errored (replay): what the server would have
                     call its recording lacks                          answered is unknown, so the attempt is not scored
    server error     the MCP server timed out, crashed, or answered    never excluded: selection is scored as the model
                     a JSON-RPC error or an invalid result to a        chose; execution and the attempt fail, and the
                     well-formed call                                  reason names the server
    no final answer  the step limit was reached, or the final text     the attempt fails, and says why
                     is empty

Errored attempts are the provider's, the judge's or the recording's failure, not the model's or
the server's: what they would have scored is unknown, so they are in no quality
figure, and a run with any is incomplete (its gate fails and says why;
`--resume` reruns exactly them). Server errors and missing answers are what a
server author must see, so they always count as failures.

docs/metrics.md carries this table; every consumer (scorers, metrics, report,
gate, pages, export) asks this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

ErrorKind = Literal["provider", "judge", "replay"]
ERROR_KINDS: Final[tuple[ErrorKind, ...]] = ("provider", "judge", "replay")
NOT_RECORDED: Final = "not_recorded"  # the transport failure of a request a replayed recording lacks (evalcore.mcp.recording)

# Tool execution error types that are not the server's failure: a tool's own error result (`isError`), a call evalcore
# refused to send (a secret in its arguments), an input request nobody here could answer, and invalid params (the
# model's arguments were refused, which is the server doing its job), a call of a distractor tool (never sent), and
# a call a replayed recording lacks (the attempt is errored instead: the server was never asked).
_NOT_SERVER_ERRORS: Final = frozenset({"tool_error", "leak_attempt", "mrtr_unanswered", "-32602", "distractor", NOT_RECORDED})


def provider_error_kind(stop_reason: str | None) -> ErrorKind | None:
    """`provider` for an attempt whose model call failed beyond its retries (stop reason `model_error`), else None."""
    return "provider" if stop_reason == "model_error" else None


def attempt_error(stop_reason: str | None, error: str | None, executions: Sequence[tuple[str | None, str | None]]) -> tuple[ErrorKind, str] | None:
    """Why an attempt is errored before any judge saw it, as (kind, reason), or None when it can be scored.

    `executions` are its tool executions' (error type, error): a provider failure comes first (the conversation
    stopped there), then the first call a replayed recording lacked.
    """
    kind = provider_error_kind(stop_reason)
    if kind is not None:
        return kind, f"provider error: {error}"
    unrecorded = next((detail for error_type, detail in executions if error_type == NOT_RECORDED), None)
    if unrecorded is not None:
        return "replay", unrecorded  # the transport's words: "not_recorded: tools/call {...}: not in recording of run X"
    return None


def server_error(error_type: str | None, fault: str | None = None) -> bool:
    """Whether a tool execution that ended with `error_type` is the server's failure (see the module docstring).

    A fault evalcore injected on purpose is the robustness scorer's business, never a server error.
    """
    return error_type is not None and fault is None and error_type not in _NOT_SERVER_ERRORS


def no_final_answer(stop_reason: str | None, final_text: str | None, turns: int) -> str | None:
    """Why an attempt ended without a final answer, or None when it has one (or never got to answer: errored)."""
    if stop_reason == "step_limit":
        return f"step limit reached after {turns} model turns without a final answer"
    if stop_reason == "final" and not (final_text or "").strip():
        return "the final answer is empty"
    return None
