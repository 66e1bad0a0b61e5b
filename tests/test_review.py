"""`evalcore review FILE`: each draft case shown with its tool, arguments and the server's answer; accepted, edited in
$EDITOR, rejected or skipped; the file rewritten in place with its comments kept, and never into one that fails to load."""

from __future__ import annotations

import io
import sys
import textwrap
from pathlib import Path

import pytest

from evalcore.cli import main
from evalcore.golden.loader import load_golden_set

DRAFTS = """\
# Drafted by sim/drafter (simulated) on 2026-12-05.
cases:
  - id: kept
    prompt: "Hi there!"
    expect_tool: null

  # server answered: { "city": "Paris", "temperature": 21.5 }
  - id: weather
    prompt: "Weather in Paris?"
    expect_tool: get_weather
    expect_args: {city: Paris}
    review: {status: draft, by: sim/drafter, at: '2026-12-05', checked: executed}

  - id: bad
    prompt: "Book a flight"
    expect_tool: null
    review:
      status: draft
      by: sim/drafter

  # server answered: { "count": 1 }
  - id: kb
    prompt: "Refund articles"
    expect_tool: search_knowledge_base
    expect_args: {query: refund}
    review: {status: draft, by: sim/drafter, at: '2026-12-05', checked: executed}

  - id: later
    prompt: "Order ORD-50001?"
    expect_tool: get_order_status
    review: {status: draft, by: sim/drafter}
"""


def review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: str, *extra: str) -> Path:
    path = tmp_path / "drafts.yaml"
    if not path.exists():
        path.write_text(DRAFTS, encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    assert main(["review", str(path), *extra]) == 0
    return path


def test_accept_reject_edit_skip_rewrite_the_file_and_keep_its_comments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\np.write_text(p.read_text().replace('refund', 'refund policy'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    path = review(tmp_path, monkeypatch, "a\nr\ne\ns\n")
    shown = capsys.readouterr().out
    assert '# server answered: { "city": "Paris", "temperature": 21.5 }' in shown and "expect_args: {city: Paris}" in shown  # what a reviewer judges
    assert "1 accepted, 1 edited, 1 rejected, 1 skipped" in shown
    golden = load_golden_set(path)
    assert [case.id for case in golden.cases] == ["kept", "weather", "kb", "later"]
    weather, kb, later = golden.case("weather"), golden.case("kb"), golden.case("later")
    assert weather.review is not None and (weather.review.status, weather.review.by) == ("accepted", "human")
    assert kb.is_draft and kb.expect_args == {"query": "refund policy"}  # edited, still to be accepted
    assert later.is_draft
    text = path.read_text()
    assert text.startswith("# Drafted by sim/drafter (simulated)") and text.count("# server answered:") == 2
    # A second pass accepts the edited case: its review goes from draft to accepted, with the comment above it kept.
    review(tmp_path, monkeypatch, "a\nq\n", "--by", "dana")
    kb = load_golden_set(path).case("kb")
    assert kb.review is not None and (kb.review.status, kb.review.by) == ("accepted", "dana")
    assert '# server answered: { "count": 1 }\n  - id: kb' in path.read_text()


def test_an_edit_that_breaks_the_file_is_not_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\np.write_text(p.read_text().replace('expect_args', 'expect_argz'))\n")
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    path = review(tmp_path, monkeypatch, "e\n")
    assert 'unknown key "expect_argz"' in capsys.readouterr().err
    assert path.read_text() == DRAFTS


def test_a_file_without_drafts_has_nothing_to_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text(textwrap.dedent("cases:\n  - id: a\n    prompt: hi\n    expect_tool: null\n"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["review", str(path)]) == 0
    assert "no draft case to review" in capsys.readouterr().out


def test_a_review_written_as_a_block_is_replaced_whole(tmp_path: Path) -> None:
    from evalcore.golden.review_edit import accept_case

    path = tmp_path / "drafts.yaml"
    path.write_text(DRAFTS, encoding="utf-8")
    golden = load_golden_set(path)
    path.write_text(accept_case(DRAFTS, golden.cases, golden.case("bad"), by="human", at="2026-12-06"), encoding="utf-8")
    bad = load_golden_set(path).case("bad")
    assert bad.review is not None and (bad.review.status, bad.review.at) == ("accepted", "2026-12-06")
    assert 'status: draft\n      by: sim/drafter\n\n  # server answered: { "count"' not in path.read_text()
