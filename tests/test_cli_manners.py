"""The command line behaves like the tools its users know: pipes, --help, progress in CI logs, `make run PORT=`."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli import EXIT_BROKEN_PIPE, build_parser
from evalcore.commands.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
SUBCOMMANDS = ("conformance", "run", "compare", "gate", "runs", "drift", "demo", "dashboard", "migrate-scan")


def _evalcore(*args: str, stdout: int | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "evalcore", *args], stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, cwd=cwd, timeout=120
    )


@pytest.mark.parametrize("args", [["runs", "--db", "{db}"], ["conformance", "--list"]])
def test_a_closed_pipe_ends_quietly(args, tmp_path):
    """`evalcore runs | head`: the reader went away; no BrokenPipeError traceback, the exit status a shell gives SIGPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write, as `head` is after its lines
    try:
        done = _evalcore(*(arg.format(db=tmp_path / "evals.duckdb") for arg in args), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == EXIT_BROKEN_PIPE == 141


def test_every_subcommand_is_listed_in_the_parser():
    parser = build_parser()
    choices = next(action.choices for action in parser._actions if action.dest == "command")
    assert tuple(choices) == SUBCOMMANDS


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_subcommand_help_says_what_it_does(command, capsys):
    from evalcore.cli import main

    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    summary = out.split("\n\n")[1].strip()  # argparse: usage, blank line, description
    assert not summary.startswith(("options:", "positional arguments:")), out
    assert len(summary) > 20 and summary.endswith("."), summary


def test_help_names_the_command_as_it_was_started():
    assert _evalcore("--help", stdout=subprocess.PIPE).stdout.startswith("usage: python -m evalcore ")
    assert build_parser().prog == "evalcore"


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_is_a_plain_line_every_few_seconds():
    stream, clock = io.StringIO(), _Clock()
    progress = Progress("running", stream=stream, interval_s=5.0, clock=clock)
    for seconds, done in [(0.5, 1), (2.0, 2), (6.0, 3), (7.0, 4), (11.5, 5), (12.0, 10)]:
        clock.now = 100.0 + seconds
        progress(done, 10)
    assert stream.getvalue().splitlines() == [
        "running: 3/10 attempts · 0.5/s",
        "running: 5/10 attempts · 0.4/s",
        "running: 10/10 attempts · 0.8/s",
    ]
    assert "\r" not in stream.getvalue()


def test_progress_on_a_terminal_redraws_one_bar():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream, clock = Terminal(), _Clock()
    progress = Progress("running", stream=stream, clock=clock)
    for done in (1, 2, 4):
        clock.now += 1
        progress(done, 4)
    text = stream.getvalue()
    assert text.count("\r") == 3 and text.endswith("] 4/4 attempts · 1.3/s\n")
    assert "[#######" in text


def test_a_run_in_ci_logs_its_progress(tmp_path):
    done = _evalcore("run", "--models", "sim/lexical", "--runs", "1", "--db", str(tmp_path / "evals.duckdb"), stdout=subprocess.PIPE)
    assert "running: 28/28 attempts" in done.stderr, done.stderr


def test_make_run_takes_a_port():
    done = subprocess.run(["make", "-n", "run", "PORT=8612"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "-m evalcore dashboard --db data/evals.duckdb --port 8612" in done.stdout
    default = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "--port 8501" in default.stdout


def test_dashboard_without_its_extra_says_how_to_install_it(tmp_path):
    """A CLI-only install has no streamlit: one line that names the extra, not a ModuleNotFoundError."""
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['streamlit'] = None  # as if it were not installed\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "dashboard", "--db", str(tmp_path / "e.duckdb"), "--no-demo"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "error: the dashboard needs its extra libraries: pip install 'evalcore[dashboard]' (streamlit, plotly, pandas)"
