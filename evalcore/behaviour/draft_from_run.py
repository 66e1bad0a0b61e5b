"""I/O layer: `evalcore draft --from-run` — what really happened in a recorded run, as draft golden cases.

    drafts = drafts_from_run(db, run_id, model=None, case=None, today=date.today())

For each (model, case) of the run (narrowed by `model` and `case`), one attempt becomes a case: the first one a person
labelled good (`evalcore labels`, the drill-down's "Human: meets the rubric"), else the first that passed and no person
labelled bad (or, with `case` given, its first attempt whatever it came to: the one a human looked at): the user's prompt and the
system prompt the model was sent, the calls it made with their arguments (exact), in order (one call:
`expect_tool`/`expect_args`; several: `expect_sequence` of calls; none: a negative case), and the server's answers
quoted beside it. A distractor tool's call (never sent) is left out. Each case is a draft:
`review: {status: draft, by: MODEL, at: DATE, checked: executed}` (the calls were made on the server, in the run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from evalcore.behaviour.drafting import ANSWER_SHOWN, Draft
from evalcore.errors import ConfigError
from evalcore.golden.model import DEFAULT_SYSTEM_PROMPT
from evalcore.records import DISTRACTOR
from evalcore.redaction import clip
from evalcore.store.behaviour import load_attempts, load_run
from evalcore.store.judge_labels import load_labels


def drafts_from_run(db: Path, run_id: str, *, model: str | None, case: str | None, today: date) -> tuple[list[Draft], list[str]]:
    """The drafts, and the tools the run's server listed (for the caller's checks)."""
    run = load_run(db, run_id)
    rows = [row for row in load_attempts(db, run_id) if (model is None or row["model"] == model) and (case is None or row["case_id"] == case)]
    if not rows:
        narrowed = " ".join(part for part in (f"model {model}" if model else "", f"case {case}" if case else "") if part)
        raise ConfigError(f"run {run_id} has no attempt{f' of {narrowed}' if narrowed else ''}; `evalcore runs` lists runs, the report lists cases")
    attempts: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:  # in model, case, attempt order
        if row.get("transcript_json"):
            attempts.setdefault((str(row["model"]), str(row["case_id"])), []).append(row)
    human = {(label.run_id, label.model, label.case_id, label.attempt): label.label for label in load_labels(db)}

    def label_of(row: Mapping[str, Any]) -> str | None:  # a cached attempt's label is its original's
        return human.get((str(row.get("cached_from") or run_id), str(row["model"]), str(row["case_id"]), int(row["attempt"])))

    def pick(tried: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        judged_good = next((row for row in tried if label_of(row) == "pass"), None)
        if judged_good is not None:
            return judged_good
        if case is not None:
            return tried[0]
        return next((row for row in tried if row.get("passed") and label_of(row) != "fail"), None)

    picked = [found for tried in attempts.values() if (found := pick(tried)) is not None]
    if not picked:
        raise ConfigError(f"run {run_id}: no attempt passed, or a person judged each bad; name one case with --case to draft from its first attempt anyway")
    several_models = len({row["model"] for row in picked}) > 1
    drafts = [_draft(row, run_id, today, several_models) for row in picked]
    tools = [str(tool.get("name")) for tool in json.loads(run.get("server_tools_json") or "[]") if isinstance(tool, Mapping)]
    return drafts, tools


def _draft(row: Mapping[str, Any], run_id: str, today: date, several_models: bool) -> Draft:
    transcript = json.loads(row["transcript_json"])
    messages: Sequence[Mapping[str, Any]] = transcript.get("messages") or []
    prompt = next((str(m.get("content")) for m in messages if m.get("role") == "user" and m.get("content")), "")
    system = next((str(m.get("content")) for m in messages if m.get("role") == "system" and m.get("content")), DEFAULT_SYSTEM_PROMPT)
    sent = [e for e in transcript.get("executions") or [] if e.get("error_type") != DISTRACTOR and isinstance(e.get("tool"), str)]
    suffix = f"-{str(row['model']).replace('/', '-')}" if several_models else ""
    case: dict[str, Any] = {"id": f"{row['case_id']}-recorded{suffix}", "prompt": prompt}
    if system != DEFAULT_SYSTEM_PROMPT:
        case["system"] = system
    if not sent:
        case["expect_tool"] = None
    elif len(sent) == 1:
        case["expect_tool"] = sent[0]["tool"]
        if sent[0].get("arguments"):
            case["expect_args"] = dict(sent[0]["arguments"])
    else:
        case["expect_sequence"] = [{"tool": e["tool"], "args": dict(e.get("arguments") or {})} if e.get("arguments") else e["tool"] for e in sent]
    case["review"] = {"status": "draft", "by": str(row["model"]), "at": today.isoformat(), "checked": "executed" if sent else "schema"}
    answers = tuple(clip(" ".join(_answer_text(e).split()), ANSWER_SHOWN) for e in sent)
    purpose = "positive" if sent else "negative"
    return Draft(case, purpose, answers)


def _answer_text(execution: Mapping[str, Any]) -> str:
    if execution.get("error"):
        return f"error: {execution['error']}"
    result = execution.get("result") or {}
    texts = [str(item.get("text")) for item in result.get("content") or [] if isinstance(item, Mapping) and item.get("type") == "text"]
    return ("tool error: " if execution.get("is_error") else "") + ("\n".join(texts) or json.dumps(result.get("structuredContent"), sort_keys=True))
