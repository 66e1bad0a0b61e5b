"""The composite action (action.yml) run whole, step by step, on an emulated runner (tests/action_runner.py).

The job has the user's own virtual environment active: a `python` whose packages include a server module
(`user_server`) that no other Python has. The action must run that server with the job's `python`, install
evalcore somewhere of its own, and leave the job's `python`, PATH and packages as it found them; every failure
must reach GitHub as an `::error::` annotation with its reason.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action_runner import BASE_PYTHON, JOB_SITE, ROOT, STAND_INS, EmulatedRunner, action_checkout

JOB_STATE = (
    'echo "python=$(command -v python)"; echo "PATH=$PATH"; '
    "python -c 'import sys, importlib.metadata as m; print(sys.executable); "
    'print(sorted((d.metadata["Name"], d.version) for d in m.distributions()))\''
)


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory) -> Path:
    """The user's venv: this machine's packages, plus a module `user_server` only it has (the reference server)."""
    venv = tmp_path_factory.mktemp("user") / "venv"
    subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "job_packages.pth").write_text(f"{JOB_SITE}\n{ROOT}\n", encoding="utf-8")
    (site / "user_server.py").write_text('import runpy\nrunpy.run_module("evalcore.demo_server", run_name="__main__")\n', encoding="utf-8")
    return venv


@pytest.fixture(scope="module")
def action_path(tmp_path_factory) -> Path:
    """The action's files as GitHub fetches them: what is tracked, without .git (evalcore installs from these)."""
    return action_checkout(tmp_path_factory.mktemp("action"))


@pytest.fixture
def job(tmp_path, user_venv, action_path):
    return lambda **kwargs: _runner(tmp_path, user_venv, action_path=action_path, **kwargs)


def _runner(tmp_path: Path, user_venv: Path, **kwargs) -> EmulatedRunner:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "RUNNER_", "PIP_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(
        PATH=f"{user_venv / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
        VIRTUAL_ENV=str(user_venv),
        # this machine installs offline: what pip needs is in the tool cache Python's venvs already
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
    )
    return EmulatedRunner(tmp_path, job_env=env, **kwargs)


def _job_state(runner: EmulatedRunner) -> str:
    done = runner.job_step(JOB_STATE)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _one_error_with(result, *needles: str) -> None:
    errors = [a for a in result.errors() if a.title is None]
    assert len(errors) == 1, result.log
    assert all(needle in errors[0].message for needle in needles), errors[0].message


def test_conformance_runs_the_server_with_the_jobs_python_and_leaves_the_job_as_it_found_it(job, user_venv):
    runner = job()
    before = _job_state(runner)
    assert str(user_venv) in before

    result = runner.run_action({"stdio": "python -m user_server --stdio", "runs": "1"}, STAND_INS)

    assert not result.failed, result.log
    assert _job_state(runner) == before  # python, PATH and installed packages
    assert "pythonLocation" not in runner.env
    assert result.outputs["exit-code"] == "0" and result.outputs["verdict"] == "conformant" and result.outputs["passed"] == "true"
    assert (runner.workspace / result.outputs["junit"]).is_file() and (runner.workspace / result.outputs["report"]).is_file()
    assert result.errors() == []
    assert "✅ **CONFORMANT**" in runner.summary.read_text(encoding="utf-8")
    assert (runner.artifacts / "1" / "evalcore-reports" / "conformance.xml").is_file()
    evalcore = runner.temp / "evalcore-venv" / "bin" / "evalcore"
    assert evalcore.is_file() and "evalcore" not in runner.job_step("pip list 2>/dev/null || true; command -v evalcore || true").stdout


def test_a_server_published_on_pypi_runs_in_the_users_venv_as_the_readme_writes_it(job, user_venv):
    """`mcp-server-time` from PyPI (nobody here wrote it), started with the job's own `python`, as a user's job would."""
    runner = job()
    before = _job_state(runner)
    assert "'mcp-server-time'" in before  # the user's venv has it; the action's own venv must not be what runs it
    result = runner.run_action({"stdio": "python -m mcp_server_time --local-timezone UTC", "runs": "1"}, STAND_INS)
    assert not result.failed and result.outputs["exit-code"] == "0" and result.outputs["verdict"] == "conformant", result.log
    report = json.loads((runner.workspace / result.outputs["report"]).read_text(encoding="utf-8"))
    assert report["server"]["name"].startswith("mcp-time ")
    assert _job_state(runner) == before


def test_a_defective_server_fails_with_the_verdict_and_each_failing_check_annotated(tmp_path, job):
    runner = job()
    result = runner.run_action({"stdio": "python -m user_server --stdio --defect no_result_type", "runs": "1"}, STAND_INS)
    assert result.failed and result.outputs["exit-code"] == "1" and result.outputs["verdict"] == "not-conformant"
    _one_error_with(result, "NOT CONFORMANT to 2026-07-28", "result_type.present")
    titled = {a.title: a.message for a in result.errors() if a.title}
    assert "result_type.present" in titled and titled["result_type.present"].startswith("MUST fail: ")
    assert (runner.workspace / result.outputs["junit"]).is_file()


def test_a_server_that_crashes_at_start_is_explained_in_its_own_words_and_names_no_missing_file(tmp_path, job):
    runner = job()
    crash = "python -c " + shlex.quote("import sys; sys.stderr.write('CLOCK_ZONE is not set\\n'); sys.exit(3)")
    result = runner.run_action({"stdio": crash, "runs": "1"}, STAND_INS)
    assert result.failed and result.outputs["exit-code"] == "2"
    _one_error_with(result, "server process exited with code 3", "CLOCK_ZONE is not set")
    assert result.outputs["junit"] == "" and result.outputs["report"] == ""  # a test-report step's guard skips it
    assert result.step("Summarise").outcome == "skipped"


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ({}, "give exactly one of the inputs url and stdio"),
        ({"url": "http://127.0.0.1:9/mcp", "stdio": "python -m user_server --stdio"}, "give exactly one of the inputs url and stdio"),
        ({"stdio": "python -m user_server --stdio", "mode": "bogus"}, "mode is conformance or behaviour, got 'bogus'"),
        ({"stdio": "python -m user_server --stdio", "runs": "many"}, "many"),
        ({"stdio": "python -m user_server --stdio", "python-version": "2.7"}, "cannot make a virtual environment"),
        ({"stdio": "python -m user_server --stdio", "version": "0.0.1"}, "pip could not install mcp-evalcore==0.0.1: ERROR: "),
    ],
)
def test_each_bad_input_fails_with_one_error_line_saying_why(tmp_path, job, inputs, reason):
    runner = job()
    stand_ins = dict(STAND_INS)
    if inputs.get("python-version") == "2.7":
        stand_ins["actions/setup-python"] = lambda _runner, _given: {"python-path": str(tmp_path / "no-such-python")}
    result = runner.run_action(inputs, stand_ins)
    assert result.failed
    _one_error_with(result, reason)
    if reason.startswith(("give exactly one", "mode is")):  # found before anything is installed
        assert result.step("Install evalcore in its own virtual environment").outcome == "skipped"


def test_a_url_server_behind_a_header_gets_it_and_the_token_stays_out_of_the_log(tmp_path, job, echo_auth_server):
    url, token = echo_auth_server
    runner = job()
    runner.secrets.append(token)
    result = runner.run_action({"url": url, "header": "Authorization: Bearer ${EVAL_TOKEN}", "runs": "1"}, STAND_INS, step_env={"EVAL_TOKEN": token})
    assert result.outputs["report"] and token not in result.raw
    report = json.loads((runner.workspace / result.outputs["report"]).read_text(encoding="utf-8"))
    assert report["target"] == url and report["server"]["name"]  # it initialised: the server refuses any request without the header
    assert result.outputs["exit-code"] in ("0", "1") and (result.outputs["exit-code"] == "0" or result.errors())


def test_behaviour_on_a_pull_request_first_run_accepted_then_the_second_run_is_green(tmp_path, job):
    event = {"pull_request": {"number": 42, "head": {"sha": "feedc0ffee0123456789"}}}
    runner = job(event=event, event_name="pull_request")
    before = _job_state(runner)
    inputs = {"mode": "behaviour", "stdio": "python -m user_server --stdio", "runs": "1"}

    first = runner.run_action({**inputs, "accept-baseline": "true"}, STAND_INS)
    # sim/lexical misses case gates: the first run is no baseline by itself and stays red, but it is accepted
    assert first.failed and first.outputs["exit-code"] == "1", first.log
    _one_error_with(first, "NO BASELINE")
    first_run = json.loads((runner.workspace / first.outputs["report"]).read_text(encoding="utf-8"))["runId"]
    assert any(a.level == "notice" and first_run in a.message for a in first.annotations)
    assert (runner.artifacts / "1" / "evalcore-reports" / "evals.duckdb").is_file()  # the store, downloadable
    assert len(list(runner.cache.iterdir())) == 1

    (runner.workspace / ".evalcore" / "evals.duckdb").unlink()  # a fresh checkout: the store comes from the cache
    second = runner.run_action(inputs, STAND_INS)
    assert not second.failed and second.outputs["exit-code"] == "0", second.log
    assert second.errors() == []
    comment = (runner.workspace / second.outputs["comment"]).read_text(encoding="utf-8")
    assert f"✅ **PASS**: no gated metric dropped more than 0.02 below green run {first_run}" in comment
    assert "at feedc0ffee01" in comment and "| sim/lexical | pass_rate |" in comment
    first_comment = runner.summary.read_text(encoding="utf-8")
    assert "`evalcore baseline accept RUN_ID`" in first_comment and "\\`" not in first_comment
    assert _job_state(runner) == before


def test_the_action_keeps_its_interpreter_off_the_jobs_path():
    """The setup-python step must say `update-environment: false`: in a composite action its PATH change lasts."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    setup = [step for step in action["runs"]["steps"] if str(step.get("uses", "")).startswith("actions/setup-python")]
    assert setup and all(str(step["with"].get("update-environment")).lower() == "false" for step in setup)
    uses = [str(step["uses"]) for step in action["runs"]["steps"] if "uses" in step]
    assert all(re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", used) for used in uses), uses  # pinned by commit, not a movable tag
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "GITHUB_PATH" not in scripts and "GITHUB_ENV" not in scripts and sys.executable not in scripts


def test_a_legacy_only_server_fails_with_one_error_saying_so(tmp_path, job):
    runner = job()
    legacy = f"python {shlex.quote(str(ROOT / 'tests' / 'legacy_server.py'))} --stdio"
    result = runner.run_action({"stdio": legacy, "runs": "1"}, STAND_INS)
    assert result.failed and result.outputs["exit-code"] == "3" and result.outputs["verdict"] == "legacy-only", result.log
    _one_error_with(result, "LEGACY ONLY")


def _ci_example(name: str) -> str:
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    found = re.search(rf"<!-- ci-example: {name} -->\s*```yaml\n(.*?)```", page, re.S)
    assert found, f"docs/ci.md lost its {name} example"
    return found.group(1)


def test_behaviour_with_a_golden_set_the_model_meets_goes_green_with_no_accept_step(tmp_path, job, user_venv):
    """docs/ci.md's worked example, as written: its golden file, and its step's inputs with the job's own server."""
    import yaml

    runner = job(event={"pull_request": {"number": 7, "head": {"sha": "0123456789abcdef"}}}, event_name="pull_request")
    (runner.workspace / "my_tasks.yaml").write_text(_ci_example("golden"), encoding="utf-8")
    (step,) = [s for s in yaml.safe_load(_ci_example("job")) if "with" in s]
    inputs = {key: str(value) for key, value in step["with"].items()} | {"stdio": "python -m user_server --stdio"}
    first = runner.run_action(inputs, STAND_INS)
    assert not first.failed and first.outputs["exit-code"] == "0", first.log  # green at once: the baseline by itself
    assert first.errors() == []
    first_run = json.loads((runner.workspace / first.outputs["report"]).read_text(encoding="utf-8"))["runId"]
    second = runner.run_action(inputs, STAND_INS)
    assert not second.failed and second.outputs["exit-code"] == "0", second.log
    comment = (runner.workspace / second.outputs["comment"]).read_text(encoding="utf-8")
    assert f"✅ **PASS**: no gated metric dropped more than 0.02 below green run {first_run}" in comment
