"""Benchmark: model-call concurrency of the harness on a sim endpoint with a fixed latency.

Three measurements, side by side in one run against the same local
OpenAI-compatible sim endpoint (`python -m evalcore.models.sim.server`):

1. raw httpx: N chat-completion POSTs at concurrency C (the floor any client can reach);
2. the harness's model layer: N `evalcore.models.adapter.complete()` calls through litellm at concurrency C;
3. the whole runner: `evalcore run` machinery (agent loop, MCP server, scoring, DuckDB batches)
   on N attempts of one model call each, at concurrency C.

Each is reported against the ideal time N x latency / C, with the CPU time
per call of this process (`time.process_time`) and of the sim server (from
/proc), and the load average: on a shared machine the wall times swing by
+-30 %, the CPU times much less. Per-call overhead is measured at
concurrency 1 (harness mean minus raw httpx mean). `--cpu-budget` adds runs
of raw httpx that also hold the event loop for 0.25 to 2 ms of CPU per call,
which shows how much per-call client CPU the ratio tolerates on this machine.
Run: `make bench` or `.venv/bin/python bench/concurrency.py [--calls 600 --concurrency 16 --latency-ms 50] [--cpu-budget]`.

The target (600 calls, concurrency 16, 50 ms: at most 1.25 x 1.875 s) is not
met through litellm on a 2-core machine; README.md, "Why the concurrency
target is missed", has the numbers. In short: the whole client runs in one
process under one GIL (one core), the ratio crosses 1.25 at about 2 ms of
client CPU per call (raw httpx needs ~1.2 ms), and a `complete()` through
litellm 1.110.2 costs ~3.1-3.4 ms of CPU (~2.4 ms on the event loop plus
~0.85 ms in the executor thread where litellm builds the request).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import httpx  # noqa: E402

from evalcore.models.sim.launcher import SimServerProcess  # noqa: E402
from evalcore.models.tool_format import to_openai_tools  # noqa: E402
from evalcore.models.types import ModelSpec  # noqa: E402
from evalcore.models.workers import ModelWorkerPool, auto_worker_count, model_callers  # noqa: E402

PROMPT = [{"role": "user", "content": "Hello there, how are you today?"}]
BUDGET_STEPS_MS = (0.25, 0.5, 1.0, 2.0)


def busy_cpu(ms: float) -> None:
    """Hold the event loop for `ms` of this thread's CPU time: a stand-in for per-call client work."""
    until = time.thread_time() + ms / 1000
    while time.thread_time() < until:
        pass


async def raw_httpx(api_base: str, calls: int, concurrency: int, extra_cpu_ms: float = 0.0) -> list[float]:
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

        await asyncio.gather(*(one() for _ in range(calls)))
    return latencies


async def harness(api_base: str, calls: int, concurrency: int, workers: int = 0, worker_cpu_s: list[float] | None = None) -> list[float]:
    """`calls` model calls through `evalcore.models` (litellm), on this loop (`workers` = 0) or through a worker pool.

    With a pool, the CPU seconds its workers used are appended to `worker_cpu_s`.
    """
    spec = ModelSpec(name="hosted_vllm/sim-lexical", api_base=api_base, timeout_s=30)
    _, name_map = to_openai_tools([])
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    async with model_callers(workers) as models:

        async def one() -> None:
            async with gate:
                started = time.perf_counter()
                await models.complete(spec, PROMPT, [], name_map)
                latencies.append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(one() for _ in range(calls)))
        if worker_cpu_s is not None and isinstance(models, ModelWorkerPool):
            worker_cpu_s.append(sum(process_cpu_s(pid) or 0.0 for pid in models.pids))
    return latencies


def pool_start_s(workers: int) -> float:
    """Seconds to start and stop a pool of `workers` (the first time in a process it also boots the fork server)."""

    async def start_stop() -> None:
        async with model_callers(workers):
            pass

    started = time.perf_counter()
    asyncio.run(start_stop())
    return time.perf_counter() - started


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process so far, from /proc (None where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Measured:
    """One timed run: wall seconds, and CPU ms per call in this process and in the sim server."""

    wall_s: float
    client_cpu_ms: float
    server_cpu_ms: float | None

    def line(self, label: str, ideal: float) -> str:
        server = "n/a" if self.server_cpu_ms is None else f"{self.server_cpu_ms:.2f}"
        return (
            f"{label:17s}: {self.wall_s:.3f} s  ratio {self.wall_s / ideal:.3f} x ideal; CPU/call: client {self.client_cpu_ms:.2f} ms, sim server {server} ms"
        )


def measure(work: Coroutine[Any, Any, object], calls: int, server_pid: int, worker_cpu_s: Sequence[float] = ()) -> Measured:
    """Time `work`; its client CPU is this process's plus what its model workers report in `worker_cpu_s` once it ran."""
    server_before = process_cpu_s(server_pid)
    cpu_before = time.process_time()
    started = time.perf_counter()
    asyncio.run(work)
    wall = time.perf_counter() - started
    client_ms = (time.process_time() - cpu_before + sum(worker_cpu_s)) * 1000 / calls
    server_after = process_cpu_s(server_pid)
    server_ms = None if server_before is None or server_after is None else (server_after - server_before) * 1000 / calls
    return Measured(wall, client_ms, server_ms)


def whole_runner(calls: int, concurrency: int, latency_ms: float, workers: int) -> Measured:
    from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
    from evalcore.reference import running_reference_server
    from evalcore.target import Target

    runs = 5
    cases = calls // runs
    with tempfile.TemporaryDirectory() as folder, running_reference_server() as url:
        root = Path(folder)
        (root / "tasks.yaml").write_text("cases:\n" + "".join(f"  - {{id: chat-{i}, prompt: 'Hello {i}', expect_tool: null}}\n" for i in range(cases)))
        (root / "script.yaml").write_text(f"defaults: {{latency_ms: {latency_ms}}}\ncases: {{}}\n")
        config = BehaviourConfig(
            golden_path=root / "tasks.yaml",
            models=(ModelSpec(name=f"sim/script:{root / 'script.yaml'}", max_concurrency=concurrency),),
            db_path=root / "evals.duckdb",
            runs=runs,
            concurrency=concurrency,
            model_workers=workers,
        )
        cpu_before = time.process_time()
        started = time.perf_counter()
        asyncio.run(run_behaviour(config, Target(url=url)))
        return Measured(time.perf_counter() - started, (time.process_time() - cpu_before) * 1000 / calls, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--workers", type=int, default=None, help="model worker processes (default: what `evalcore run` picks for the concurrency)")
    parser.add_argument(
        "--cpu-budget",
        action="store_true",
        help="also run raw httpx with extra CPU per call on the event loop (0.25 to 2 ms): how much per-call client CPU the ratio tolerates here",
    )
    args = parser.parse_args()
    ideal = args.calls * args.latency_ms / 1000 / args.concurrency
    workers = auto_worker_count(args.concurrency) if args.workers is None else args.workers
    load_before = os.getloadavg()[0]
    first_start = pool_start_s(workers)  # boots the fork server (it imports litellm once); later pools fork from it
    warm_start = pool_start_s(workers)
    server = SimServerProcess(latency_ms=args.latency_ms)
    try:
        api_base = server.url()
        asyncio.run(harness(api_base, 20, 4))  # warm-up: litellm import, first connections
        asyncio.run(raw_httpx(api_base, 20, 4))
        raw = measure(raw_httpx(api_base, args.calls, args.concurrency), args.calls, server.pid)
        one_loop = measure(harness(api_base, args.calls, args.concurrency), args.calls, server.pid)
        worker_cpu_s: list[float] = []
        pooled = measure(harness(api_base, args.calls, args.concurrency, workers, worker_cpu_s), args.calls, server.pid, worker_cpu_s)
        raw_serial = asyncio.run(raw_httpx(api_base, 50, 1))
        harness_serial = asyncio.run(harness(api_base, 50, 1))
        pooled_serial = asyncio.run(harness(api_base, 50, 1, workers=1))
        budget = {
            extra: measure(raw_httpx(api_base, args.calls, args.concurrency, extra), args.calls, server.pid)
            for extra in (BUDGET_STEPS_MS if args.cpu_budget else ())
        }
    finally:
        server.stop()
    runner_one_loop = whole_runner(args.calls, args.concurrency, args.latency_ms, 0)
    runner = whole_runner(args.calls, args.concurrency, args.latency_ms, workers)
    print(f"workload: {args.calls} calls, concurrency {args.concurrency}, sim latency {args.latency_ms:g} ms; ideal {ideal:.3f} s")
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (other work shares the cores)")
    print(f"model worker pool: {workers} workers; start {first_start:.2f} s the first time in a process (fork server imports litellm), then {warm_start:.2f} s")
    print(raw.line("raw httpx", ideal))
    print(one_loop.line("litellm, 1 loop", ideal))
    print(pooled.line(f"litellm, {workers} workers", ideal))
    for label, measured in (("whole run, 1 loop", runner_one_loop), (f"whole run, {workers} wkr", runner)):
        print(
            f"{label:17s}: {measured.wall_s:.3f} s  ratio {measured.wall_s / ideal:.3f} x ideal; main-process CPU/attempt {measured.client_cpu_ms:.2f} ms "
            "(agent loop, MCP client, scoring, DuckDB, start to report; sim/script model)"
        )
    for extra, measured in budget.items():
        print(measured.line(f"raw + {extra:.2f} ms CPU", ideal))
    for label, serial in (("1 loop", harness_serial), ("1 worker", pooled_serial)):
        overhead = statistics.mean(serial) - statistics.mean(raw_serial)
        print(
            f"per-call overhead at concurrency 1, {label}: {overhead:.2f} ms "
            f"(harness mean {statistics.mean(serial):.2f} ms, raw httpx mean {statistics.mean(raw_serial):.2f} ms)"
        )


if __name__ == "__main__":
    main()
