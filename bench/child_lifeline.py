"""Benchmark: how long the processes of an `evalcore run` outlive a `kill -9` of it (Linux: reads /proc).

For each target (the reference server over HTTP, the same server over stdio),
`--kills` times: start `python -m evalcore run` on sim/lexical, wait until its
server process exists (plus `--settle` seconds, so the run is well under
way), SIGKILL the run, then poll every 5 ms until every process that was below
it is gone. Prints, per target, the median and the worst time to the last
death, and any process that was still running after `--deadline` seconds
(killed then, so nothing is left behind).
Run: `.venv/bin/python bench/child_lifeline.py [--kills 10 --settle 0 --deadline 30]`.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _descendants(pid: int) -> dict[int, str]:
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:80]
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


def one_kill(target: list[str], marker: str, settle: float, deadline: float, db: Path) -> tuple[float, dict[int, str]]:
    command = [sys.executable, "-m", "evalcore", "run", *target, "--models", "sim/lexical", "--runs", "50", "--db", str(db)]
    run = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    give_up = time.monotonic() + 300
    while not any(marker in line for line in _descendants(run.pid).values()) and time.monotonic() < give_up and run.poll() is None:
        time.sleep(0.01)
    time.sleep(settle)
    children = _descendants(run.pid)
    run.send_signal(signal.SIGKILL)
    run.wait()
    killed = time.monotonic()
    while any(_alive(pid) for pid in children) and time.monotonic() - killed < deadline:
        time.sleep(0.005)
    elapsed = time.monotonic() - killed
    survivors = {pid: line for pid, line in children.items() if _alive(pid)}
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    return elapsed, survivors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--settle", type=float, default=0.0, help="seconds between the server's start and the kill")
    parser.add_argument("--deadline", type=float, default=30.0)
    args = parser.parse_args()
    targets = {
        "reference server (HTTP)": (["--server", "reference"], "evalcore.demo_server --http"),
        "stdio server": (["--stdio", f"{sys.executable} -m evalcore.demo_server --stdio"], "evalcore.demo_server --stdio"),
    }
    with tempfile.TemporaryDirectory() as folder:
        for label, (target, marker) in targets.items():
            times, left = [], []
            for kill in range(args.kills):
                elapsed, survivors = one_kill(target, marker, args.settle, args.deadline, Path(folder) / f"{kill}.duckdb")
                times.append(elapsed)
                left.extend(survivors.values())
            print(
                f"{label:<26} last child gone after kill -9: median {statistics.median(times) * 1000:.0f} ms, "
                f"worst {max(times) * 1000:.0f} ms over {args.kills} kills; still running after {args.deadline:g} s: {left or 'none'}"
            )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
