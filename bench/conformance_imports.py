"""Benchmark: what `evalcore conformance` imports, this checkout against an earlier revision, side by side.

Runs `python -X importtime -m evalcore conformance --url URL --runs 5 --no-db`
against the bundled reference server, alternately with this checkout's
evalcore and with the one at `--before` (a git revision, unpacked with `git
archive` into a scratch folder and compiled to bytecode first, as an install
does), `--repeat` times each. Prints, per side, the median of the summed
cumulative import time of the top-level imports, the number of modules loaded
and the heaviest top-level imports; then the ratio after / before and the load
average. Import times are wall time: a loaded machine inflates both sides, and
the ratio of runs taken in turns is the figure to read.

Run: `.venv/bin/python bench/conformance_imports.py --before REV [--repeat 9]`.
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from user_environment import user_environment  # noqa: E402  (bench/, beside this script)

from evalcore.mcp.reference import running_reference_server  # noqa: E402

IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(?P<cumulative>\d+) \|(?P<indent> *)(?P<module>\S+)")


def unpack(revision: str, into: Path) -> Path:
    archive = into / "before.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", revision, "evalcore"], cwd=ROOT, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def measure(tree: Path, url: str) -> tuple[int, dict[str, int], int]:
    """(summed cumulative µs of the top-level imports, {top-level module: cumulative µs}, modules loaded)."""
    command = [sys.executable, "-X", "importtime", "-m", "evalcore", "conformance", "--url", url, "--runs", "5", "--no-db"]
    done = subprocess.run(command, cwd=tree, env={**user_environment(), "PYTHONPATH": str(tree)}, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"evalcore conformance in {tree} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    top: dict[str, int] = {}
    modules = 0
    for match in IMPORT_LINE.finditer(done.stderr):
        modules += 1
        if len(match["indent"]) == 1:
            top[match["module"]] = int(match["cumulative"])
    return sum(top.values()), top, modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--top", type=int, default=6, help="heaviest top-level imports to list per side (default 6)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="conformance-imports-") as scratch, running_reference_server() as url:
        trees = {"before": unpack(args.before, Path(scratch)), "after": ROOT}
        for tree in trees.values():
            compileall.compile_dir(tree / "evalcore", quiet=1)
        totals: dict[str, list[int]] = {side: [] for side in trees}
        tops: dict[str, dict[str, list[int]]] = {side: {} for side in trees}
        modules: dict[str, int] = {}
        load_before = os.getloadavg()[0]
        for round_no in range(args.repeat):
            for side in list(trees) if round_no % 2 == 0 else list(reversed(trees)):
                total, top, modules[side] = measure(trees[side], url)
                totals[side].append(total)
                for module, micros in top.items():
                    tops[side].setdefault(module, []).append(micros)
        load_after = os.getloadavg()[0]
    for side in trees:
        print(f"{side} ({args.before if side == 'before' else 'this checkout'}): {statistics.median(totals[side]) / 1000:.0f} ms, {modules[side]} modules")
        heaviest = sorted(tops[side].items(), key=lambda item: -statistics.median(item[1]))[: args.top]
        for module, micros in heaviest:
            print(f"    {statistics.median(micros) / 1000:7.1f} ms  {module}")
    ratio = statistics.median(totals["after"]) / statistics.median(totals["before"])
    print(f"after / before: {ratio:.2f} (medians of {args.repeat} runs each, taken in turns)")
    print(f"load average {load_before:.2f} at start, {load_after:.2f} at end ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
