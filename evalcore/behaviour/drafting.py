"""I/O layer: `evalcore draft` — a first golden set for a server, written by a model from the server's own tools.

    result = await draft_golden(target, ModelSpec("sim/drafter"), per_tool=2, call_tools="readonly", today=date.today())
    text = render_drafts(result, server="reference")

1. The tools are read (tools/list). The model is asked (`evalcore.models.draft_prompt`) for positive cases per tool,
   negative cases no tool serves, and disambiguation cases for tools whose descriptions are close.
   (The call's context names the case `draft`, so a `sim/script` model can script a drafter's answer.)
2. Every draft is checked before it is kept; one that fails is dropped with its reason:
   its shape; the expected tool exists; its arguments validate against the tool's inputSchema
   (`evalcore.golden.schema_check`); it is no duplicate (the same request, in other case or spacing); and, under
   `call_tools` readonly (read-only tools) or all (every tool), the expected call is made on the server and must not
   be a server error. What the server answered is kept beside the case, as a comment.
3. Sequence cases: an executed call whose answer holds a value another tool takes (a string its pattern matches)
   becomes a two-call sequence, the second call checked like the first.
4. Every case carries `review: {status: draft, by: MODEL, at: DATE, checked: executed | schema}`; `evalcore run`
   skips it unless `--include-drafts`. The written file is loaded back (`load_golden_set` with the tools) before the
   command reports success: a draft the loader refuses is dropped with the loader's reason.
"""

from __future__ import annotations

import difflib
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from evalcore.behaviour.server_tools import ToolSession, is_read_only
from evalcore.errors import ModelError
from evalcore.golden.loader import GoldenSetProblems, load_golden_set
from evalcore.golden.model import ARG_MATCH_MODES, argument_rule, example_args
from evalcore.golden.schema_check import argument_problems
from evalcore.golden.skeleton import first_sentence, render_yaml
from evalcore.mcp.target import Target
from evalcore.models.adapter import IN_PROCESS, ModelCaller
from evalcore.models.draft_prompt import PURPOSES, draft_messages, parse_drafts
from evalcore.models.tool_format import ToolNameMap
from evalcore.models.types import ModelSpec
from evalcore.redaction import clip
from evalcore.scoring.argmatch import normalise_text

CallTools = Literal["readonly", "all", "none"]
CALL_TOOLS: Final[tuple[CallTools, ...]] = ("readonly", "all", "none")
DRAFT_KEYS: Final = ("id", "purpose", "prompt", "expect_tool", "expect_args", "arg_match")
ANSWER_SHOWN: Final = 240
SIMULATED_NOTE: Final = "simulated: an offline drafter that works from the tools' names, descriptions and schemas only"


@dataclass(frozen=True)
class Draft:
    """One kept case: its golden keys (in file order), what it is for, and what the server answered to its call(s)."""

    case: Mapping[str, Any]
    purpose: str
    answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dropped:
    case_id: str
    reason: str


@dataclass(frozen=True)
class Coverage:
    tools: int
    with_positive: int
    negatives: int
    disambiguation_pairs: int
    sequences: int
    uncovered: tuple[str, ...]

    @property
    def share(self) -> float:
        return self.with_positive / self.tools if self.tools else 1.0

    def summary(self) -> str:
        missing = f" (none for: {', '.join(self.uncovered)})" if self.uncovered else ""
        return (
            f"coverage: {self.with_positive}/{self.tools} tools with a positive case ({self.share:.0%}){missing}, "
            f"{self.negatives} negative case{'s' if self.negatives != 1 else ''}, {self.disambiguation_pairs} disambiguation "
            f"pair{'s' if self.disambiguation_pairs != 1 else ''}, {self.sequences} sequence case{'s' if self.sequences != 1 else ''}"
        )


@dataclass(frozen=True)
class DraftResult:
    model: str
    simulated: bool
    at: str
    tools: tuple[Mapping[str, Any], ...]
    kept: tuple[Draft, ...]
    dropped: tuple[Dropped, ...]
    coverage: Coverage = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "coverage", coverage_of(self.tools, self.kept))


async def draft_golden(
    target: Target,
    spec: ModelSpec,
    *,
    per_tool: int,
    call_tools: CallTools,
    today: date,
    models: ModelCaller = IN_PROCESS,
) -> DraftResult:
    """Read the tools, ask the model for drafts, check each (and call it, per `call_tools`); see the module docstring."""
    async with ToolSession(target) as session:
        tools = tuple(session.tools)
        turn = await models.complete(spec, draft_messages(tools, per_tool), [], ToolNameMap(), context={"purpose": "draft", "case_id": "draft"})
        raw = parse_drafts(turn.text)
        if not raw:
            raise ModelError(f"{spec.name} answered no draft cases (expected a JSON object with a 'cases' list): {clip(turn.text or '(nothing)', 120)}")
        checker = _Checker(tools, spec.name, today.isoformat(), call_tools)
        for number, item in enumerate(raw, start=1):
            await checker.take(item, number, session)
        await checker.find_sequences(session)
    kept, dropped = loadable(checker.kept, list(checker.dropped), tools, spec.name, today.isoformat())
    return DraftResult(spec.name, spec.simulated, today.isoformat(), tools, tuple(kept), tuple(dropped))


class _Checker:
    def __init__(self, tools: Sequence[Mapping[str, Any]], model: str, at: str, call_tools: CallTools) -> None:
        self.tools = {str(tool["name"]): tool for tool in tools}
        self.model, self.at, self.call_tools = model, at, call_tools
        self.kept: list[Draft] = []
        self.dropped: list[Dropped] = []
        self.ids: set[str] = set()
        self.prompts: set[str] = set()

    def drop(self, case_id: str, reason: str) -> None:
        self.dropped.append(Dropped(case_id, reason))

    def executes(self, tool: str) -> bool:
        return self.call_tools == "all" or (self.call_tools == "readonly" and is_read_only(self.tools[tool]))

    async def take(self, item: Any, number: int, session: ToolSession) -> None:
        if not isinstance(item, Mapping):
            self.drop(f"#{number}", f"not a case mapping: {clip(str(item), 60)}")
            return
        case_id = _slug(item.get("id")) or f"draft-{number}"
        if problem := self.shape_problem(item):
            self.drop(case_id, problem)
            return
        tool, args = item.get("expect_tool"), dict(item.get("expect_args") or {})
        if tool is not None and (problem := self.call_problem(tool, args, dict(item.get("arg_match") or {}))):
            self.drop(case_id, problem)
            return
        prompt_key = normalise_text(str(item["prompt"]))
        if prompt_key in self.prompts:
            self.drop(case_id, "duplicate: the same request as an earlier draft")
            return
        answers: tuple[str, ...] = ()
        if tool is not None and self.executes(tool):
            answer = await self.execute(session, tool, args)
            if isinstance(answer, Dropped):
                self.drop(case_id, answer.reason)
                return
            answers = (answer,) if answer is not None else ()
        case: dict[str, Any] = {"id": self.unique(case_id), "prompt": str(item["prompt"]), "expect_tool": tool}
        if args:
            case["expect_args"] = args
        if item.get("arg_match"):
            case["arg_match"] = dict(item["arg_match"])
        case["review"] = self.review(executed=bool(answers) or (tool is not None and self.executes(tool) and _callable(args)))
        self.prompts.add(prompt_key)
        self.kept.append(Draft(case, str(item.get("purpose") or ("negative" if tool is None else "positive")), answers))

    def shape_problem(self, item: Mapping[str, Any]) -> str | None:
        unknown = [str(key) for key in item if key not in DRAFT_KEYS]
        if unknown:
            return f"unknown key {unknown[0]!r} (a draft has: {', '.join(DRAFT_KEYS)})"
        if not isinstance(item.get("prompt"), str) or not item["prompt"].strip():
            return "no prompt"
        if item.get("purpose") is not None and item["purpose"] not in PURPOSES:
            return f"purpose {item['purpose']!r} is none of {', '.join(PURPOSES)}"
        tool, args, modes = item.get("expect_tool"), item.get("expect_args") or {}, item.get("arg_match") or {}
        if tool is not None and not isinstance(tool, str):
            return f"expect_tool must be a tool name or null, got {clip(str(tool), 40)}"
        if not isinstance(args, Mapping) or not isinstance(modes, Mapping):
            return "expect_args and arg_match must be mappings"
        if tool is None and args:
            return "a negative case (expect_tool null) has no arguments"
        if any(mode not in ARG_MATCH_MODES or name not in args for name, mode in modes.items()):
            return f"arg_match must name arguments of expect_args, each {', '.join(ARG_MATCH_MODES)}"
        return None

    def call_problem(self, tool: str, args: Mapping[str, Any], modes: Mapping[str, str]) -> str | None:
        if tool not in self.tools:
            close = difflib.get_close_matches(tool, list(self.tools), n=1)
            return f'unknown tool "{tool}"' + (f', did you mean "{close[0]}"?' if close else "")
        schema = self.tools[tool].get("inputSchema")
        problems = argument_problems(tool, args, modes, schema) if isinstance(schema, Mapping) else []
        return problems[0][1] if problems else None

    async def execute(self, session: ToolSession, tool: str, args: Mapping[str, Any]) -> str | Dropped | None:
        """The server's answer to the expected call, a Dropped when it is a server error, None when it cannot be made."""
        if not _callable(args):
            return None
        answer = await session.call(tool, example_args(args))
        if answer.server_error is not None:
            return Dropped(tool, f"server error calling {tool}: {clip(answer.server_error, 120)}")
        shown = " ".join(answer.text.split())
        return clip(("tool error: " if answer.is_error else "") + shown, ANSWER_SHOWN)

    def review(self, *, executed: bool) -> dict[str, Any]:
        return {"status": "draft", "by": self.model, "at": self.at, "checked": "executed" if executed else "schema"}

    def unique(self, case_id: str) -> str:
        candidate, n = case_id, 2
        while candidate in self.ids:
            candidate, n = f"{case_id}-{n}", n + 1
        self.ids.add(candidate)
        return candidate

    async def find_sequences(self, session: ToolSession) -> None:
        """Executed calls whose answer holds a value another tool takes become two-call sequences (see the docstring)."""
        firsts: set[str] = set()
        for draft in list(self.kept):
            tool = draft.case.get("expect_tool")
            if draft.purpose != "positive" or not draft.answers or draft.answers[0].startswith("tool error") or tool in firsts:
                continue
            given = {str(value) for value in example_args(draft.case.get("expect_args") or {}).values()}
            follow = self.follow_up(str(tool), draft.answers[0], given)
            if follow is None:
                continue
            second, argument, value = follow
            args = {argument: value}
            answers = list(draft.answers)
            if self.executes(second):
                answer = await self.execute(session, second, args)
                if isinstance(answer, Dropped) or answer is None or answer.startswith("tool error"):
                    continue
                answers.append(answer)
            sentence = first_sentence(self.tools[second].get("description")) or second.replace("_", " ")
            prompt = f"{draft.case['prompt'].rstrip('.?!')}, then {sentence[0].lower()}{sentence[1:]} for the {argument.replace('_', ' ')} it gives."
            first_call = {"tool": tool, "args": dict(draft.case.get("expect_args") or {})}
            if draft.case.get("arg_match"):
                first_call["arg_match"] = dict(draft.case["arg_match"])
            case = {
                "id": self.unique(f"{tool}-then-{second}"),
                "prompt": prompt,
                "expect_sequence": [first_call, {"tool": second, "args": args}],
                "review": self.review(executed=len(answers) == 2),
            }
            self.kept.append(Draft(case, "sequence", tuple(answers)))
            firsts.add(str(tool))

    def follow_up(self, first: str, answer: str, given: set[str]) -> tuple[str, str, str] | None:
        """(tool, argument, value): another tool with one required string argument whose pattern a token of the answer
        matches (not a value the first call was given)."""
        for name, tool in self.tools.items():
            schema: Mapping[str, Any] = tool["inputSchema"] if isinstance(tool.get("inputSchema"), Mapping) else {}
            required = [arg for arg in schema.get("required") or [] if isinstance(arg, str)]
            properties: Mapping[str, Any] = schema["properties"] if isinstance(schema.get("properties"), Mapping) else {}
            if name == first or len(required) != 1 or not isinstance(properties.get(required[0]), Mapping):
                continue
            pattern = properties[required[0]].get("pattern")
            if not isinstance(pattern, str) or "@" in pattern:
                continue
            body = pattern.removeprefix("^").removesuffix("$")
            try:
                found = re.search(rf"(?<![\w-])(?:{body})(?![\w-])", answer)
            except re.error:
                continue
            if found and found.group(0) not in given:
                return name, required[0], found.group(0)
        return None


def _callable(args: Mapping[str, Any]) -> bool:
    """A call can be made from these arguments: no argument is only `{optional: true}` with no value to pass."""
    return all(argument_rule(value).alternatives or argument_rule(value).optional for value in args.values())


def _slug(value: Any) -> str:
    text = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(value or "")).strip("-")
    return text[:80]


def coverage_of(tools: Sequence[Mapping[str, Any]], kept: Sequence[Draft]) -> Coverage:
    names = [str(tool["name"]) for tool in tools]
    positive = {str(d.case.get("expect_tool")) for d in kept if d.purpose in ("positive", "disambiguation") and d.case.get("expect_tool")}
    pairs = {d.case["id"] for d in kept if d.purpose == "disambiguation"}
    return Coverage(
        tools=len(names),
        with_positive=sum(name in positive for name in names),
        negatives=sum(d.purpose == "negative" for d in kept),
        disambiguation_pairs=len(pairs),
        sequences=sum(d.purpose == "sequence" for d in kept),
        uncovered=tuple(name for name in names if name not in positive),
    )


def loadable(kept: list[Draft], dropped: list[Dropped], tools: Sequence[Mapping[str, Any]], model: str, at: str) -> tuple[list[Draft], list[Dropped]]:
    """The drafts the loader accepts, as a file of them would be loaded (with the tools); the rest dropped with its reason."""
    for _ in range(len(kept) + 1):
        if not kept:
            return kept, dropped
        text = render_drafts_text(kept, model=model, at=at, server=None, simulated=False, tools=len(tools))
        with tempfile.TemporaryDirectory(prefix="evalcore-draft-") as folder:
            path = Path(folder) / "drafts.yaml"
            path.write_text(text, encoding="utf-8")
            try:
                load_golden_set(path, tools=tools)
                return kept, dropped
            except GoldenSetProblems as problems:
                bad = _cases_at(text, problems.problems, str(path))
        if not bad:
            return [], [*dropped, *(Dropped(str(d.case["id"]), "refused by the loader") for d in kept)]
        dropped += [Dropped(case_id, reason) for case_id, reason in bad.items()]
        kept = [d for d in kept if d.case["id"] not in bad]
    return kept, dropped


def _cases_at(text: str, problems: Sequence[str], path: str) -> dict[str, str]:
    """case id -> the loader's first problem for it, found by the problem's line."""
    starts = [(number, match.group(1)) for number, line in enumerate(text.splitlines(), start=1) if (match := re.match(r"- id: (.+)$", line.strip()))]
    out: dict[str, str] = {}
    for problem in problems:
        found = re.match(rf"{re.escape(path)}:(\d+): (.*)", problem)
        if not found:
            continue
        line = int(found.group(1))
        owner = [case_id for start, case_id in starts if start <= line]
        if owner:
            out.setdefault(yaml.safe_load(owner[-1]) if owner[-1] else owner[-1], found.group(2))
    return out


def render_drafts(result: DraftResult, server: str | None) -> str:
    return render_drafts_text(list(result.kept), model=result.model, at=result.at, server=server, simulated=result.simulated, tools=len(result.tools))


def render_drafts_text(kept: Sequence[Draft], *, model: str, at: str, server: str | None, simulated: bool, tools: int, origin: str = "") -> str:
    label = f" ({SIMULATED_NOTE})" if simulated else ""
    header = (
        (origin or f"Drafted by {model}{label} on {at}, from {tools} tools.") + "\n"
        "Every case is a draft: `evalcore run` skips it unless --include-drafts. Review each one (the server's answer\n"
        "is quoted above the cases that were called), then mark it review: {status: accepted, by: human}."
    )
    lines = [render_yaml({}, header).replace("{}\n", "").rstrip("\n")]
    if server:
        lines.append(f"server: {yaml.safe_dump(server, default_style=None).splitlines()[0]}")
    lines.append("cases:")
    for draft in kept:
        lines.append("")
        for answer in draft.answers:
            lines.append(f"  # server answered: {answer}")
        body = yaml.safe_dump([dict(draft.case)], sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=None)
        lines.extend(f"  {line}" for line in body.rstrip("\n").splitlines())
    return "\n".join(lines) + "\n"
