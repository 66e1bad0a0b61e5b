"""Benchmark: wall time of the whole Layer 0 suite (5 runs) against the reference server on loopback.

Prints one line per transport with the median of several repetitions, the
number of requests sent and the time per request. Run: `make bench` or
`.venv/bin/python bench/conformance_speed.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalcore.conformance.context import RunContext  # noqa: E402
from evalcore.conformance.runner import run_suite  # noqa: E402
from evalcore.reference import running_reference_server  # noqa: E402
from evalcore.target import Target  # noqa: E402

_requests = 0
_original_request = RunContext.request


async def _counting_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
    global _requests
    _requests += 1
    return await _original_request(self, *args, **kwargs)


def measure(target: Target, repeat: int) -> tuple[float, int, bool]:
    global _requests
    times = []
    passed = True
    for _ in range(repeat):
        _requests = 0
        started = time.perf_counter()
        report = asyncio.run(run_suite(target, runs=5, tool_policy="all"))
        times.append(time.perf_counter() - started)
        passed = passed and report.passed
    return statistics.median(times), _requests, passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    RunContext.request = _counting_request  # type: ignore[method-assign]
    with running_reference_server() as url:
        measure(Target(url=url), 1)  # warm-up: imports, first connections
        seconds, requests, passed = measure(Target(url=url), args.repeat)
        per_request_ms = seconds / requests * 1000
        print(f"http : whole suite, 5 runs: {seconds:.3f} s median of {args.repeat} ({requests} requests, {per_request_ms:.2f} ms/req, conformant={passed})")
    stdio = Target(stdio=f"{sys.executable} -m evalcore.demo_server --stdio")
    seconds, requests, passed = measure(stdio, args.repeat)
    print(f"stdio: whole suite, 5 runs: {seconds:.3f} s median of {args.repeat} incl. process start ({requests} requests, conformant={passed})")


if __name__ == "__main__":
    main()
