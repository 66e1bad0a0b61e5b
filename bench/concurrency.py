"""Benchmark: model-call concurrency of the harness on a sim endpoint with a fixed latency.

Side by side in one run, against the same local OpenAI-compatible sim
endpoint (`python -m evalcore.models.sim.server`, a fixed 50 ms per answer):

1. raw httpx: N chat-completion POSTs at concurrency C (the floor any client can reach);
2. the harness's model layer (`evalcore.models.adapter.complete`: litellm's synchronous
   `completion` on a thread per call) -- the figure the target is about;
3. the same for a model with no known price, where litellm searches its cost map on every call;
4. `litellm.acompletion` awaited on the loop, the path the harness does not take, for comparison;
5. the whole runner (agent loop, MCP server, scoring, DuckDB batches, report), N attempts of one
   model call each.

Each line is the median of `--repeat` runs (with the range) against the
ideal time N x latency / C, with the CPU time per call of the client and of
the sim server, and the load average: on a shared machine wall times swing,
CPU times much less. The whole-run line times everything from
`run_behaviour` to its report. The endpoint model is priced (as `--prices`
would price it), like any model litellm's cost map knows. Per-call overhead
is measured at concurrency 1 (harness mean minus raw httpx mean, first
calls left out). bench/peer_workload.py measures a whole `evalcore run`
beside promptfoo.
`--cpu-budget` adds runs of raw httpx that also hold the event loop for 0.25
to 2 ms of CPU per call: how much per-call client CPU one loop tolerates.
Run: `make bench` or `.venv/bin/python bench/concurrency.py [--calls 600 --concurrency 16 --latency-ms 50] [--cpu-budget]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import httpx  # noqa: E402

from evalcore.mcp.reference import running_reference_server  # noqa: E402
from evalcore.models.adapter import complete  # noqa: E402
from evalcore.models.sim.launcher import SimServerProcess  # noqa: E402
from evalcore.models.tool_format import ToolNameMap  # noqa: E402
from evalcore.models.types import ModelSpec  # noqa: E402

PROMPT = [{"role": "user", "content": "Hello there, how are you today?"}]
BUDGET_STEPS_MS = (0.25, 0.5, 1.0, 2.0)
PRICE = {"input_cost_per_token": 1e-7, "output_cost_per_token": 4e-7}
TARGET_RATIO = 1.25
WARM_UP_CALLS = 5


@dataclass(frozen=True)
class Timed:
    """One timed workload: its wall seconds and its call latencies (ms)."""

    wall_s: float
    latencies_ms: list[float] = field(default_factory=list)


def busy_cpu(ms: float) -> None:
    """Hold the event loop for `ms` of this thread's CPU time: a stand-in for per-call client work."""
    until = time.thread_time() + ms / 1000
    while time.thread_time() < until:
        pass


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process so far, from /proc (None where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def raw_httpx(api_base: str, calls: int, concurrency: int, extra_cpu_ms: float = 0.0) -> Timed:
    """`calls` POSTs at `concurrency`."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    async with httpx.AsyncClient(timeout=30, trust_env=False, limits=httpx.Limits(max_connections=concurrency * 2)) as client:

        async def one() -> None:
            async with gate:
                started = time.perf_counter()
                busy_cpu(extra_cpu_ms / 2)  # half before the request (building it), half after (parsing, pricing, logging)
                response = await client.post(f"{api_base}/chat/completions", json={"model": "sim-lexical", "messages": PROMPT})
                response.raise_for_status()
                busy_cpu(extra_cpu_ms / 2)
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(calls)))
    return Timed(time.perf_counter() - started, latencies)


async def harness(api_base: str, calls: int, concurrency: int, priced: bool = True, awaited: bool = False) -> Timed:
    """`calls` model calls through `evalcore.models.adapter.complete` (or, `awaited`, through `litellm.acompletion`)."""
    from evalcore.models.adapter import build_request
    from evalcore.models.litellm_loader import litellm

    spec = ModelSpec(name="hosted_vllm/sim-lexical", api_base=api_base, timeout_s=30, **(PRICE if priced else {}))
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one() -> None:
        async with gate:
            started = time.perf_counter()
            if awaited:
                await litellm.acompletion(**build_request(spec, PROMPT, [], None))
            else:
                await complete(spec, PROMPT, [], ToolNameMap())
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return Timed(time.perf_counter() - started, latencies)


def whole_runner(mcp_url: str, calls: int, concurrency: int, latency_ms: float) -> Timed:
    """`evalcore run` end to end (discovery, run record, attempts, batches, report) over `calls` one-call attempts of a sim/script model."""
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.mcp.target import Target

    runs = 5
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "tasks.yaml").write_text("cases:\n" + "".join(f"  - {{id: chat-{i}, prompt: 'Hello {i}', expect_tool: null}}\n" for i in range(calls // runs)))
        (root / "script.yaml").write_text(f"defaults: {{latency_ms: {latency_ms}}}\ncases: {{}}\n")
        config = BehaviourConfig(
            golden_path=root / "tasks.yaml",
            models=(ModelSpec(name=f"sim/script:{root / 'script.yaml'}", max_concurrency=concurrency),),
            db_path=root / "evals.duckdb",
            runs=runs,
            concurrency=concurrency,
        )
        started = time.perf_counter()
        asyncio.run(run_behaviour(config, Target(url=mcp_url)))
        return Timed(time.perf_counter() - started)


@dataclass(frozen=True)
class Measured:
    """Repeated timed runs: wall seconds of each, and CPU ms per call of the client and of the sim server."""

    walls: tuple[float, ...]
    client_cpu_ms: float
    server_cpu_ms: float | None

    def ratio(self, ideal: float) -> float:
        return statistics.median(self.walls) / ideal

    def line(self, label: str, ideal: float) -> str:
        spread = f"{min(self.walls) / ideal:.3f}-{max(self.walls) / ideal:.3f}"
        server = "" if self.server_cpu_ms is None else f", sim server {self.server_cpu_ms:.2f} ms"
        return (
            f"{label:30s} {statistics.median(self.walls):.3f} s  ratio {self.ratio(ideal):.3f} x ideal (range {spread}); "
            f"CPU/call: client {self.client_cpu_ms:.2f} ms{server}"
        )


def measure(work: Callable[[], Any], calls: int, repeat: int, server_pid: int | None = None) -> Measured:
    """Run `work` (a coroutine factory, or a plain function, returning `Timed`) `repeat` times."""
    walls: list[float] = []
    cpu = 0.0
    server_before = process_cpu_s(server_pid) if server_pid else None
    for _ in range(repeat):
        cpu_before = time.process_time()
        result = work()
        timed: Timed = asyncio.run(result) if isinstance(result, Coroutine) else result
        walls.append(timed.wall_s)
        cpu += time.process_time() - cpu_before
    server_after = process_cpu_s(server_pid) if server_pid else None
    server_ms = None if server_before is None or server_after is None else (server_after - server_before) * 1000 / calls / repeat
    return Measured(tuple(walls), cpu * 1000 / calls / repeat, server_ms)


def serial_mean_ms(work: Coroutine[Any, Any, Timed]) -> float:
    return statistics.mean(asyncio.run(work).latencies_ms[WARM_UP_CALLS:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs per line; the median is reported (default 3)")
    parser.add_argument(
        "--cpu-budget",
        action="store_true",
        help="also run raw httpx with extra CPU per call on the event loop (0.25 to 2 ms): how much per-call client CPU one loop tolerates here",
    )
    args = parser.parse_args()
    calls, concurrency, repeat = args.calls, args.concurrency, args.repeat
    ideal = calls * args.latency_ms / 1000 / concurrency
    load_before = os.getloadavg()[0]
    lines: list[tuple[str, Measured]] = []
    server = SimServerProcess(latency_ms=args.latency_ms)
    try:
        api_base = server.url()
        asyncio.run(harness(api_base, 20, 4))  # warm-up: litellm import, first connections
        asyncio.run(raw_httpx(api_base, 20, 4))
        pid = server.pid
        lines.append(("raw httpx", measure(lambda: raw_httpx(api_base, calls, concurrency), calls, repeat, pid)))
        harnessed = measure(lambda: harness(api_base, calls, concurrency), calls, repeat, pid)
        lines.append(("harness (litellm on threads)", harnessed))
        lines.append(("  same, model without a price", measure(lambda: harness(api_base, calls, concurrency, priced=False), calls, repeat, pid)))
        lines.append(("  litellm.acompletion awaited", measure(lambda: harness(api_base, calls, concurrency, awaited=True), calls, repeat, pid)))
        for extra in BUDGET_STEPS_MS if args.cpu_budget else ():
            lines.append((f"raw httpx + {extra:.2f} ms CPU", measure(lambda extra=extra: raw_httpx(api_base, calls, concurrency, extra), calls, repeat, pid)))
        raw_serial = serial_mean_ms(raw_httpx(api_base, 50, 1))
        harness_serial = serial_mean_ms(harness(api_base, 50, 1))
    finally:
        server.stop()
    with running_reference_server() as mcp_url:
        lines.append(("whole run", measure(lambda: whole_runner(mcp_url, calls, concurrency, args.latency_ms), calls, repeat)))

    print(f"workload: {calls} calls, concurrency {concurrency}, sim latency {args.latency_ms:g} ms; ideal {ideal:.3f} s; median of {repeat} runs per line")
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (other work shares the cores)")
    for label, measured in lines:
        print(measured.line(label, ideal))
    print("  (whole-run CPU is this process: agent loop, MCP client, scoring, DuckDB, report; the model is sim/script)")
    overhead = harness_serial - raw_serial
    print(f"per-call overhead at concurrency 1: {overhead:.2f} ms (harness mean {harness_serial:.2f} ms, raw httpx mean {raw_serial:.2f} ms)")
    verdict = "met" if harnessed.ratio(ideal) <= TARGET_RATIO else "MISSED"
    print(f"target: at most {TARGET_RATIO} x ideal through the harness's model layer: {verdict} ({harnessed.ratio(ideal):.3f} x)")


if __name__ == "__main__":
    main()
