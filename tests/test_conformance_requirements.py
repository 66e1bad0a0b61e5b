"""The map of the official 2026-07-28 requirement set onto our checks names exactly the official server scenarios.

The ids come from the pinned npm package (bench/official_suite/, `npm ci` there) when it is installed, else from
the committed copy tests/official_requirements_2026-07-28.txt, which states its source and version.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalcore.conformance.registry import all_checks
from evalcore.conformance.requirements import REVISIONS, load
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
        assert (requirement.coverage == "missing") == (not requirement.checks), requirement.id


def test_an_unknown_revision_is_a_one_line_config_error():
    assert REVISIONS == ("2026-07-28",)
    with pytest.raises(ConfigError, match="no requirement set"):
        load("2025-11-25")
