"""The text report: reasons whole (wrapped under their row) where stdout is a file or a CI log, cut on a terminal."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from evalcore.cli import main as cli_main
from evalcore.conformance.report import render_table
from evalcore.conformance.runner import CheckReport, SuiteReport

HOSTILE_STDIO = Path(__file__).with_name("hostile_stdio.py")
LONG_REASON = (
    "tools/list with an invalid cursor: expected error -32602, got tools/list: HTTP 200 result with 3 tools "
    "(the server said nothing about the cursor 'evalcore-not-a-cursor-0f3a'); see https://example.invalid/a/very/long/path/that/is/one/word"
)


def _report() -> SuiteReport:
    checks = (CheckReport("pagination.invalid_cursor", "pagination", "t", "spec", "SHOULD", 0, 5, "warn", LONG_REASON),)
    return SuiteReport("http://127.0.0.1:1/mcp", "http", 5, "readonly", datetime.now(UTC), 0.5, "fp", "Demo 1", checks)


def test_full_reasons_are_whole_and_wrapped_under_their_row():
    text = render_table(_report(), width=80, full_reasons=True)
    assert "…" not in text
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("pagination.invalid_cursor"))
    reason_lines = []
    for line in lines[row + 1 :]:
        if not line.startswith("    "):
            break
        reason_lines.append(line.strip())
    assert " ".join(reason_lines) == LONG_REASON
    assert all(len(line) <= 80 for line in lines[row + 1 : row + 1 + len(reason_lines)] if "https://" not in line)


def test_on_a_terminal_a_long_reason_is_cut_to_the_width():
    text = render_table(_report(), width=80)
    row = next(line for line in text.splitlines() if line.startswith("pagination.invalid_cursor"))
    assert row.endswith("…") and len(row) == 80


def test_the_command_prints_reasons_whole_when_stdout_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "60")
    argv = ["conformance", "--stdio", f"{sys.executable} {HOSTILE_STDIO} hang", "--runs", "1", "--timeout", "1", "--startup-timeout", "1", "--no-db"]
    assert cli_main(argv) == 1
    out = capsys.readouterr().out
    assert "…" not in out
    assert "timeout: no response within 1s" in " ".join(out.split())
