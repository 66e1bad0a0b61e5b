"""Pure logic: a golden file's text with one case accepted, replaced or removed, everything else kept as written.

`evalcore review` edits the file a human reads, so it works on the text, not on a re-dump of the YAML: comments
(the server's answers above drafted cases), key order and quoting stay. A case's block is its lines from the comment
lines right above its `- id:` line to the line before the next block (or the end of the cases).

    text = accept_case(text, case, by="human", at="2026-12-05")   # review: {status: accepted, by: human, at: ...}
    text = remove_case(text, case)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from evalcore.golden.loader import GoldenSetProblems, load_golden_set
from evalcore.golden.model import GoldenCase


def case_block(lines: Sequence[str], cases: Sequence[GoldenCase], case: GoldenCase) -> tuple[int, int]:
    """[start, end) of the case's lines (0-based), its comment lines above included."""
    starts = sorted(c.line for c in cases)
    index = starts.index(case.line)
    start = _with_comments(lines, case.line - 1)
    end = _with_comments(lines, starts[index + 1] - 1) if index + 1 < len(starts) else len(lines)
    return start, end


def _with_comments(lines: Sequence[str], first: int) -> int:
    while first > 0 and lines[first - 1].strip().startswith("#"):
        first -= 1
    return first


def accept_case(text: str, cases: Sequence[GoldenCase], case: GoldenCase, *, by: str, at: str) -> str:
    """The text with the case's `review:` set to accepted (by, at); added when the case has none."""
    lines = text.splitlines(keepends=True)
    start, end = case_block(lines, cases, case)
    block = lines[start:end]
    head = next(i for i, line in enumerate(block) if re.match(r"\s*-\s", line))
    key_indent = len(block[head]) - len(block[head].lstrip(" ")) + 2
    accepted = f"{' ' * key_indent}review: {{status: accepted, by: {by}, at: '{at}'}}\n"
    review = next((i for i, line in enumerate(block) if re.match(rf"^ {{{key_indent}}}review:", line)), None)
    if review is None:
        last = max(i for i, line in enumerate(block) if line.strip() and not line.strip().startswith("#"))
        if not block[last].endswith("\n"):
            block[last] += "\n"
        block.insert(last + 1, accepted)
    else:
        stop = review + 1  # a review written as a block mapping goes whole: its lines are indented deeper
        while stop < len(block) and block[stop].strip() and len(block[stop]) - len(block[stop].lstrip(" ")) > key_indent:
            stop += 1
        block[review:stop] = [accepted]
    return "".join([*lines[:start], *block, *lines[end:]])


def remove_case(text: str, cases: Sequence[GoldenCase], case: GoldenCase) -> str:
    lines = text.splitlines(keepends=True)
    start, end = case_block(lines, cases, case)
    return "".join([*lines[:start], *lines[end:]])


def replace_case(text: str, cases: Sequence[GoldenCase], case: GoldenCase, block: str) -> str:
    lines = text.splitlines(keepends=True)
    start, end = case_block(lines, cases, case)
    return "".join([*lines[:start], block if block.endswith("\n") else block + "\n", *lines[end:]])


def block_text(text: str, cases: Sequence[GoldenCase], case: GoldenCase) -> str:
    lines = text.splitlines(keepends=True)
    start, end = case_block(lines, cases, case)
    return "".join(lines[start:end])


def save_if_it_loads(path: Path, text: str) -> str | None:
    """Write `text` over `path` when it loads as a golden set (checked from a hidden file beside it, so a rubric it
    names is found); else leave the file as it was and return the loader's first problem."""
    candidate = path.with_name(f".{path.name}.review")
    candidate.write_text(text, encoding="utf-8")
    try:
        load_golden_set(candidate)
    except GoldenSetProblems as problems:
        return problems.problems[0].replace(str(candidate), str(path))
    finally:
        candidate.unlink(missing_ok=True)
    path.write_text(text, encoding="utf-8")
    return None


def answers_quoted(block: str) -> list[str]:
    """The server's answers a drafted case quotes above itself (`# server answered: ...`)."""
    return [line.split("server answered:", 1)[1].strip() for line in block.splitlines() if line.strip().startswith("# server answered:")]
