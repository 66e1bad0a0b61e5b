"""Dashboard data: a golden file's cases as the Golden sets page reviews them (drafts first), and its coverage.

No store and no server: the page reads and rewrites the file itself, with `evalcore.golden.review_edit`, as
`evalcore review` does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from evalcore.golden.model import GoldenCase, GoldenSet
from evalcore.golden.review_edit import answers_quoted, block_text


@dataclass(frozen=True)
class ReviewRow:
    case: GoldenCase
    status: str  # draft | accepted | hand-written
    tools: str  # what the case expects called, in words
    block: str  # its lines in the file, comments included
    answers: tuple[str, ...]  # the server's answers quoted above it


def golden_files(root: Path) -> list[Path]:
    """The golden files under `root/golden` (the bundled sets and any drafts saved there)."""
    return sorted((root / "golden").glob("*.yaml"))


def review_rows(golden: GoldenSet) -> list[ReviewRow]:
    text = golden.path.read_text(encoding="utf-8")
    rows = []
    for case in golden.cases:
        block = block_text(text, golden.cases, case)
        status = "hand-written" if case.review is None else case.review.status
        names = [call.tool for call in case.expected_calls()]
        tools = "no tool (negative)" if not names else (" + ".join(names) + (" (any order)" if case.expect_set else ""))
        rows.append(ReviewRow(case, status, tools, block, tuple(answers_quoted(block))))
    return sorted(rows, key=lambda row: row.status != "draft")  # drafts first, file order kept within each group


def coverage_line(rows: list[ReviewRow]) -> str:
    statuses = Counter(row.status for row in rows)
    tools = {call.tool for row in rows for call in row.case.expected_calls()}
    negatives = sum(row.case.is_negative for row in rows)
    parts = [f"{statuses.get(status, 0)} {status}" for status in ("draft", "accepted", "hand-written")]
    return f"{len(rows)} cases: {', '.join(parts)} · {len(tools)} tools expected · {negatives} negative case{'s' if negatives != 1 else ''}"
