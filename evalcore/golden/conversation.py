"""Pure data: the multi-turn and MRTR parts of a golden case, and the JSONPath subset `expect_state` uses.

YAML (keys of a case; see golden/multiturn.yaml):

    user:                                   # the simulated user (tau-bench / promptfoo conventions)
      goal: "Close ticket TCK-7003: the password reset works now."
      facts: {order_id: ORD-50001}          # what the user knows and gives when asked
      unknown: [invoice_id]                 # what the user does not know (says so)
      private: [password]                   # known, never given to a server
      persona: "A busy IT admin."
      max_turns: 2                          # follow-up messages after the prompt (default 3)
      model: sim/user                       # sim/user (scripted, offline) or any litellm model
    sampling_model: openai/gpt-4o-mini      # who answers sampling (default: the model under test)
    roots: [{uri: "file:///srv/desk", name: desk}]   # the answer to roots/list (default: none)
    expect_input_requests:
      must: [{method: elicitation, tool: update_ticket_status, mode: form}]
      must_not: [{method: sampling}]
    expect_state:                           # read after the conversation, on the same server
      - tool: get_ticket                    # a tool the server marks readOnlyHint (or `resource: <uri>`)
        arguments: {ticket_id: TCK-7003}
        path: $.structuredContent.status    # JSONPath subset: $, .name, ['name'], [index]
        equals: closed                      # or `subset: {...}`: every key given must match, recursively
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from evalcore.redaction import clip

InputKind = Literal["elicitation", "sampling", "roots"]
INPUT_KINDS: Final[tuple[InputKind, ...]] = ("elicitation", "sampling", "roots")
METHOD_KIND: Final[dict[str, InputKind]] = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
_PATH_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


@dataclass(frozen=True)
class InputPattern:
    """An input request a case expects (or forbids): its kind, and optionally the tool that asks and the elicitation mode."""

    kind: InputKind
    tool: str | None = None
    mode: Literal["form", "url"] | None = None

    def matches(self, tool: str, method: str, mode: str | None) -> bool:
        return METHOD_KIND.get(method) == self.kind and self.tool in (None, tool) and self.mode in (None, mode)

    def describe(self) -> str:
        parts = [self.kind if self.mode is None else f"{self.mode} {self.kind}"]
        if self.tool:
            parts.append(f"from {self.tool}")
        return " ".join(parts)


@dataclass(frozen=True)
class InputExpectation:
    must: tuple[InputPattern, ...] = ()
    must_not: tuple[InputPattern, ...] = ()


@dataclass(frozen=True)
class StateCheck:
    """A read after the conversation (a read-only tool call or a resource read) and the value it must return."""

    tool: str | None
    resource: str | None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    path: str = "$"
    equals: Any = None
    has_equals: bool = False  # `equals: null` is a real expectation, so presence is kept apart
    subset: Any = None

    def describe(self) -> str:
        target = f"{self.tool}({', '.join(f'{k}={v!r}' for k, v in self.arguments.items())})" if self.tool else f"resources/read {self.resource}"
        return f"{target} {self.path}"


class PathError(ValueError):
    """A JSONPath outside the supported subset."""


def parse_path(path: str) -> tuple[str | int, ...]:
    """`$.a.b[0]['c d']` -> ("a", "b", 0, "c d"); raises PathError outside the subset."""
    if not path.startswith("$"):
        raise PathError(f"a JSONPath starts with '$', got {path!r}")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _PATH_STEP.match(path, position)
        if match is None:
            raise PathError(f"unsupported JSONPath {path!r} at {path[position:]!r} (supported: $, .name, ['name'], [index])")
        name, index, quoted, double = match.groups()
        steps.append(int(index) if index is not None else next(v for v in (name, quoted, double) if v is not None))
        position = match.end()
    return tuple(steps)


_MISSING: Final = object()


def select(document: Any, path: str) -> Any:
    """The value at `path`, or `MISSING_VALUE` when the path does not exist in `document`."""
    value = document
    for step in parse_path(path):
        in_list = isinstance(step, int) and isinstance(value, Sequence) and not isinstance(value, str) and -len(value) <= step < len(value)
        in_object = isinstance(step, str) and isinstance(value, Mapping) and step in value
        if not (in_list or in_object):
            return MISSING_VALUE
        value = value[step]
    return value


MISSING_VALUE: Final = _MISSING


def subset_mismatch(expected: Any, actual: Any, where: str = "$") -> str | None:
    """Where `actual` fails to contain `expected` (mappings: every expected key, recursively; else equality); None if it does."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where}: expected an object, got {_short(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"{where}.{key}: missing"
            problem = subset_mismatch(value, actual[key], f"{where}.{key}")
            if problem:
                return problem
        return None
    if expected != actual:
        return f"{where}: expected {_short(expected)}, got {_short(actual)}"
    return None


def _short(value: Any) -> str:
    return clip(repr(value), 120)
