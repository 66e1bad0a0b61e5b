"""No process outlives its run: children die with a `kill -9`ed parent, and leftovers are found and stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.processes import OWNER_VARIABLE, leftovers, signals_held
from tests.waiting import wait_for_exit, wait_until

ROOT = Path(__file__).resolve().parents[1]
START_DEADLINE_S = 300.0  # generous: a busy 2-core machine imports slowly; the loop ends as soon as the child exists
DEATH_DEADLINE_S = 120.0  # the children go within milliseconds; without the lifeline they never would


def _alive(pid: int) -> bool:
    """Running, not a zombie (a killed child waits for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _descendants(pid: int) -> dict[int, str]:
    """pid -> command line of every process below `pid`, from /proc."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in found:
                found[child] = commands.get(child, "")
                frontier.append(child)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
@pytest.mark.parametrize(
    ("target", "server_marker"),
    [
        (["--server", "reference"], "evalcore.demo_server --http"),
        (["--stdio", f"{sys.executable} -m evalcore.demo_server --stdio"], "evalcore.demo_server --stdio"),
    ],
    ids=["reference-http", "stdio"],
)
def test_kill_9_of_a_run_takes_every_child_with_it(tmp_path: Path, target: list[str], server_marker: str) -> None:
    command = [
        sys.executable, "-m", "evalcore", "run", *target, "--models", "sim/lexical", "--runs", "20", "--db", str(tmp_path / "evals.duckdb"),
        "--concurrency", "8",
    ]  # fmt: skip
    run = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def server_started() -> bool:  # no event announces a grandchild: the process tree is read until it shows one
        if run.poll() is not None:
            raise AssertionError(f"the run ended before starting a server: {run.stderr.read().decode() if run.stderr else ''}")
        return any(server_marker in line for line in _descendants(run.pid).values())

    try:
        wait_until(server_started, what="the run starting its server", deadline_s=START_DEADLINE_S, interval_s=0.02)
        children = _descendants(run.pid)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    assert children
    try:
        for pid, line in children.items():  # each exit is an event (a pidfd turns readable), awaited one after the other
            wait_for_exit(pid, what=f"{line!r}, after the run was killed", deadline_s=DEATH_DEADLINE_S)
    finally:
        for pid in [pid for pid in children if _alive(pid)]:  # never leave them behind, even when the test fails
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from /proc")
def test_runs_lists_and_stops_what_a_dead_evalcore_process_left_running(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer exists: the "crashed" owner
    orphan = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, env={**os.environ, OWNER_VARIABLE: str(gone.pid)})
    try:
        wait_until(lambda: any(leftover.pid == orphan.pid for leftover in leftovers()), what=f"pid {orphan.pid} listed as a leftover")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        db = str(tmp_path / "evals.duckdb")
        listed = subprocess.run([sys.executable, "-m", "evalcore", "runs", "--db", db], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert listed.returncode == 0 and f"pid {orphan.pid} (started by pid {gone.pid})" in listed.stdout
        assert orphan.poll() is None
        stopped = subprocess.run(
            [sys.executable, "-m", "evalcore", "runs", "--db", db, "--stop-leftovers"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert stopped.returncode == 0 and "stopped them" in stopped.stdout
        assert orphan.wait(timeout=120) == -signal.SIGKILL
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()


_ARMED: list[bool] = []  # whether the at-fork step below plays a Ctrl-C (registered once; a fork handler cannot be removed)
os.register_at_fork(after_in_parent=lambda: signal.raise_signal(signal.SIGINT) if _ARMED else None)


def test_a_ctrl_c_landing_in_a_spawns_at_fork_step_is_delivered_after_the_spawn() -> None:
    """A spawn with a pre-exec step runs Python's at-fork handlers, and CPython swallows what they raise: a Ctrl-C
    arriving then was lost (the run went on uncancelled, logging's lock left taken). Held, it is delivered after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    _ARMED.append(True)
    try:
        with pytest.raises(KeyboardInterrupt), signals_held():
            subprocess.run(["true"], preexec_fn=lambda: None, check=True)
            _ARMED.clear()
            reached = True
        assert reached  # the spawn finished; the interrupt came after the block
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        _ARMED.clear()
        signal.signal(signal.SIGINT, previous)


def test_overlapping_spawns_put_the_handlers_back_once_the_last_ends() -> None:
    """Spawns on one event loop overlap without nesting: the handlers come back when the last one ends, not before."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        first, second = signals_held(), signals_held()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # still held: the second spawn is under way
        second.__exit__(None, None, None)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, previous)
