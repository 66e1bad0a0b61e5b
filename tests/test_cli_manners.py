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
from evalcore.models.limits import CallCounters

ROOT = Path(__file__).resolve().parents[1]
SUBCOMMANDS = (
    "conformance",
    "tools",
    "draft",
    "review",
    "run",
    "merge",
    "replay-calls",
    "compare",
    "perturb",
    "gate",
    "baseline",
    "labels",
    "judge-agreement",
    "runs",
    "drift",
    "demo",
    "dashboard",
    "ci-summary",
    "migrate-scan",
)


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


GREET_COMMAND = '''"""Command: `evalcore greet` — a command added as one module."""

from __future__ import annotations

import argparse

from evalcore.commands.options import db_option

NAME = "greet"
SUMMARY = "greet someone by name"
ORDER = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default="world", help="who to greet")
    db_option(parser, "DuckDB store it does not open")


def command(args: argparse.Namespace) -> int:
    print(f"hello, {args.name} ({args.db})")
    return 3
'''


@pytest.fixture
def more_commands(tmp_path, monkeypatch):
    """A directory on the `evalcore.commands` package's path; the modules imported from it are forgotten afterwards."""
    import evalcore.commands

    directory = tmp_path / "more_commands"
    directory.mkdir()
    monkeypatch.setattr(evalcore.commands, "__path__", [*evalcore.commands.__path__, str(directory)])
    yield directory
    for path in directory.glob("*.py"):
        sys.modules.pop(f"evalcore.commands.{path.stem}", None)
        if hasattr(evalcore.commands, path.stem):
            delattr(evalcore.commands, path.stem)
    sys.path_importer_cache.pop(str(directory), None)


def test_a_new_command_is_one_module(more_commands, capsys):
    """A module in evalcore.commands with NAME, SUMMARY, ORDER, add_arguments and command is a command; cli.py is not touched."""
    from evalcore.cli import main

    (more_commands / "greet_for_test.py").write_text(GREET_COMMAND, encoding="utf-8")
    (more_commands / "shared_for_test.py").write_text('"""Not a command: no NAME."""\n\nGREETING = "hello"\n', encoding="utf-8")
    choices = next(action.choices for action in build_parser()._actions if action.dest == "command")
    assert tuple(choices) == (*SUBCOMMANDS, "greet")
    assert main(["greet", "--name", "Ada"]) == 3
    assert capsys.readouterr().out == "hello, Ada (data/evals.duckdb)\n"
    assert main(["greet", "--help"]) == 0
    assert "Greet someone by name.\n" in capsys.readouterr().out
    assert main(["greet", "--nme", "Ada"]) == 2
    assert capsys.readouterr().err == "error: evalcore: unrecognized arguments: --nme Ada (see --help)\n"


def test_building_the_parser_imports_no_command_s_machinery():
    """Every command module is imported to build the parser: their heavy parts wait until the command runs."""
    script = "import sys; from evalcore.cli import build_parser; build_parser(); print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert "evalcore.commands.run" in loaded and "evalcore.commands.conformance" in loaded
    heavy = ("asyncio", "yaml", "duckdb", "litellm", "mcp", "httpx", "evalcore.conformance", "evalcore.behaviour", "evalcore.models", "evalcore.store")
    assert [name for name in loaded if name in heavy or name.startswith(tuple(f"{h}." for h in heavy))] == []


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


def _progress(stream: io.StringIO, clock: _Clock, counters: CallCounters | None = None, **options: float) -> Progress:
    return Progress("running", stream=stream, clock=clock, counters=counters or CallCounters(), background=False, **options)  # type: ignore[arg-type]


def test_progress_off_a_terminal_is_a_plain_line_every_few_seconds():
    stream, clock = io.StringIO(), _Clock()
    progress = _progress(stream, clock, interval_s=5.0)
    for seconds, done in [(0.5, 1), (2.0, 2), (6.0, 3), (7.0, 4), (11.5, 5), (12.0, 10)]:
        clock.now = 100.0 + seconds
        progress(done, 10)
    assert stream.getvalue().splitlines() == [
        "running: 3/10 attempts · 30.0/min · ETA 14s · 0 calls, 0 retries, 0 errors",
        "running: 5/10 attempts · 26.1/min · ETA 12s · 0 calls, 0 retries, 0 errors",
        "running: 10/10 attempts · 50.0/min · 0 calls, 0 retries, 0 errors",
    ]
    assert "\r" not in stream.getvalue()


def test_progress_on_a_terminal_redraws_one_bar():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream, clock = Terminal(), _Clock()
    progress = _progress(stream, clock)
    for done in (1, 2, 4):
        clock.now += 1
        progress(done, 4)
    text = stream.getvalue()
    assert text.count("\r") == 3 and text.endswith("] 4/4 attempts · 1.3/s · 0 calls, 0 retries, 0 errors\x1b[K\n")
    assert "[#######" in text and "ETA 2s" in text


def test_a_slow_run_shows_attempts_per_minute_and_its_calls_never_0_0_per_second():
    """A rate-limited run: one attempt in 40 s, calls retried and waiting; the line says so, per minute."""
    stream, clock, counters = io.StringIO(), _Clock(), CallCounters(calls=5, retries=1)  # what the process did before the run
    progress = _progress(stream, clock, counters, interval_s=10.0)
    counters.calls, counters.retries, counters.rate_limited, counters.errors, counters.waited_s = 14, 7, 5, 1, 95.0
    clock.now += 40
    progress(1, 300)
    assert stream.getvalue().splitlines() == [
        "running: 1/300 attempts · 1.5/min · ETA 3h19m · 9 calls, 6 retries (5 rate-limited), 1 errors, waited 1m35s on provider limits"
    ]
    assert "0.0/s" not in stream.getvalue()


def test_a_stalled_run_still_logs_a_line_every_interval():
    """No attempt finishes (a provider asked to wait): the heartbeat prints the counts anyway, once per interval."""
    stream, clock, counters = io.StringIO(), _Clock(), CallCounters()
    progress = _progress(stream, clock, counters, interval_s=10.0)
    clock.now += 10
    progress(2, 10)
    for seconds, retries in ((5, 1), (11, 2), (25, 3)):
        clock.now = 110.0 + seconds
        counters.retries = retries
        progress.heartbeat()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[1].startswith("running: 2/10 attempts") and "2 retries" in lines[1] and "3 retries" in lines[2]
    progress(10, 10)
    progress.heartbeat()  # after the end: nothing more
    assert len(stream.getvalue().splitlines()) == 4


def test_the_heartbeat_thread_ends_with_the_run():
    stream = io.StringIO()
    progress = Progress("running", stream=stream, interval_s=3600.0, counters=CallCounters())
    progress(1, 2)
    assert progress.thread is not None and progress.thread.is_alive()
    progress(2, 2)
    progress.thread.join(timeout=60)
    assert not progress.thread.is_alive()


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
    assert done.stderr.strip() == "error: the dashboard needs its extra libraries: pip install 'mcp-evalcore[dashboard]' (streamlit, plotly, pandas)"
