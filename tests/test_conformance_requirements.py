"""The map of the official 2026-07-28 requirement set onto our checks names exactly the official server scenarios.

The ids come from the pinned npm package (bench/official_suite/, `npm ci` there) when it is installed, else from
the committed copy tests/official_requirements_2026-07-28.txt, which states its source and version.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from evalcore.cli import main as cli_main
from evalcore.conformance.registry import all_checks
from evalcore.conformance.requirement_view import judge
from evalcore.conformance.requirements import REVISIONS, load
from evalcore.conformance.runner import CheckReport, SuiteReport
from evalcore.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PINNED = json.loads((ROOT / "bench" / "official_suite" / "package.json").read_text())["dependencies"]["@modelcontextprotocol/conformance"]
INSTALLED = ROOT / "bench" / "official_suite" / "node_modules" / "@modelcontextprotocol" / "conformance"
COPY = Path(__file__).with_name("official_requirements_2026-07-28.txt")


def _official_server_scenarios() -> dict[str, str]:
    """{scenario id: "scored" or "not_scored:<reason>"} for the server leg of the pinned requirement file."""
    if (INSTALLED / "package.json").exists():
        assert json.loads((INSTALLED / "package.json").read_text())["version"] == PINNED, "bench/official_suite: run `npm ci` there again"
        document = yaml.safe_load((INSTALLED / "requirements" / "2026-07-28.yaml").read_text())
        scenarios = {scenario: "scored" for scenario in document["server"]}
        scenarios |= {e["scenario"]: f"not_scored:{e['reason']}" for e in document["not_scored"] if e["leg"] == "server"}
        return scenarios
    lines = [line.split() for line in COPY.read_text().splitlines() if line and not line.startswith("#")]
    return {scenario: kind for scenario, kind in lines}


def test_the_committed_copy_is_of_the_pinned_version_and_agrees_with_the_installed_package():
    assert f"@modelcontextprotocol/conformance\n# {PINNED}" in COPY.read_text()
    lines = [line.split() for line in COPY.read_text().splitlines() if line and not line.startswith("#")]
    assert dict(lines) == _official_server_scenarios()


def test_the_map_names_exactly_the_official_server_scenarios_scored_as_the_official_file_scores_them():
    requirements = load("2026-07-28")
    assert requirements.version == PINNED
    official = _official_server_scenarios()
    assert [r.id for r in requirements.requirements if r.scored] == [s for s, kind in official.items() if kind == "scored"]
    ours = {r.id: "scored" if r.scored else f"not_scored:{r.reason}" for r in requirements.requirements}
    assert ours == official
    assert sum(r.scored for r in requirements.requirements) == 37
    assert {r.leg for r in requirements.requirements} == {"server"}


def test_the_map_names_only_registered_checks_and_every_scenario_has_a_note():
    registered = {check.id for check in all_checks()}
    for requirement in load("2026-07-28").requirements:
        assert set(requirement.checks) <= registered, requirement.id
        assert requirement.note, requirement.id
        assert (requirement.coverage in ("missing", "beyond-spec")) == (not requirement.checks), requirement.id


def test_every_scored_scenario_is_decided_by_a_check_or_shown_to_ask_more_than_the_spec():
    """Done when: no scored server scenario is left `missing`; one asking more than the spec quotes the sentence it goes beyond."""
    for requirement in load("2026-07-28").requirements:
        if requirement.scored:
            assert requirement.coverage != "missing", requirement.id
        if requirement.coverage == "beyond-spec":
            assert "more than the spec" in requirement.note and '"' in requirement.note, requirement.id


def test_an_unknown_revision_is_a_one_line_config_error():
    assert REVISIONS == ("2026-07-28",)
    with pytest.raises(ConfigError, match="no requirement set"):
        load("2025-11-25")


def _report(verdicts: dict[str, str]) -> SuiteReport:
    checks = tuple(CheckReport(check_id, check_id.split(".")[0], "t", "spec", "MUST", 1, 1, verdict, "reason") for check_id, verdict in verdicts.items())  # type: ignore[arg-type]
    return SuiteReport("http://127.0.0.1:1/mcp", "http", 1, "readonly", datetime.now(UTC), 0.1, None, None, checks)


def test_a_scenario_takes_the_worst_verdict_of_its_checks_and_never_reads_better_than_they_do():
    requirements = load("2026-07-28")
    everything_passes = {check.id: "pass" for check in all_checks()}
    view = judge(requirements, _report(everything_passes | {"headers.version_mismatch": "fail", "completion.result_shape": "not_testable"}))
    by_id = {s.requirement.id: s for s in view.scenarios}
    assert by_id["server-stateless"].verdict == "fail"  # eleven checks pass, one fails
    assert by_id["completion-complete"].verdict == "not_testable"
    assert by_id["caching"].verdict == "pass"
    assert by_id["server-sse-multiple-streams"].verdict == "pass"
    assert by_id["input-required-result-tampered-state"].verdict == "beyond_spec"  # reported, never enforced, never missing
    assert by_id["tools-call-with-progress"].verdict == "pass"
    warned = judge(requirements, _report(everything_passes | {"mrtr.retry_without_responses": "warn"}))
    assert {s.requirement.id: s.verdict for s in warned.scenarios}["input-required-result-missing-input-response"] == "warn"
    untried = judge(requirements, _report(everything_passes | {"mrtr.round_trip": "not_testable"}))
    partly = {s.requirement.id: s.verdict for s in untried.scenarios}
    assert partly["input-required-result-basic-elicitation"] == "partial"  # results well formed, the round trip untried: not a pass
    assert partly["input-required-result-result-type"] == "partial"
    only_caching = judge(requirements, _report({"cache_fields.ttl_ms": "pass", "cache_fields.cache_scope": "pass"}))
    verdicts = {s.requirement.id: s.verdict for s in only_caching.scenarios}
    assert verdicts["caching"] == "pass" and verdicts["server-stateless"] == "not_run"  # --only: not run, not passed
    some_of_them = judge(requirements, _report({"discover.responds": "pass"}))
    assert {s.requirement.id: s.verdict for s in some_of_them.scenarios}["server-stateless"] == "partial"  # 1 of its 13 checks ran
    counts = view.counts(scored=True)
    assert counts["total"] == 37 and counts["fail"] == 1 and counts["missing"] + counts["beyond_spec"] == counts["total"] - counts["covered"]
    assert counts["missing"] == 0 and counts["beyond_spec"] == 1


def test_the_command_reports_every_official_scenario_in_text_and_json_and_keeps_its_verdict(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")  # a narrow terminal; the output is captured (a file, a CI log): its rows stay whole
    out = tmp_path / "report.json"
    argv = ["conformance", "--reference", "--runs", "1", "--no-db", "--json", str(out)]
    junit = tmp_path / "report.xml"
    assert cli_main([*argv, "--requirements", "2026-07-28", "--junit", str(junit)]) == 0
    text = capsys.readouterr().out
    document = json.loads(out.read_text())
    rows = document["requirements"]
    assert [row["id"] for row in rows] == [r.id for r in load("2026-07-28").requirements]
    assert document["requirementSet"]["source"] == f"@modelcontextprotocol/conformance {PINNED}, requirements/2026-07-28.yaml"
    checks = {check["id"]: check["verdict"] for check in document["checks"]}
    for row in rows:
        assert row["leg"] == "server" and row["note"] and row["verdict"]
        assert row["checks"] == [{"id": check_id, "verdict": checks[check_id]} for check_id in row["mappedChecks"]]
    by_id = {row["id"]: row for row in rows}
    assert by_id["caching"]["verdict"] == "pass" and by_id["caching"]["coverage"] == "same"
    assert by_id["tasks-lifecycle"]["scored"] is False and by_id["tasks-lifecycle"]["notScoredReason"] == "extension"
    assert "Official requirement set 2026-07-28" in text and "scored: 37 scenarios" in text
    assert "CONFORMANT: " in text
    suites = ElementTree.parse(junit).getroot()
    assert suites.tag == "testsuites" and [suite.get("name") for suite in suites] == ["mcp-conformance-2026-07-28", "mcp-requirements-2026-07-28"]
    cases = {case.get("name"): case for case in suites[1].iter("testcase")}
    assert list(cases) == [row["id"] for row in rows]
    assert cases["caching"].find("failure") is None and cases["caching"].find("skipped") is None
    assert cases["input-required-result-multi-round"].find("skipped") is not None  # its tools ask only once: untested, never passed
    assert by_id["input-required-result-multi-round"]["verdict"] == "not_testable" and by_id["tools-call-with-progress"]["verdict"] == "pass"
    assert by_id["input-required-result-tampered-state"]["verdict"] == "beyond_spec"
    assert "beyond spec" in text and cases["input-required-result-tampered-state"].find("skipped") is not None
    assert cli_main(argv) == 0
    assert "requirements" not in json.loads(out.read_text())  # without the option the report is as it was


def test_an_unknown_requirement_revision_is_refused_in_one_line_before_any_server_starts(capsys):
    assert cli_main(["conformance", "--reference", "--requirements", "2025-11-25"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no requirement set for that revision" in err


def test_the_docs_table_shows_every_scenario_with_its_coverage_and_checks():
    docs = (ROOT / "docs" / "conformance.md").read_text()
    for requirement in load("2026-07-28").requirements:
        scored = "yes" if requirement.scored else f"no ({requirement.reason})"
        checks = ", ".join(f"`{check}`" for check in requirement.checks) or "—"
        assert f"| `{requirement.id}` | {scored} | {requirement.coverage} | {checks} |" in docs, requirement.id


@pytest.mark.skipif(not (INSTALLED / "dist" / "index.js").exists(), reason="the official suite is not installed (npm ci in bench/official_suite)")
def test_side_by_side_with_the_official_suite_on_the_reference_server_never_disagrees_on_a_scenario_both_judge_alike():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "bench" / "official_side_by_side.py")], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-500:]
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[2:] if line and line.split()[0] in {r.id for r in load("2026-07-28").requirements}}
    assert set(rows) == {r.id for r in load("2026-07-28").requirements}
    assert not [line for line in rows.values() if "DISAGREE" in line]
    for requirement in load("2026-07-28").requirements:
        if requirement.coverage == "same":
            assert rows[requirement.id].endswith("agree"), rows[requirement.id]
