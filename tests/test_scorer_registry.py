"""A new scorer is one file: dropped into the scorers package, it is scored, measured, reported, gated and listed with no
other change (docs/metrics.md's worked example)."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

import evalcore.scoring.scorers as scorers_package
from evalcore.behaviour.report import build_report
from evalcore.golden.model import GoldenCase, GoldenSet
from evalcore.models.types import ModelSpec, ToolCall
from evalcore.records import AttemptRecord, ToolExecution
from evalcore.scoring import registry
from evalcore.scoring.attempt import score_attempt
from evalcore.scoring.gate import compare_to_baseline

NEW_SCORER = '''
"""The worked example of docs/metrics.md: every number in the final answer came from a tool result."""

from __future__ import annotations

import json
import re

from evalcore.scoring.registry import not_applicable, scorer, verdict_score

ID = "grounded_numbers"


@scorer(ID, title="numbers grounded in tool results", metric="grounded_number_rate", applies_to=lambda case: not case.is_negative,
        after=("execution",))
def grounded_numbers(attempt, earlier):
    numbers = set(re.findall(r"\\d+(?:\\.\\d+)?", attempt.final_text or ""))
    if not numbers:
        return not_applicable(ID)
    seen = json.dumps([e.result for e in attempt.executions])
    missing = sorted(n for n in numbers if n not in seen)
    return verdict_score(ID, not missing, [f"numbers not in any tool result: {', '.join(missing)}"] if missing else [])
'''


@pytest.fixture
def one_more_scorer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The scorers package with one more module in it (a second folder on its path), for this test only."""
    (tmp_path / "grounded_numbers.py").write_text(textwrap.dedent(NEW_SCORER))
    registry.registered()  # every bundled scorer registered in the real registry first, so the copy below has them all
    monkeypatch.setattr(scorers_package, "__path__", [*scorers_package.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))
    monkeypatch.setattr(registry, "_ordered", None)
    yield registry.get("grounded_numbers")
    sys.modules.pop("evalcore.scoring.scorers.grounded_numbers", None)
    importlib.invalidate_caches()


def _record(case: GoldenCase, attempt: int, answer: str) -> AttemptRecord:
    call = ToolCall("c1", "get_weather", {"city": "Paris"})
    execution = ToolExecution(call, {"content": [{"type": "text", "text": "18 C"}], "structuredContent": {"temp": 18}}, None, False, 3.0, (1,))
    score = score_attempt(case, [call], executions=[execution], final_text=answer, stop_reason="final", model_turns=2)
    return AttemptRecord("sim/m", case.id, attempt, "h", case.kind, True, None, score, (call,), answer, "final", None, 5.0, 1, 1, 0.0, 0, "{}")


def test_a_scorer_in_one_new_file_reaches_every_consumer(one_more_scorer):
    scorer = one_more_scorer
    assert (scorer.metric, scorer.gates, scorer.direction, scorer.title) == ("grounded_number_rate", True, "higher", "numbers grounded in tool results")
    ids = [s.id for s in registry.registered()]
    assert ids.index("grounded_numbers") > ids.index("execution")  # it runs after what it reads
    assert ("grounded_number_rate", "higher") in registry.regression_metrics()

    case = GoldenCase("weather", "What's the weather in Paris?", "get_weather", {"city": "Paris"})
    records = [_record(case, 1, "It is 18 C."), _record(case, 2, "It is 25 C.")]
    assert records[0].score.passed and not records[1].score.passed  # it gates: an ungrounded number fails the attempt
    assert "numbers not in any tool result: 25" in records[1].score.reasons

    run = {
        "run_id": "r1", "started_at": "2026-12-01T00:00:00+00:00", "run_date": "2026-12-01", "runs": 2, "golden_path": "g.yaml",
        "golden_hash": "g", "server_target": "t", "server_name": None, "server_fingerprint": "f",
    }  # fmt: skip
    report, metric_sets = build_report(run, GoldenSet(Path("g.yaml"), (case,), "g"), records, (ModelSpec("sim/m"),))
    document = report.to_json()
    assert document["models"][0]["metrics"]["grounded_number_rate"] == 0.5
    assert document["models"][0]["cases"][0]["scores"]["grounded_number_rate"] == 0.5
    assert any(s.values.get("grounded_number_rate") == 0.5 for s in metric_sets if s.scope == "case")  # what the store keeps
    assert "grounded_numbers" in document["scorers"]
    baseline = {**document, "models": [{**document["models"][0], "metrics": {**document["models"][0]["metrics"], "grounded_number_rate": 1.0}}]}
    result = compare_to_baseline({**document, "incomplete": None}, baseline)
    assert [r.metric for r in result.regressions] == ["grounded_number_rate"]


def test_scorers_run_after_what_they_read_and_a_missing_dependency_is_named():
    ids = [s.id for s in registry.registered()]
    assert ids.index("arguments") > ids.index("selection") and ids.index("judge") > ids.index("execution")
    broken = {"a": registry.Scorer("a", "a", "score:a", registry.always, True, "higher", True, ("nowhere",), lambda attempt, earlier: None)}  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match=r"a \(after nowhere\)"):
        registry._dependency_order(broken)


def test_no_list_of_metric_names_is_kept_outside_the_registry():
    root = Path(registry.__file__).resolve().parents[1]
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in ("GATED_METRICS", "QUALITY_METRICS", "SCORER_METRICS", "METRIC_NAMES"):
            assert name not in text, f"{path.relative_to(root)} keeps its own list of metric names ({name})"
