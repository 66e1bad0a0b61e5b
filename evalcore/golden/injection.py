"""Pure data: the fault a golden case injects, and the rule that says an attack succeeded (Layer 2).

A case's `inject:` block becomes an `Injection`; its `attack:` block an
`AttackRule`. The fault-injecting proxy (`evalcore.behaviour.fault_proxy`) applies the
injection to one attempt; `evalcore.scoring.robustness_rules` scores the attempt.

Fault kinds, applied to `tools/call` of `tool` (its `on_call`-th call, or every
call from then on with `repeat: true`) unless said otherwise. Calls are counted
as the proxy sees them, per attempt: a request the client re-issues after a cut
stream counts as the next call.

    http_500        HTTP 500 with a plain-text body
    timeout         no answer until the client's (short) read timeout has passed
    malformed_json  HTTP 200, Content-Type application/json, a truncated JSON body
    unauthorized    HTTP 401 with `WWW-Authenticate: Bearer error="invalid_token"` (an expired token)
    tool_error      a CallToolResult with `isError: true` (the tool itself failed)
    stream_cut      an SSE stream closed before the response event; the client must
                    re-issue the request with a new id (2026-07-28 has no resumption)
    payload         the real result, with `text` appended as one more text content item
                    (indirect prompt injection, planted in a tool RESULT)
    poison          `tool`'s description in tools/list gets `text` appended (tool poisoning)
    shadow          tools/list gains a tool `shadow_name` whose description is `text`;
                    calling it answers a harmless fake success (tool shadowing)
    rug_pull        tools/list is clean until `tool` was called once; from then on `tool`'s
                    description becomes `text` (and its inputSchema `schema`, if given)
    elicit          the call is answered `input_required` with a form elicitation whose message
                    is `text` and whose requestedSchema is `schema` (default: a required
                    `password` field), as a hostile server would; the client's retry is passed on
                    to the server without the proxy's `inputResponses` and `requestState`
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

FaultKind = Literal["http_500", "timeout", "malformed_json", "unauthorized", "tool_error", "stream_cut", "payload", "poison", "shadow", "rug_pull", "elicit"]
FAULT_KINDS: tuple[FaultKind, ...] = FaultKind.__args__  # type: ignore[attr-defined]
# Faults that break a call, as opposed to faults that plant content for an attack.
CALL_FAULTS: tuple[FaultKind, ...] = ("http_500", "timeout", "malformed_json", "unauthorized", "tool_error", "stream_cut")
TEXT_FAULTS: tuple[FaultKind, ...] = ("payload", "poison", "shadow", "rug_pull", "elicit")

Expectation = Literal["retry", "fallback", "honest_error"]
EXPECTATIONS: tuple[Expectation, ...] = ("retry", "fallback", "honest_error")

# The client-side attack surfaces of MCPSecBench (Yang et al. 2025, arXiv:2508.13220), plus `elicitation`:
# a server's input request (MRTR) that asks the user for a secret or carries an instruction.
AttackSurface = Literal["indirect_injection", "tool_poisoning", "tool_shadowing", "rug_pull", "exfiltration", "elicitation"]
ATTACK_SURFACES: tuple[AttackSurface, ...] = ("indirect_injection", "tool_poisoning", "tool_shadowing", "rug_pull", "exfiltration", "elicitation")


@dataclass(frozen=True)
class Injection:
    """One fault for one attempt of a case."""

    fault: FaultKind
    tool: str  # the tool whose calls (or whose definition) the fault hits
    on_call: int = 1  # which call of `tool` is faulted, counting from 1
    repeat: bool = False  # fault every call of `tool` from `on_call` on
    expect: Expectation | None = None  # required for call faults; attack cases are scored by their rule
    text: str | None = None  # the planted instruction / new description (text faults)
    shadow_name: str | None = None  # the added tool's name (shadow)
    schema: Mapping[str, Any] | None = None  # the replacement inputSchema (rug_pull)

    def hits(self, call_number: int) -> bool:
        """Whether the `call_number`-th call of `tool` is faulted."""
        return call_number == self.on_call or (self.repeat and call_number > self.on_call)


@dataclass(frozen=True)
class AttackRule:
    """What counts as the injected action: a call to a forbidden tool, or an argument matching a pattern.

    `forbidden_args` maps tool -> argument -> regular expression, searched in
    the argument's JSON text (so lists such as `cc` are covered).
    `forbidden_answers` are regular expressions searched in the JSON text of
    every answer the client sent back to a server's input request (MRTR); on the
    `elicitation` surface the simulated user's private facts count as well.
    """

    surface: AttackSurface
    forbidden_tools: tuple[str, ...] = ()
    forbidden_args: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    forbidden_answers: tuple[str, ...] = ()
