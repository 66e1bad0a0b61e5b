"""I/O support: reading and checking a case's multi-turn and MRTR keys, each problem at its line.

Used by `evalcore.golden.loader` for the keys `user`, `sampling_model`,
`roots`, `expect_input_requests` and `expect_state` (shapes in
`evalcore.golden.conversation`). The reader passed in reports problems
(`problem(message, key, line=...)`); mappings from the loader know the line
of each key (`line_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from evalcore.golden.conversation import INPUT_KINDS, METHOD_KIND, InputExpectation, InputPattern, PathError, StateCheck, parse_path
from evalcore.users.profile import DEFAULT_MAX_TURNS, SCRIPTED_USER, UserProfile

CONVERSATION_KEYS: Final = ("user", "sampling_model", "roots", "expect_input_requests", "expect_state")
USER_KEYS: Final = ("goal", "facts", "unknown", "private", "persona", "max_turns", "model")
PATTERN_KEYS: Final = ("method", "tool", "mode")
STATE_KEYS: Final = ("tool", "resource", "arguments", "path", "equals", "subset")
MAX_USER_TURNS: Final = 20


class _Reader(Protocol):
    entry: Any

    def problem(self, message: str, key: Any = None, *, line: int | None = None) -> None: ...


def _line(block: Any, key: Any) -> int | None:
    line_of = getattr(block, "line_of", None)
    return int(line_of(key)) if callable(line_of) else None


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def read_conversation(reader: _Reader) -> dict[str, Any]:
    """The GoldenCase fields for these keys (absent keys left out), after reporting each problem."""
    fields: dict[str, Any] = {}
    entry = reader.entry
    if "user" in entry:
        fields["user"] = _user(reader, entry["user"])
    if "sampling_model" in entry:
        if _text(entry["sampling_model"]):
            fields["sampling_model"] = str(entry["sampling_model"]).strip()
        else:
            reader.problem("'sampling_model' must be a litellm model string (who answers the server's sampling requests)", "sampling_model")
    if "roots" in entry:
        fields["roots"] = _roots(reader, entry["roots"])
    if "expect_input_requests" in entry:
        fields["expect_input_requests"] = _input_expectation(reader, entry["expect_input_requests"])
    if "expect_state" in entry:
        fields["expect_state"] = _state_checks(reader, entry["expect_state"])
    return fields


def _user(reader: _Reader, block: Any) -> UserProfile | None:
    if not isinstance(block, dict):
        reader.problem("'user' must be a mapping with goal (and facts, unknown, private, persona, max_turns, model)", "user")
        return None
    for key in block:
        if key not in USER_KEYS:
            reader.problem(f"user: unknown key {key!r} (allowed: {', '.join(USER_KEYS)})", line=_line(block, key))
    goal, facts, persona = block.get("goal"), block.get("facts", {}), block.get("persona")
    unknown, private = block.get("unknown", []), block.get("private", [])
    max_turns, model = block.get("max_turns", DEFAULT_MAX_TURNS), block.get("model", SCRIPTED_USER)
    ok = True
    if not _text(goal):
        reader.problem("user: 'goal' must be text (what the user wants done)", line=_line(block, "goal"))
        ok = False
    if not isinstance(facts, dict) or not all(_scalar(v) for v in facts.values()):
        reader.problem("user: 'facts' must map a fact's name to its value (text or number)", line=_line(block, "facts"))
        ok = False
    for key, value in (("unknown", unknown), ("private", private)):
        if not isinstance(value, list) or not all(_text(v) for v in value):
            reader.problem(f"user: '{key}' must be a list of fact names", line=_line(block, key))
            ok = False
    if isinstance(private, list) and isinstance(facts, dict):
        for name in private:
            if name not in facts:
                reader.problem(f"user: private fact {name!r} is not in 'facts' (a private fact is one the user knows)", line=_line(block, "private"))
                ok = False
    if persona is not None and not _text(persona):
        reader.problem("user: 'persona' must be text", line=_line(block, "persona"))
        ok = False
    if not isinstance(max_turns, int) or isinstance(max_turns, bool) or not 0 <= max_turns <= MAX_USER_TURNS:
        reader.problem(f"user: 'max_turns' must be a whole number from 0 to {MAX_USER_TURNS}, got {max_turns!r}", line=_line(block, "max_turns"))
        ok = False
    if not _text(model):
        reader.problem("user: 'model' must be sim/user or a litellm model string", line=_line(block, "model"))
        ok = False
    if not ok:
        return None
    return UserProfile(
        goal=str(goal).strip(),
        facts={str(k): str(v) for k, v in facts.items()},
        unknown=tuple(str(v) for v in unknown),
        private=tuple(str(v) for v in private),
        persona=str(persona).strip() if persona else None,
        max_turns=max_turns,
        model=str(model).strip(),
    )


def _roots(reader: _Reader, block: Any) -> tuple[Mapping[str, str], ...]:
    if not isinstance(block, list) or not all(isinstance(r, dict) and _text(r.get("uri")) and set(r) <= {"uri", "name"} for r in block):
        reader.problem("'roots' must be a list of {uri, name} (the client's answer to roots/list)", "roots")
        return ()
    return tuple({str(k): str(v) for k, v in root.items()} for root in block)


def _input_expectation(reader: _Reader, block: Any) -> InputExpectation | None:
    if not isinstance(block, dict) or not block or set(block) - {"must", "must_not"}:
        reader.problem("'expect_input_requests' must be a mapping with 'must' and/or 'must_not', each a list of {method, tool, mode}", "expect_input_requests")
        return None
    lists: dict[str, list[InputPattern]] = {"must": [], "must_not": []}
    for side in lists:
        items = block.get(side, [])
        if not isinstance(items, list):
            reader.problem(f"expect_input_requests: '{side}' must be a list of {{method, tool, mode}}", line=_line(block, side))
            continue
        item_lines = getattr(items, "lined", None)
        lined = item_lines() if callable(item_lines) else [(None, item) for item in items]
        for line, item in lined:
            pattern = _pattern(reader, item, line or _line(block, side))
            if pattern is not None:
                lists[side].append(pattern)
    return InputExpectation(tuple(lists["must"]), tuple(lists["must_not"]))


def _pattern(reader: _Reader, item: Any, line: int | None) -> InputPattern | None:
    if isinstance(item, str):
        item = {"method": item}
    if not isinstance(item, dict) or set(item) - set(PATTERN_KEYS):
        reader.problem(f"expect_input_requests: each item is a mapping of {', '.join(PATTERN_KEYS)}, got {item!r}", line=line)
        return None
    method = item.get("method")
    kind = METHOD_KIND.get(str(method), method)
    if kind not in INPUT_KINDS:
        reader.problem(f"expect_input_requests: unknown method {method!r} (use {', '.join(INPUT_KINDS)})", line=line)
        return None
    tool, mode = item.get("tool"), item.get("mode")
    if tool is not None and not _text(tool):
        reader.problem("expect_input_requests: 'tool' must be a tool name", line=line)
        return None
    if mode is not None and (kind != "elicitation" or mode not in ("form", "url")):
        reader.problem("expect_input_requests: 'mode' is form or url, and only for an elicitation", line=line)
        return None
    return InputPattern(kind, tool, mode)


def _state_checks(reader: _Reader, block: Any) -> tuple[StateCheck, ...]:
    if not isinstance(block, list) or not block:
        reader.problem("'expect_state' must be a non-empty list of reads, each {tool, arguments, path, equals | subset} or {resource, ...}", "expect_state")
        return ()
    item_lines = getattr(block, "lined", None)
    lined = item_lines() if callable(item_lines) else [(None, item) for item in block]
    checks: list[StateCheck] = []
    for line, item in lined:
        line = line or _line(reader.entry, "expect_state")
        if not isinstance(item, dict):
            reader.problem(f"expect_state: each read is a mapping of {', '.join(STATE_KEYS)}", line=line)
            continue
        unknown = [key for key in item if key not in STATE_KEYS]
        if unknown:
            reader.problem(f"expect_state: unknown key {unknown[0]!r} (allowed: {', '.join(STATE_KEYS)})", line=_line(item, unknown[0]) or line)
            continue
        tool, resource, arguments = item.get("tool"), item.get("resource"), item.get("arguments", {})
        if (tool is None) == (resource is None) or not _text(tool if tool is not None else resource):
            reader.problem("expect_state: give exactly one of 'tool' (a read-only tool) or 'resource' (a URI to read)", line=line)
            continue
        if not isinstance(arguments, dict) or (resource is not None and arguments):
            reader.problem("expect_state: 'arguments' must be a mapping, and only for a tool", line=_line(item, "arguments") or line)
            continue
        path = item.get("path", "$")
        try:
            parse_path(str(path))
        except PathError as exc:
            reader.problem(f"expect_state: {exc}", line=_line(item, "path") or line)
            continue
        if ("equals" in item) == ("subset" in item):
            reader.problem("expect_state: give exactly one of 'equals' (the value at path) or 'subset' (keys it must contain)", line=line)
            continue
        checks.append(
            StateCheck(
                tool=str(tool) if tool is not None else None,
                resource=str(resource) if resource is not None else None,
                arguments=_plain(arguments),
                path=str(path),
                equals=_plain(item.get("equals")),
                has_equals="equals" in item,
                subset=_plain(item.get("subset")),
            )
        )
    return tuple(checks)


def named_tools(entry: Any) -> list[tuple[int | None, Any]]:
    """(line, tool name) for every tool these keys name, for the loader's unknown-tool check."""
    named: list[tuple[int | None, Any]] = []
    expectation = entry.get("expect_input_requests")
    if isinstance(expectation, dict):
        for side in ("must", "must_not"):
            items = expectation.get(side)
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and item.get("tool") is not None:
                    named.append((_line(expectation, side), item.get("tool")))
    state = entry.get("expect_state")
    for item in state if isinstance(state, list) else []:
        if isinstance(item, dict) and item.get("tool") is not None:
            named.append((_line(item, "tool"), item.get("tool")))
    return named
