"""I/O layer: read a golden-set YAML file and validate all of it, reporting every problem as `file:line: ...`.

    golden = load_golden_set(Path("golden/tasks.yaml"), tool_names=["get_weather", ...])

Nothing runs on a golden set with a problem: the loader collects every problem
it finds (invalid YAML stops it at once, since nothing after can be trusted)
and raises one `GoldenSetProblems` listing them all in file order. The YAML
shape is documented in `evalcore.golden.model`; the keys a file may use are
the tables below (a new key is one entry there, its check in `_CaseReader`,
its field in `GoldenCase` and its entry in `evalcore.golden.json_schema`).
Given the server's tools (`tools=`, as tools/list gives them), every expected
call's arguments are also checked against its tool's `inputSchema`
(`evalcore.golden.schema_check`). A file past one of its `GoldenLimits` (size,
nodes, aliases, nesting, text length, cases) is refused at that line before
anything else is read from it.
"""

from __future__ import annotations

import datetime
import difflib
import hashlib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evalcore.errors import GoldenSetError
from evalcore.golden.conversation_reader import CONVERSATION_KEYS, named_tools, read_conversation
from evalcore.golden.injection import ATTACK_SURFACES, CALL_FAULTS, EXPECTATIONS, FAULT_KINDS, TEXT_FAULTS, AttackRule, Injection
from evalcore.golden.limits import DEFAULT_LIMITS, GoldenLimits, raise_hint
from evalcore.golden.model import (
    ARG_MATCH_MODES,
    DEFAULT_SYSTEM_PROMPT,
    REVIEW_STATUSES,
    RULE_KEYS,
    CaseKind,
    ExpectedCall,
    GoldenCase,
    GoldenSet,
    Review,
    is_rule,
)
from evalcore.golden.schema_check import argument_problems
from evalcore.golden.yaml_reader import LineMapping as _Mapping
from evalcore.golden.yaml_reader import LineSequence as _Sequence
from evalcore.golden.yaml_reader import YamlRefusal, read_yaml

# The keys a golden file may use, each with what it holds (shown in "allowed:" lists, in this order).
TOP_LEVEL_FIELDS: Final = {
    "server": "the server this set is written for",
    "rubric": "judging rubric file, relative to this file",
    "system": "system prompt for every case (default: a neutral one)",
    "cases": "the list of cases",
}
CASE_FIELDS: Final = {
    "id": "unique case id",
    "prompt": "the user's request",
    "system": "this case's system prompt, instead of the set's",
    "expect_tool": "tool the first call must name; null: no tool may be called",
    "expect_args": "expected arguments of that call (a value, or {one_of: [...], optional: true})",
    "arg_match": "per argument: exact | semantic | ignore",
    "expect_sequence": "tools (or calls {tool, args, arg_match}) in call order",
    "expect_set": "tools (or calls {tool, args, arg_match}) in any order: parallel calls",
    "kind": "hard | soft",
    "rubric": "what the judge checks in the final answer",
    "inject": "Layer 2: the fault injected",
    "attack": "Layer 2: what counts as the injected action",
    "review": "who vouches for the case: {status: draft | accepted, by, at, checked}",
}
TOP_LEVEL_KEYS: Final = tuple(TOP_LEVEL_FIELDS)
CASE_KEYS: Final = (*CASE_FIELDS, *CONVERSATION_KEYS)  # the multi-turn keys: evalcore.golden.conversation_reader
INJECT_KEYS: Final = ("fault", "tool", "on_call", "repeat", "expect", "text", "shadow_name", "schema")
ATTACK_KEYS: Final = ("surface", "forbidden_tools", "forbidden_args", "forbidden_answers")
CALL_KEYS: Final = ("tool", "args", "arg_match")
REVIEW_KEYS: Final = ("status", "by", "at", "checked")
CHECKED_VALUES: Final = ("executed", "schema")
CASE_KINDS: Final[tuple[CaseKind, ...]] = ("hard", "soft")
_NAMES_SHOWN: Final = 12


class GoldenSetProblems(GoldenSetError):
    """Every problem found in one golden-set file: `.problems`, one line each; the message starts with the first."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        more = len(self.problems) - 1
        first = self.problems[0] + (f" (and {more} more problem{'s' if more > 1 else ''} below)" if more else "")
        super().__init__("\n".join([first, *self.problems[1:]]))


class _Report:
    """The problems found so far in one file, each with its line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.found: list[tuple[int, str]] = []

    def add(self, line: int, message: str) -> None:
        self.found.append((line, f"{self.path}:{line}: {message}"))

    def stop(self, message: str, line: int | None = None) -> GoldenSetProblems:
        return GoldenSetProblems([f"{self.path}{'' if line is None else f':{line}'}: {message}"])


def load_golden_set(
    path: Path,
    *,
    tool_names: Collection[str] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    limits: GoldenLimits = DEFAULT_LIMITS,
) -> GoldenSet:
    """Load and validate a golden set; given the server's `tool_names` (tools/list), also check every tool a case names;
    given its `tools` (tools/list's entries), also check every expected call's arguments against the tool's inputSchema.

    Raises `GoldenSetProblems` (a `GoldenSetError`) listing every problem found.
    A file past one of `limits` is refused at once, at the line where it passes it.
    `content_hash` is the sha256 of the file's bytes followed by the rubric
    file's bytes, if any: the same as `cat tasks.yaml rubric.md | sha256sum`.
    """
    path = Path(path)
    schemas = None if tools is None else {str(tool.get("name")): tool.get("inputSchema") for tool in tools}
    if schemas is not None and tool_names is None:
        tool_names = list(schemas)
    report = _Report(path)
    raw, text = _read_text(path, report, limits)
    try:
        document = read_yaml(text, limits)
    except YamlRefusal as exc:
        raise report.stop(exc.reason, exc.line) from exc
    if document is None:
        raise report.stop("the file is empty; expected a mapping with a 'cases:' list, or a list of cases", 1)

    top = _top_level(document, report, limits)
    entries = top.entries
    if len(entries) > limits.cases:
        raise report.stop(f"more than {limits.cases} cases (limit cases; {raise_hint('cases')})", entries[limits.cases][0])
    cases: list[GoldenCase] = []
    first_line: dict[str, int] = {}
    for number, (line, entry) in enumerate(entries, start=1):
        case = _read_case(entry, number, line, report, tool_names, _CaseDefaults(top.system, limits, schemas))
        case_id = entry.get("id") if isinstance(entry, _Mapping) else None
        if isinstance(case_id, str) and case_id in first_line:
            report.add(line, f'case "{case_id}": duplicate id (first used at line {first_line[case_id]}); ids must be unique')
        elif isinstance(case_id, str):
            first_line[case_id] = line
        if case is not None:
            cases.append(case)
    if report.found:
        raise GoldenSetProblems([message for _, message in sorted(report.found, key=lambda found: found[0])])
    return GoldenSet(
        path=path,
        cases=tuple(cases),
        content_hash=hashlib.sha256(raw + (top.rubric_bytes or b"")).hexdigest(),
        server=top.server,
        rubric_path=top.rubric_path,
        rubric_text=None if top.rubric_bytes is None else top.rubric_bytes.decode("utf-8", errors="replace"),
        system=top.system,
    )


def _read_text(path: Path, report: _Report, limits: GoldenLimits) -> tuple[bytes, str]:
    """The file's bytes and its UTF-8 text; a missing, oversized or undecodable file is refused before it is parsed."""
    if not path.is_file():
        raise report.stop("golden-set file not found (expected a YAML file such as golden/tasks.yaml)")
    size = path.stat().st_size
    if size > limits.file_bytes:
        raise report.stop(f"the file is {size} bytes, more than {limits.file_bytes} (limit file_bytes; {raise_hint('file_bytes')})")
    with path.open("rb") as handle:
        raw = handle.read(limits.file_bytes + 1)  # a file that grew since stat() is still read only this far
    if len(raw) > limits.file_bytes:
        raise report.stop(f"the file is more than {limits.file_bytes} bytes (limit file_bytes; {raise_hint('file_bytes')})")
    try:
        return raw, raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = raw[exc.start : exc.start + 1].hex()
        raise report.stop(f"not UTF-8: byte 0x{byte} at column {column} cannot be decoded; save the file as UTF-8", line) from exc


@dataclass(frozen=True)
class _TopLevel:
    server: str | None
    rubric_path: Path | None
    rubric_bytes: bytes | None
    system: str
    entries: list[tuple[int, Any]]


@dataclass(frozen=True)
class _CaseDefaults:
    """What every case of the file inherits, and the limits its texts keep."""

    system: str
    limits: GoldenLimits
    schemas: Mapping[str, Any] | None = None  # tool name -> inputSchema, when the server's tools are known


def _top_level(document: Any, report: _Report, limits: GoldenLimits) -> _TopLevel:
    """The server name, the rubric file and its bytes, the set's system prompt, and the raw cases with their lines."""
    if isinstance(document, _Sequence):
        return _TopLevel(None, None, None, DEFAULT_SYSTEM_PROMPT, document.lined())
    if not isinstance(document, _Mapping):
        raise report.stop(f"top level must be a mapping with a 'cases:' list, or a list of cases; got {_describe(document)}", 1)
    for key in document:
        if key not in TOP_LEVEL_KEYS:
            report.add(document.line_of(key), f"unknown top-level key {_quote(key)}{_suggest(key, TOP_LEVEL_KEYS)} (allowed: {', '.join(TOP_LEVEL_KEYS)})")
    server = document.get("server")
    if server is not None and not isinstance(server, str):
        report.add(document.line_of("server"), f"'server' must be a name, got {_describe(server)}")
    system = document.get("system", DEFAULT_SYSTEM_PROMPT)
    if problem := _text_problem("system", system, limits):
        report.add(document.line_of("system"), problem)
    rubric, rubric_path, rubric_bytes = document.get("rubric"), None, None
    if rubric is not None and not isinstance(rubric, str):
        report.add(document.line_of("rubric"), f"'rubric' must be a file name, relative to the golden file; got {_describe(rubric)}")
    elif rubric is not None:
        rubric_path = report.path.parent / rubric
        if not rubric_path.is_file():
            report.add(document.line_of("rubric"), f'rubric file "{rubric}" not found (looked for {rubric_path}); the path is relative to the golden file')
        elif rubric_path.stat().st_size > limits.file_bytes:
            report.add(document.line_of("rubric"), f'rubric file "{rubric}" is more than {limits.file_bytes} bytes ({raise_hint("file_bytes")})')
        elif len(text := (raw := rubric_path.read_bytes()).decode("utf-8", errors="replace")) > limits.prompt_chars:
            report.add(
                document.line_of("rubric"), f'rubric file "{rubric}" is {len(text)} characters, more than {limits.prompt_chars} ({raise_hint("prompt_chars")})'
            )
        else:
            rubric_bytes = raw
    cases = document.get("cases")
    if "cases" not in document:
        report.add(document.line, "no 'cases:' key; list the golden cases under 'cases:'")
    elif not isinstance(cases, _Sequence) or not cases:
        report.add(document.line_of("cases"), f"'cases' must be a non-empty list of cases, got {_describe(cases)}")
    entries = cases.lined() if isinstance(cases, _Sequence) else []
    return _TopLevel(server if isinstance(server, str) else None, rubric_path, rubric_bytes, system if isinstance(system, str) else "", entries)


def _text_problem(key: str, value: Any, limits: GoldenLimits) -> str | None:
    """Why `value` cannot be the text `key` (a prompt, a rubric, a system prompt...), or None."""
    if not _is_name(value):
        return f"'{key}' must be non-empty text, got {_describe(value)}"
    if len(value) > limits.prompt_chars:
        return f"'{key}' is {len(value)} characters, more than {limits.prompt_chars} (limit prompt_chars; {raise_hint('prompt_chars')})"
    return None


def _read_case(entry: Any, number: int, line: int, report: _Report, tool_names: Collection[str] | None, defaults: _CaseDefaults) -> GoldenCase | None:
    """The case, or None after reporting each of its problems."""
    if not isinstance(entry, _Mapping):
        report.add(line, f"case #{number}: must be a mapping with id, prompt and expect_tool, got {_describe(entry)}")
        return None
    case_id = entry.get("id")
    reader = _CaseReader(entry, f'case "{case_id}"' if _is_name(case_id) else f"case #{number}", report)
    reader.check_keys_and_text(defaults.limits)
    expect_args, arg_match = reader.arguments()
    expect_tool, sequence, unordered, calls = reader.tools(expect_args, arg_match)
    review = reader.review()
    kind, rubric = entry.get("kind", "soft"), entry.get("rubric")
    if kind not in CASE_KINDS:
        reader.problem(f"'kind' must be hard or soft, got {_describe(kind)}", "kind")
    if rubric is not None and not isinstance(rubric, str):
        reader.problem(f"'rubric' must be text (what the judge checks in the final answer), got {_describe(rubric)}", "rubric")
    elif rubric is not None and (problem := _text_problem("rubric", rubric, defaults.limits)):
        reader.problem(problem, "rubric")
    inject, attack = reader.injection(defaults.limits), reader.attack()
    conversation = read_conversation(reader)
    if tool_names is not None:
        reader.check_tools_exist(tool_names)
    if defaults.schemas is not None and not reader.problems:
        reader.check_arguments_against(defaults.schemas, calls or _first_call(expect_tool, expect_args, arg_match, entry.line_of("expect_args")))
    if reader.problems:
        return None
    return GoldenCase(
        id=entry["id"],
        prompt=entry["prompt"],
        expect_tool=expect_tool,
        expect_args=_plain(expect_args),
        arg_match=dict(arg_match),
        expect_sequence=tuple(sequence),
        expect_set=tuple(unordered),
        expect_calls=tuple(ExpectedCall(c.tool, _plain(c.args), dict(c.arg_match), c.line) for c in calls),
        review=review,
        kind=kind,
        rubric=rubric,
        inject=inject,
        attack=attack,
        line=line,
        **conversation,
        system=entry.get("system", defaults.system),
    )


class _CaseReader:
    """Checks one case mapping field by field, reporting each problem at its key's line."""

    def __init__(self, entry: _Mapping, name: str, report: _Report) -> None:
        self.entry, self.name, self.report = entry, name, report
        self.problems = 0

    def problem(self, message: str, key: Any = None, *, line: int | None = None) -> None:
        self.problems += 1
        self.report.add(line or self.entry.line_of(key), f"{self.name}: {message}")

    def check_keys_and_text(self, limits: GoldenLimits) -> None:
        for key in self.entry:
            if key not in CASE_KEYS:
                self.problem(f"unknown key {_quote(key)}{_suggest(key, CASE_KEYS)} (allowed: {', '.join(CASE_KEYS)})", key)
        for key in ("id", "prompt"):
            if key not in self.entry:
                self.problem(f"missing '{key}'")
            elif problem := _text_problem(key, self.entry[key], limits):
                self.problem(problem, key)
        if "system" in self.entry and (problem := _text_problem("system", self.entry["system"], limits)):
            self.problem(problem, "system")

    def tools(self, expect_args: _Mapping, arg_match: _Mapping) -> tuple[str | None, list[str], list[str], list[ExpectedCall]]:
        """expect_tool, the names of expect_sequence and of expect_set, and the calls written with their own arguments
        (none when every item is a bare name); an absent expect_tool defaults to the sequence's first tool."""
        entry = self.entry
        expect_tool = entry.get("expect_tool")
        if expect_tool is not None and not _is_name(expect_tool):
            self.problem(f"'expect_tool' must be a tool name, or null for a case where no tool may be called; got {_describe(expect_tool)}", "expect_tool")
        sequence, sequence_calls = self._calls("expect_sequence")
        unordered, set_calls = self._calls("expect_set")
        calls = sequence_calls or set_calls
        if "expect_sequence" in entry and "expect_set" in entry:
            self.problem("a case has 'expect_sequence' (in order) or 'expect_set' (any order), not both", "expect_set")
        if "expect_tool" not in entry and "expect_sequence" not in entry and "expect_set" not in entry:
            self.problem("missing 'expect_tool'; name the tool a good model calls, or write 'expect_tool: null' for a case where no tool may be called")
        elif "expect_tool" in entry and expect_tool is None:
            for key in ("expect_args", "expect_sequence", "expect_set"):
                if key in entry:
                    self.problem(f"a negative case ('expect_tool: null') cannot have '{key}'; remove it, or name the tool to call", key)
        elif "expect_set" in entry:
            for key in ("expect_tool", "expect_args", "arg_match"):
                if key in entry:
                    self.problem(f"a case with 'expect_set' cannot have '{key}': any tool of the set may come first; give each call its 'args'", key)
        elif _is_name(expect_tool) and sequence and sequence[0] != expect_tool:
            self.problem(
                f'expect_tool "{expect_tool}" is not the first tool of expect_sequence ("{sequence[0]}"); make them agree or drop expect_tool', "expect_tool"
            )
        if sequence_calls and (expect_args or arg_match) and isinstance(expect_args, _Mapping):
            first = sequence_calls[0]
            if first.args or first.arg_match:
                self.problem("the first call's arguments are given twice: in 'expect_args' and in expect_sequence's first item; keep one", "expect_args")
            else:
                sequence_calls[0] = ExpectedCall(first.tool, expect_args, arg_match if isinstance(arg_match, _Mapping) else {}, first.line)
        first_tool = expect_tool if "expect_tool" in entry or not sequence else sequence[0]
        return first_tool, sequence, unordered, calls

    def _calls(self, key: str) -> tuple[list[str], list[ExpectedCall]]:
        """The tool names of an `expect_sequence` or `expect_set` list, and its calls when any item has arguments."""
        raw = self.entry.get(key)
        if key not in self.entry:
            return [], []
        if not isinstance(raw, _Sequence) or not raw:
            self.problem(f"'{key}' must be a non-empty list of tool names or calls {{tool, args}}, got {_describe(raw)}", key)
            return [], []
        names: list[str] = []
        calls: list[ExpectedCall] = []
        for position, (line, item) in enumerate(raw.lined(), start=1):
            if _is_name(item):
                names.append(item)
                calls.append(ExpectedCall(item, {}, {}, line))
                continue
            if not isinstance(item, _Mapping):
                self.problem(f"{key} item {position} must be a tool name or a call {{tool, args, arg_match}}, got {_describe(item)}", line=line)
                continue
            for unknown in (k for k in item if k not in CALL_KEYS):
                self.problem(
                    f"{key} item {position}: unknown key {_quote(unknown)}{_suggest(unknown, CALL_KEYS)} (allowed: {', '.join(CALL_KEYS)})",
                    line=item.line_of(unknown),
                )
            tool = item.get("tool")
            if not _is_name(tool):
                self.problem(f"{key} item {position}: 'tool' must name the tool called, got {_describe(tool)}", line=item.line_of("tool"))
                continue
            args, modes = self._check_arguments(item.get("args", _Mapping(line)), item.get("arg_match", _Mapping(line)), f"{key} item {position}: ")
            names.append(str(tool))
            calls.append(ExpectedCall(str(tool), args, modes, line))
        if all(not isinstance(item, _Mapping) for item in raw):
            return names, []  # bare names only: the case keeps the shape (and hash) it always had
        return names, calls

    def arguments(self) -> tuple[_Mapping, _Mapping]:
        expect_args = self.entry.get("expect_args", _Mapping(self.entry.line))
        arg_match = self.entry.get("arg_match", _Mapping(self.entry.line))
        return self._check_arguments(expect_args, arg_match, "", keys=("expect_args", "arg_match"))

    def _check_arguments(self, expect_args: Any, arg_match: Any, where: str, keys: tuple[str, str] = ("args", "arg_match")) -> tuple[_Mapping, _Mapping]:
        """Arguments and their match modes, checked: each value a value or a rule, each mode known and for an argument given."""
        args_key, match_key = keys
        line_of_entry = getattr(expect_args, "line", None) or self.entry.line
        if not isinstance(expect_args, _Mapping):
            self.problem(
                f"{where}'{args_key}' must be a mapping of argument name to expected value, got {_describe(expect_args)}",
                line=self._line(args_key, line_of_entry),
            )
            expect_args = _Mapping(line_of_entry)
        if not isinstance(arg_match, _Mapping):
            self.problem(
                f"{where}'{match_key}' must be a mapping of argument name to exact, semantic or ignore; got {_describe(arg_match)}",
                line=self._line(match_key, line_of_entry),
            )
            return expect_args, _Mapping(0)
        for argument, value in expect_args.items():
            self._check_rule(argument, value, expect_args.line_of(argument), where)
        for argument, mode in arg_match.items():
            if mode not in ARG_MATCH_MODES:
                self.problem(
                    f'{where}arg_match for "{argument}" is {_describe(mode)}; use one of {", ".join(ARG_MATCH_MODES)}', line=arg_match.line_of(argument)
                )
            if argument not in expect_args:
                has = ", ".join(str(name) for name in expect_args) or "nothing"
                self.problem(f'{where}arg_match names "{argument}", which is not in {args_key} (has: {has})', line=arg_match.line_of(argument))
        return expect_args, arg_match

    def _line(self, key: str, fallback: int) -> int:
        return self.entry.line_of(key) if key in self.entry else fallback

    def _check_rule(self, argument: Any, value: Any, line: int, where: str) -> None:
        """An argument's value written as a rule ({one_of: [...], optional: true}) is checked; any other value is the value."""
        if not is_rule(value):
            return
        for key in value:
            if key not in RULE_KEYS:
                self.problem(
                    f'{where}argument "{argument}": unknown key {_quote(key)} in its rule{_suggest(key, RULE_KEYS)} (a rule has: {", ".join(RULE_KEYS)}; '
                    "to expect an object holding one_of, write {one_of: [that object]})",
                    line=value.line_of(key),
                )
        one_of, optional = value.get("one_of"), value.get("optional", False)
        if "one_of" in value and (not isinstance(one_of, list) or not one_of):
            self.problem(
                f'{where}argument "{argument}": one_of must be a non-empty list of accepted values, got {_describe(one_of)}', line=value.line_of("one_of")
            )
        if not isinstance(optional, bool):
            self.problem(f'{where}argument "{argument}": optional must be true or false, got {_describe(optional)}', line=value.line_of("optional"))
        elif "one_of" not in value and not optional:
            self.problem(f'{where}argument "{argument}": a rule without one_of must say optional: true (any value, or none)', line=line)

    def review(self) -> Review | None:
        """The `review:` block of a drafted or reviewed case."""
        block = self.entry.get("review")
        if "review" not in self.entry:
            return None
        if not isinstance(block, _Mapping):
            self.problem(f"'review' must be a mapping {{status: draft | accepted, by, at, checked}}, got {_describe(block)}", "review")
            return None
        before = self.problems
        for key in block:
            if key not in REVIEW_KEYS:
                self.problem(f"review: unknown key {_quote(key)}{_suggest(key, REVIEW_KEYS)} (allowed: {', '.join(REVIEW_KEYS)})", line=block.line_of(key))
        status, checked = block.get("status"), block.get("checked")
        if status not in REVIEW_STATUSES:
            self.problem(f"review: 'status' must be one of {', '.join(REVIEW_STATUSES)}; got {_describe(status)}", line=block.line_of("status"))
        if checked is not None and checked not in CHECKED_VALUES:
            self.problem(f"review: 'checked' must be one of {', '.join(CHECKED_VALUES)}; got {_describe(checked)}", line=block.line_of("checked"))
        for key in ("by", "at"):
            value = block.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, str | int | float | datetime.date)):
                self.problem(f"review: '{key}' must be text (a name, a date), got {_describe(value)}", line=block.line_of(key))
        if self.problems > before:
            return None
        at = block.get("at")
        at_text = at.isoformat() if isinstance(at, datetime.date) else (None if at is None else str(at))
        by = None if block.get("by") is None else str(block["by"])
        return Review(status="accepted" if status == "accepted" else "draft", by=by, at=at_text, checked=checked)

    def check_arguments_against(self, schemas: Mapping[str, Any], calls: Sequence[ExpectedCall]) -> None:
        """Every expected call's arguments against its tool's inputSchema: unknown names, wrong types, missing required."""
        for call in calls:
            schema = schemas.get(call.tool)
            if not isinstance(schema, Mapping) or not call.args:
                continue
            for argument, message in argument_problems(call.tool, call.args, call.arg_match, schema):
                line = call.args.line_of(argument) if argument is not None and isinstance(call.args, _Mapping) else call.line
                self.problem(message, line=line or call.line or self.entry.line)

    def injection(self, limits: GoldenLimits) -> Injection | None:
        """The `inject:` block (Layer 2), checked key by key; None when absent or broken."""
        block = self.entry.get("inject")
        if "inject" not in self.entry:
            return None
        if not isinstance(block, _Mapping):
            self.problem(f"'inject' must be a mapping with fault, tool and expect; got {_describe(block)}", "inject")
            return None
        before = self.problems
        for key in block:
            if key not in INJECT_KEYS:
                self.problem(f"inject: unknown key {_quote(key)}{_suggest(key, INJECT_KEYS)} (allowed: {', '.join(INJECT_KEYS)})", line=block.line_of(key))
        fault, tool, expect = block.get("fault"), block.get("tool"), block.get("expect")
        on_call, repeat, text = block.get("on_call", 1), block.get("repeat", False), block.get("text")
        if fault not in FAULT_KINDS:
            self.problem(f"inject: unknown fault {_quote(fault)}{_suggest(fault, FAULT_KINDS)} (faults: {', '.join(FAULT_KINDS)})", line=block.line_of("fault"))
        if not _is_name(tool):
            self.problem(f"inject: 'tool' must name the tool the fault hits, got {_describe(tool)}", line=block.line_of("tool"))
        if not isinstance(on_call, int) or isinstance(on_call, bool) or on_call < 1:
            self.problem(f"inject: 'on_call' must be a call number from 1, got {_describe(on_call)}", line=block.line_of("on_call"))
        if not isinstance(repeat, bool):
            self.problem(f"inject: 'repeat' must be true or false, got {_describe(repeat)}", line=block.line_of("repeat"))
        if expect is not None and expect not in EXPECTATIONS:
            self.problem(f"inject: 'expect' must be one of {', '.join(EXPECTATIONS)}; got {_describe(expect)}", line=block.line_of("expect"))
        if fault in CALL_FAULTS and expect is None:
            self.problem(f"inject: a {fault} fault needs 'expect: retry | fallback | honest_error' (what a good model does)", line=block.line)
        if fault in TEXT_FAULTS and not _is_name(text):
            self.problem(f"inject: a {fault} fault needs 'text' (the planted instruction or new description)", line=block.line)
        elif text is not None and (problem := _text_problem("text", text, limits)):
            self.problem(f"inject: {problem}", line=block.line_of("text"))
        if fault in TEXT_FAULTS and "attack" not in self.entry:
            self.problem(f"inject: a {fault} fault plants an attack; add an 'attack:' block saying what the injected action is", line=block.line)
        shadow_name, schema = block.get("shadow_name"), block.get("schema")
        if fault == "shadow" and not _is_name(shadow_name):
            self.problem("inject: a shadow fault needs 'shadow_name', the name of the added look-alike tool", line=block.line)
        if schema is not None and not isinstance(schema, _Mapping):
            self.problem(f"inject: 'schema' must be a JSON Schema mapping, got {_describe(schema)}", line=block.line_of("schema"))
        if self.problems > before:
            return None
        return Injection(
            fault=block["fault"],
            tool=block["tool"],
            on_call=on_call,
            repeat=repeat,
            expect=expect,
            text=text,
            shadow_name=shadow_name,
            schema=_plain(schema) if schema is not None else None,
        )

    def attack(self) -> AttackRule | None:
        """The `attack:` block (Layer 2): the surface and the rule for "the injected action was attempted"."""
        block = self.entry.get("attack")
        if "attack" not in self.entry:
            return None
        if not isinstance(block, _Mapping):
            self.problem(f"'attack' must be a mapping with surface and forbidden_tools or forbidden_args; got {_describe(block)}", "attack")
            return None
        before = self.problems
        for key in block:
            if key not in ATTACK_KEYS:
                self.problem(f"attack: unknown key {_quote(key)}{_suggest(key, ATTACK_KEYS)} (allowed: {', '.join(ATTACK_KEYS)})", line=block.line_of(key))
        surface, tools, patterns = block.get("surface"), block.get("forbidden_tools", []), block.get("forbidden_args", _Mapping(block.line))
        if surface not in ATTACK_SURFACES:
            surfaces = ", ".join(ATTACK_SURFACES)
            self.problem(f"attack: unknown surface {_quote(surface)}{_suggest(surface, ATTACK_SURFACES)} (surfaces: {surfaces})", line=block.line_of("surface"))
        if "inject" not in self.entry:
            self.problem("attack: an attack case needs an 'inject:' block that plants the payload (payload, poison, shadow or rug_pull)", line=block.line)
        if not isinstance(tools, list) or not all(_is_name(t) for t in tools):
            self.problem(f"attack: 'forbidden_tools' must be a list of tool names, got {_describe(tools)}", line=block.line_of("forbidden_tools"))
            tools = []
        forbidden_args: dict[str, dict[str, str]] = {}
        if not isinstance(patterns, _Mapping):
            message = f"attack: 'forbidden_args' must map tool -> argument -> regular expression; got {_describe(patterns)}"
            self.problem(message, line=block.line_of("forbidden_args"))
        else:
            for tool, arguments in patterns.items():
                if not isinstance(arguments, _Mapping):
                    self.problem(f'attack: forbidden_args for "{tool}" must map argument -> regular expression', line=patterns.line_of(tool))
                    continue
                for argument, pattern in arguments.items():
                    try:
                        re.compile(str(pattern))
                    except re.error as exc:
                        self.problem(f"attack: forbidden_args {tool}.{argument}: not a regular expression ({exc})", line=arguments.line_of(argument))
                    forbidden_args.setdefault(str(tool), {})[str(argument)] = str(pattern)
        answers = block.get("forbidden_answers", [])
        if not isinstance(answers, list) or not all(_is_name(a) for a in answers):
            self.problem(
                f"attack: 'forbidden_answers' must be a list of regular expressions, got {_describe(answers)}", line=block.line_of("forbidden_answers")
            )
            answers = []
        for pattern in answers:
            try:
                re.compile(pattern)
            except re.error as exc:
                self.problem(f"attack: forbidden_answers {pattern!r}: not a regular expression ({exc})", line=block.line_of("forbidden_answers"))
        secrets = isinstance(self.entry.get("user"), dict) and bool(self.entry["user"].get("private"))
        if block.get("surface") == "elicitation" and not answers and not secrets and not tools and not forbidden_args and self.problems == before:
            self.problem(
                "attack: an elicitation attack needs 'forbidden_answers' or a user with 'private' facts (what must not be given away)", line=block.line
            )
        elif not tools and not forbidden_args and not answers and block.get("surface") != "elicitation" and self.problems == before:
            self.problem("attack: name the injected action with 'forbidden_tools' and/or 'forbidden_args'", line=block.line)
        if self.problems > before:
            return None
        return AttackRule(surface=block["surface"], forbidden_tools=tuple(tools), forbidden_args=forbidden_args, forbidden_answers=tuple(answers))

    def check_tools_exist(self, tool_names: Collection[str]) -> None:
        named: list[tuple[int, Any]] = [(self.entry.line_of("expect_tool"), self.entry.get("expect_tool"))]
        for key in ("expect_sequence", "expect_set"):
            items = self.entry.get(key)
            for line, item in items.lined() if isinstance(items, _Sequence) else []:
                named.append((item.line_of("tool"), item.get("tool")) if isinstance(item, _Mapping) else (line, item))
        inject, attack = self.entry.get("inject"), self.entry.get("attack")
        if isinstance(inject, _Mapping):
            named.append((inject.line_of("tool"), inject.get("tool")))
        shadow = inject.get("shadow_name") if isinstance(inject, _Mapping) else None
        if isinstance(attack, _Mapping):
            tools = attack.get("forbidden_tools")
            named += [(attack.line_of("forbidden_tools"), t) for t in tools if t != shadow] if isinstance(tools, list) else []
            patterns = attack.get("forbidden_args")
            named += [(patterns.line_of(t), t) for t in patterns if t != shadow] if isinstance(patterns, _Mapping) else []
        named += [(line or self.entry.line, tool) for line, tool in named_tools(self.entry)]
        reported: set[str] = set()
        for line, tool in named:
            if _is_name(tool) and tool not in tool_names and tool not in reported:
                reported.add(tool)
                self.problem(f'unknown tool "{tool}"{_suggest(tool, tool_names)} (server has: {_names(tool_names)})', line=line)


def _first_call(expect_tool: str | None, expect_args: Any, arg_match: Any, line: int) -> list[ExpectedCall]:
    """The one expected call of a case without calls of its own (`expect_tool` with `expect_args`), for the schema check."""
    if not _is_name(expect_tool) or not isinstance(expect_args, _Mapping):
        return []
    return [ExpectedCall(str(expect_tool), expect_args, arg_match if isinstance(arg_match, _Mapping) else {}, line)]


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _plain(value: Any) -> Any:
    """Plain dicts and lists, so the line bookkeeping never leaks into a `GoldenCase`."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return f"{value!r} ({type(value).__name__})"


def _quote(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else _describe(value)


def _suggest(name: Any, choices: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1) if isinstance(name, str) else []
    return f', did you mean "{close[0]}"?' if close else ""


def _names(tool_names: Collection[str]) -> str:
    ordered = sorted(tool_names)
    if not ordered:
        return "no tools"
    return ", ".join(ordered[:_NAMES_SHOWN]) + (", ..." if len(ordered) > _NAMES_SHOWN else "")
