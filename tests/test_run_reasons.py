"""`evalcore run` says why an attempt failed: under each failing case gate line of its summary, and per attempt in its
--out report; `run --no-db` runs on a temporary store and leaves no store behind."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import jsonschema
import pytest

from evalcore.cli import main
from tests.builders import GOLDEN, WRONG

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "report.schema.json"


def _workspace(tmp_path: Path) -> tuple[Path, str]:
    golden = tmp_path / "tasks.yaml"
    golden.write_text(GOLDEN)
    (tmp_path / "wrong.yaml").write_text(WRONG)
    return golden, f"sim/script:{tmp_path / 'wrong.yaml'}"


def test_summary_and_report_say_why_each_attempt_failed(tmp_path, capsys):
    golden, wrong = _workspace(tmp_path)
    out = tmp_path / "report.json"
    argv = ["run", "--golden", str(golden), "--models", wrong, "--server", "reference", "--runs", "2", "--db", str(tmp_path / "evals.duckdb")]
    code = main([*argv, "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 1, printed
    lines = printed.splitlines()

    # under each failing case gate line, that case's top failing reason; the run gate line stays the summary's last
    paris = next(i for i, line in enumerate(lines) if "weather-paris" in line and "0/2" in line)
    assert lines[paris + 1].strip() == 'why: city: "Lyon" != "Paris"'
    hello = next(i for i, line in enumerate(lines) if "say-hello" in line and "0/2" in line)
    assert lines[hello + 1].strip() == "why: called get_weather on a no-tool case"
    assert "customer-then-ticket" not in "\n".join(lines[paris : hello + 2])  # a case that met its gate gets no line
    assert [line for line in lines if line.strip()][-1].startswith("run gate: ")

    report = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(report)
    cases = {case["id"]: case for case in report["models"][0]["cases"]}
    assert cases["say-hello"]["attempt_results"] == [
        {"attempt": 1, "passed": False, "errored": None, "reasons": ["called get_weather on a no-tool case"]},
        {"attempt": 2, "passed": False, "errored": None, "reasons": ["called get_weather on a no-tool case"]},
    ]
    assert [a["attempt"] for a in cases["weather-paris"]["attempt_results"]] == [1, 2]
    assert all('city: "Lyon" != "Paris"' in a["reasons"] and not a["passed"] for a in cases["weather-paris"]["attempt_results"])
    assert cases["customer-then-ticket"]["attempt_results"] == [
        {"attempt": 1, "passed": True, "errored": None, "reasons": []},
        {"attempt": 2, "passed": True, "errored": None, "reasons": []},
    ]


def test_no_db_runs_on_a_temporary_store_and_leaves_none(tmp_path, monkeypatch, capsys):
    golden, wrong = _workspace(tmp_path)
    work, temp = tmp_path / "work", tmp_path / "temp"
    work.mkdir()
    temp.mkdir()
    monkeypatch.chdir(work)  # the default store, data/evals.duckdb, would be made here
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where the temporary store goes
    out = work / "report.json"
    code = main(["run", "--golden", str(golden), "--models", wrong, "--server", "reference", "--runs", "1", "--no-db", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 1, printed  # two case gates missed, no baseline: not green, as with a store
    assert "run gate: NO BASELINE" in printed
    assert json.loads(out.read_text(encoding="utf-8"))["caseGates"]["passed"] is False
    assert not (work / "data").exists()
    assert list(temp.iterdir()) == []  # the temporary folder and its store are gone
    assert [p.name for p in tmp_path.rglob("*") if "duckdb" in p.name] == []


@pytest.mark.parametrize("option", [["--resume", "20260101-000000-abcdef"], ["--cache"], ["--replay-run", "20260101-000000-abcdef"]])
def test_no_db_refuses_what_needs_a_store(tmp_path, monkeypatch, capsys, option):
    golden, wrong = _workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--golden", str(golden), "--models", wrong, "--no-db", *option])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--no-db keeps no store, and {option[0]} reads one" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "data").exists()


def test_summary_columns_stay_aligned_with_a_long_model_name_and_say_no_price_and_one_run(tmp_path, capsys):
    golden, _ = _workspace(tmp_path)
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3)
    deep.mkdir()
    (deep / "wrong.yaml").write_text(WRONG)
    long_model = f"sim/script:{deep / 'wrong.yaml'}"
    argv = ["run", "--golden", str(golden), "--models", f"{long_model},sim/lexical", "--server", "reference", "--runs", "1", "--no-db"]
    main(argv)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(" · 1 run per case")
    header = next(line for line in lines if line.startswith("model "))
    rows = [line for line in lines if line.startswith(("sim/lexical (simulated)", "sim/script:"))][:2]
    assert len(rows) == 2 and all(len(row) == len(header) for row in rows), [header, *rows]  # every column ends where its heading does
    assert all(row.endswith(" no price") for row in rows)  # a simulated model has no price, as the dashboard says, not 0.0000
