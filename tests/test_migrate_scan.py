"""migrate-scan: each pre-2026 pattern is found with file:line and its replacement; clean code passes."""

from __future__ import annotations

from pathlib import Path

from evalcore.cli import main
from evalcore.mcp.migrate_scan import RULES, scan_paths, scan_text

OLD_TEST = """\
async def test_handshake(session):
    result = await session.initialize()
    await session.send_notification("notifications/initialized")
    headers = {"Mcp-Session-Id": session.id, "Last-Event-ID": "7"}
    assert error.code == -32004  # unsupported version
    assert header_error.code == -32001
    assert cap_error.code == -32003
    assert missing.code == -32002
    await session.request("ping")
    await session.request("logging/setLevel", {"level": "debug"})
    await session.request("resources/subscribe", {"uri": "x"})
    note = "notifications/roots/list_changed"
    url_error = -32042
"""


def test_every_rule_fires_on_the_old_test_with_its_line():
    findings = scan_text(OLD_TEST, Path("t.py"))
    assert {f.pattern_name for f in findings} == {rule.pattern_name for rule in RULES}
    by_name = {f.pattern_name: f for f in findings}
    assert by_name["initialize"].line == 2
    assert by_name["-32004"].replacement.startswith("-32022")
    assert by_name["-32001"].replacement.startswith("-32020")
    assert by_name["-32003"].replacement.startswith("-32021")
    assert "-32602" in by_name["-32002"].replacement
    assert "session" in by_name["Mcp-Session-Id"].replacement


def test_modern_code_and_lookalike_numbers_are_not_flagged():
    modern = 'assert err.code == -32022\nx = -320041\nversion = "2026-07-28"\nawait client.request("server/discover")\n'
    assert scan_text(modern, Path("t.py")) == []


def test_cli_exit_codes_and_output(tmp_path, capsys):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "test_old.py").write_text(OLD_TEST)
    (tmp_path / "new.py").write_text("x = -32020\n")
    (tmp_path / "blob.bin").write_bytes(b"\0-32001\0")
    assert main(["migrate-scan", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'old' / 'test_old.py'}:2: initialize ->" in out
    assert "blob.bin" not in out
    assert main(["migrate-scan", str(tmp_path / "new.py")]) == 0
    assert main(["migrate-scan", str(tmp_path / "missing")]) == 2


def test_scan_skips_virtualenvs(tmp_path):
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "mcp.py").write_text('"initialize"\n')
    assert scan_paths([tmp_path]) == []
