"""Inputs for the judge-agreement tests: a run of a scripted model graded by `sim/judge` whose verdicts the test chooses,
and label files with the human labels it chooses. Not a test module: test modules import it, never each other."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalcore.cli import main

# One case the reference server answers without a tool; sim/judge passes an answer that shares at least half of the
# case rubric's content words (greets, hello, welcome) and fails "Goodbye."
GOLDEN = """\
rubric: rubric.md
cases:
  - id: greet
    prompt: "Say hi to me."
    expect_tool: null
    rubric: "The answer greets the user with hello and welcome."
"""
PASSING, FAILING = "Hello and welcome!", "Goodbye."


@dataclass(frozen=True)
class JudgedRun:
    db: Path
    run_id: str
    model: str
    report: dict  # the run's JSON report
    out: str  # what the run printed


def write_golden(directory: Path, rubric: str = "Judge whether the user was greeted.") -> Path:
    (directory / "rubric.md").write_text(rubric)
    golden = directory / "judged.yaml"
    golden.write_text(GOLDEN)
    return golden


def judged_run(directory: Path, reference_url: str, verdicts: Sequence[bool], *, name: str = "judged", extra: Sequence[str] = ()) -> JudgedRun:
    """A run of one case, attempt i answered so that sim/judge passes it exactly when verdicts[i - 1]. The model is the
    same (one script file, rewritten) in every run of a folder, so later runs are gated against earlier ones."""
    golden = directory / "judged.yaml"
    if not golden.exists():
        write_golden(directory)
    failing = {i: {"text": FAILING} for i, ok in enumerate(verdicts, start=1) if not ok}
    script = directory / "model-script.yaml"
    script.write_text(json.dumps({"cases": {"greet": {"no_call": True, "text": PASSING, "attempts": failing}}}))
    model = f"sim/script:{script}"
    db = directory / "evals.duckdb"
    out = directory / f"{name}-report.json"
    argv = ["run", "--golden", str(golden), "--models", model, "--judge", "sim/judge", "--runs", str(len(verdicts))]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main([*argv, "--url", reference_url, "--db", str(db), "--out", str(out), *extra])
    assert code in (0, 1), printed.getvalue()
    report = json.loads(out.read_text())
    return JudgedRun(db, report["runId"], model, report, printed.getvalue())


def label_file(path: Path, run: JudgedRun, labels: Sequence[bool], *, first_attempt: int = 1) -> Path:
    """A CSV labelling attempts first_attempt, first_attempt + 1, ... of `run` pass (True) or fail (False)."""
    lines = ["run_id,model,case_id,attempt,label,labeller,note"]
    lines += [f"{run.run_id},{run.model},greet,{first_attempt + i},{'pass' if ok else 'fail'},tester," for i, ok in enumerate(labels)]
    path.write_text("\n".join(lines) + "\n")
    return path


def pairs(judge_pass_human_pass: int, judge_pass_human_fail: int, judge_fail_human_pass: int, judge_fail_human_fail: int) -> tuple[list[bool], list[bool]]:
    """Judge verdicts and human labels, attempt by attempt, with these confusion counts."""
    cells = [(True, True)] * judge_pass_human_pass + [(True, False)] * judge_pass_human_fail
    cells += [(False, True)] * judge_fail_human_pass + [(False, False)] * judge_fail_human_fail
    return [judge for judge, _ in cells], [human for _, human in cells]


def labelled_run(directory: Path, reference_url: str) -> JudgedRun:
    """Six judged attempts (the judge passes 1-4, fails 5-6); a person labelled 1 pass, 2 fail ("no greeting"), 5 fail."""
    run = judged_run(directory, reference_url, [True, True, True, True, False, False])
    given = ((1, "pass", ""), (2, "fail", "no greeting"), (5, "fail", ""))
    lines = ["run_id,model,case_id,attempt,label,labeller,note"]
    lines += [f"{run.run_id},{run.model},greet,{attempt},{label},ann,{note}" for attempt, label, note in given]
    (directory / "labels.csv").write_text("\n".join(lines) + "\n")
    assert main(["labels", "import", str(directory / "labels.csv"), "--db", str(run.db)]) == 0
    return run
