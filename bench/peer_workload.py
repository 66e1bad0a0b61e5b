"""Benchmark: the peer workload, `evalcore run` beside promptfoo, side by side in one run.

The workload: 20 golden cases x 5 runs x 2 models, concurrency 8, against a
local OpenAI-compatible stub with a fixed 50 ms per answer
(`python -m evalcore.models.sim.server`, serving its lexical policy as
`gpt-4o-mini` and `gpt-4.1-mini`, so both tools price the calls from their
cost tables as they would for the real provider). `--model-names generic`
serves it as two names no price list knows instead (`acme-chat-7b`,
`acme-chat-13b`), as a local or self-hosted model is named: both tools then
report no price, and evalcore still takes its OpenAI-wire route.

- `evalcore run` (as a user types it, a fresh process: start-up, the bundled
  reference MCP server, the full tool loop, scoring, the DuckDB store, the
  report, into one store kept across the rounds as a user's `data/evals.duckdb`
  is): every attempt runs the agent loop, so a case whose answer needs a
  tool takes two model calls (about 290 in all).
- promptfoo (`promptfoo eval`, pinned in bench/promptfoo/package.json with the
  Node.js it needs, npm's `node` package, and installed there by this script
  with `npm ci`): the same prompts with the same
  tools, one model call per test (200 in all), `-j 8`, its cache off.
- the ideal: evalcore's model calls x 50 ms / 8, and raw httpx making that many
  POSTs at concurrency 8 (what any client could reach, start-up excluded).

The tools run alternately, `--repeat` times (default 5); each line gives the
median wall time with its range, the CPU seconds of the tool's process tree
(and per model call), its peak PSS (the sum of /proc/PID/smaps_rollup over the
process tree, sampled every 0.1 s: shared pages counted once) with its peak
anonymous memory (the heaps, which unlike the PSS do not move with what else
runs on the machine), and the load average when the runs ended. The verdict is the median of the per-round ratios evalcore / promptfoo.
On a shared machine wall times swing; the ratios of runs made side by side
swing much less.

`--server-apart` adds a variant: `evalcore run --url` against the reference
server started once, apart, as a user's own server runs: the CPU of evalcore's
process alone, without the server under test's. The lines also give what
importing the `openai` SDK alone costs in a fresh process, a fixed cost of every
run on the OpenAI-wire route.

`--scale 10,30,100` instead runs `evalcore run` alone on the workload with its
cases cycled 10, 30 and 100 times (and once, for the base), one run each, and
prints wall, CPU per model call against the 1x run's, and peak PSS: cost
must grow linearly in the number of attempts, or better.

Run: `make bench` or `.venv/bin/python bench/peer_workload.py [--repeat 5] [--evalcore-args "--model-concurrency 8"] [--scale 10,30,100]`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import httpx  # noqa: E402
import yaml  # noqa: E402
from user_environment import user_environment  # noqa: E402  (bench/, beside this script)

from evalcore.mcp.client import McpClient  # noqa: E402
from evalcore.mcp.reference import ReferenceServerProcess, running_reference_server  # noqa: E402
from evalcore.mcp.target import Target  # noqa: E402
from evalcore.mcp.transport.base import Limits  # noqa: E402
from evalcore.models.sim.launcher import SimServerProcess  # noqa: E402
from evalcore.models.tool_format import to_openai_tools  # noqa: E402

PROMPTFOO_DIR = ROOT / "bench" / "promptfoo"
PROMPTFOO_BIN = PROMPTFOO_DIR / "node_modules" / ".bin" / "promptfoo"
# promptfoo needs a newer Node.js than many machines have: the pinned one comes from npm's `node` package, first on its PATH.
PROMPTFOO_NODE = PROMPTFOO_DIR / "node_modules" / ".bin" / "node"
MODEL_NAMES = {
    "priced": ("gpt-4o-mini", "gpt-4.1-mini"),  # in both tools' price tables; the stub answers for both
    "generic": ("acme-chat-7b", "acme-chat-13b"),  # in no price list: a local or self-hosted model's names
}
MODELS = MODEL_NAMES["priced"]  # the variant measured (`--model-names`)
CASES, RUNS, CONCURRENCY, LATENCY_MS = 20, 5, 8, 50.0
# The stub needs no key; both tools refuse to call OpenAI without one. Not a secret.
BENCH_KEY = "bench-placeholder-key"


@dataclass(frozen=True)
class Timed:
    wall_s: float
    cpu_s: float  # user + system of the process and every child it waited for
    calls: int | None
    peak_pss_mb: float = 0.0  # the largest sum of PSS over the process tree, sampled every 0.1 s while it ran
    load: float = 0.0  # the 1-minute load average when it ended
    peak_anon_mb: float = 0.0  # the largest sum of anonymous memory (the heaps) over the tree, sampled with the PSS


def tree_pids(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc/PID/task/TID/children (Linux)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                queue.extend(int(child) for child in (task / "children").read_text().split())
            except (OSError, ValueError):
                continue
    return found


def tree_memory_mb(pid: int) -> tuple[float, float]:
    """The PSS of the process tree (shared pages split among the processes sharing them) and its anonymous memory, from
    /proc/PID/smaps_rollup. A library's pages count in the PSS split among every process on the machine that maps
    them, so it moves with what else runs; the anonymous memory (the heaps: Python's objects, DuckDB's) does not."""
    pss_kb = anon_kb = 0
    for member in tree_pids(pid):
        try:
            rollup = Path(f"/proc/{member}/smaps_rollup").read_text()
        except OSError:
            continue  # it ended meanwhile
        for line in rollup.splitlines():
            if line.startswith("Pss:"):
                pss_kb += int(line.split()[1])
            elif line.startswith("Anonymous:"):
                anon_kb += int(line.split()[1])
    return pss_kb / 1024, anon_kb / 1024


def peer_cases(golden: Path, count: int) -> list[dict[str, Any]]:
    """The first `count` cases of the bundled golden set that take one tool or none (two model calls or one)."""
    cases = yaml.safe_load(golden.read_text(encoding="utf-8"))["cases"]
    single = [c for c in cases if c.get("expect_tool") and not c.get("expect_sequence") and not c.get("inject")]
    negative = [c for c in cases if c.get("expect_tool", "x") is None and not c.get("expect_sequence") and not c.get("inject")]
    chosen = (single[: count - 3] + negative[:3])[:count]
    if len(chosen) < count:
        raise SystemExit(f"{golden}: only {len(chosen)} cases fit the peer workload, {count} needed")
    return chosen


def openai_tools() -> list[dict[str, Any]]:
    """The reference server's tools as OpenAI function tools, as evalcore sends them."""

    async def listed() -> list[dict[str, Any]]:
        limits = Limits(read_timeout=30.0)
        with running_reference_server() as url:
            client = McpClient(Target(url=url).open(limits), limits=limits)
            try:
                exchange = await client.request("tools/list", None)
            finally:
                await client.aclose()
        assert exchange.result is not None, exchange.describe()
        return list(exchange.result["tools"])

    tools, _ = to_openai_tools(asyncio.run(listed()))
    return tools


def promptfoo_config(cases: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]], api_base: str) -> dict[str, Any]:
    providers = [{"id": f"openai:chat:{model}", "config": {"apiBaseUrl": api_base, "apiKey": BENCH_KEY, "temperature": 0, "tools": tools}} for model in MODELS]
    tests = []
    for case in cases:
        test: dict[str, Any] = {"description": case["id"], "vars": {"prompt": case["prompt"]}}
        if case.get("expect_tool"):
            test["assert"] = [{"type": "is-valid-openai-tools-call"}]
        tests.append(test)
    return {"description": "evalcore peer workload", "prompts": ["{{prompt}}"], "providers": providers, "tests": tests}


def promptfoo_versions() -> tuple[str, str]:
    """The promptfoo and Node.js versions bench/promptfoo/package.json pins."""
    pinned = json.loads((PROMPTFOO_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]
    return pinned["promptfoo"], pinned["node"]


def installed_version(package: str) -> str | None:
    manifest = PROMPTFOO_DIR / "node_modules" / package / "package.json"
    return json.loads(manifest.read_text(encoding="utf-8")).get("version") if manifest.exists() else None


def ensure_promptfoo() -> None:
    """Install the pinned promptfoo and its Node.js into bench/promptfoo (gitignored node_modules) unless they are there."""
    if PROMPTFOO_BIN.exists() and PROMPTFOO_NODE.exists() and (installed_version("promptfoo"), installed_version("node")) == promptfoo_versions():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is not installed: promptfoo cannot be measured here (apt-get install npm)")
    print(f"installing promptfoo into {PROMPTFOO_DIR} (npm ci, once)", file=sys.stderr, flush=True)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=PROMPTFOO_DIR, check=True)


def timed(command: Sequence[str], env: Mapping[str, str], cwd: Path, timeout_s: float = 600) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds of the tree, its peak PSS and its peak anonymous memory in MB, for one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile(mode="w+") as output:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=dict(env), cwd=cwd, stdout=output, stderr=subprocess.STDOUT, text=True)
        peak = peak_anon = 0.0
        while process.poll() is None:  # sampling, not a readiness wait: the process's end is what stops it
            pss, anon = tree_memory_mb(process.pid)
            peak, peak_anon = max(peak, pss), max(peak_anon, anon)
            if time.perf_counter() - started > timeout_s:
                process.kill()
            time.sleep(0.1)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        output.seek(0)
        text = output.read()
    if process.returncode not in (0, 1, 100):  # 1: evalcore's gate failed; 100: promptfoo's assertions failed. Both ran.
        raise SystemExit(f"{shlex.join(command)} exited {process.returncode}:\n{text[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), peak, peak_anon


def write_golden(folder: Path, scale: int = 1) -> list[dict[str, Any]]:
    """The peer workload's golden set in `folder/tasks.yaml`, its cases cycled `scale` times (ids suffixed); the first copy returned."""
    cases = peer_cases(ROOT / "golden" / "tasks.yaml", CASES)
    # Deep copies: YAML would write a shared nested value once and alias it, and the loader counts aliases against a bomb.
    cycled = [{**copy.deepcopy(case), "id": case["id"] if n == 0 else f"{case['id']}-x{n}"} for n in range(scale) for case in cases]
    (folder / "tasks.yaml").write_text(yaml.safe_dump({"server": "reference", "cases": cycled}, sort_keys=False), encoding="utf-8")
    return cases


def evalcore_command(folder: Path, api_base: str, extra: Sequence[str], round_no: int) -> list[str]:
    """`evalcore run` on the workload in `folder`, as a user types it; its report goes to `folder/report-<round_no>.json`.

    Every round writes to one store, `folder/evals.duckdb`, as a user's runs all go to `data/evals.duckdb` (and as
    promptfoo keeps its own state folder across the rounds): the warm-up run creates it, so a timed run opens a
    store with history, and creating one (its schema, about 0.1 s of CPU, once per store) is not in its time."""
    command = [sys.executable, "-m", "evalcore", "run", "--golden", str(folder / "tasks.yaml"), "--models", ",".join(f"openai/{m}" for m in MODELS)]
    command += ["--api-base", api_base, "--runs", str(RUNS), "--concurrency", str(CONCURRENCY), "--model-concurrency", str(CONCURRENCY)]
    return command + ["--db", str(folder / "evals.duckdb"), "--out", str(folder / f"report-{round_no}.json"), *extra]


def evalcore_environment() -> dict[str, str]:
    """The environment `evalcore run` is timed in: a user's (`user_environment`: its bytecode written), with the stub's key."""
    return user_environment(OPENAI_API_KEY=BENCH_KEY)


def run_evalcore(folder: Path, api_base: str, extra: Sequence[str], round_no: int, timeout_s: float = 600) -> Timed:
    report = folder / f"report-{round_no}.json"
    command = evalcore_command(folder, api_base, extra, round_no)
    wall, cpu, peak, anon = timed(command, evalcore_environment(), ROOT, timeout_s)
    data = json.loads(report.read_text(encoding="utf-8"))
    calls = sum(int((model.get("modelCalls") or {}).get("calls", 0)) for model in data.get("models", []))
    return Timed(wall, cpu, calls or None, peak, os.getloadavg()[0], anon)


def run_promptfoo(folder: Path) -> Timed:
    env = {
        **os.environ,
        "OPENAI_API_KEY": BENCH_KEY,
        "PROMPTFOO_CONFIG_DIR": str(folder / "promptfoo-home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "NO_COLOR": "1",
        "PATH": f"{PROMPTFOO_NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    command = [str(PROMPTFOO_BIN), "eval", "-c", str(folder / "promptfooconfig.yaml"), "--repeat", str(RUNS), "-j", str(CONCURRENCY)]
    command += ["--no-cache", "--no-table", "--no-progress-bar", "-o", str(folder / "promptfoo.json")]
    wall, cpu, peak, anon = timed(command, env, folder)
    results = json.loads((folder / "promptfoo.json").read_text(encoding="utf-8")).get("results", {}).get("results", [])
    return Timed(wall, cpu, len(results) or None, peak, os.getloadavg()[0], anon)


async def raw_httpx(api_base: str, calls: int) -> float:
    gate = asyncio.Semaphore(CONCURRENCY)
    body = {"model": MODELS[0], "messages": [{"role": "user", "content": "What's the weather like in Paris right now?"}]}
    async with httpx.AsyncClient(timeout=30, trust_env=False, limits=httpx.Limits(max_connections=CONCURRENCY * 2)) as client:

        async def one() -> None:
            async with gate:
                (await client.post(f"{api_base}/chat/completions", json=body)).raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(calls)))
        return time.perf_counter() - started


def line(label: str, runs: Sequence[Timed]) -> str:
    walls = [r.wall_s for r in runs]
    calls = {r.calls for r in runs}
    count = "/".join(str(c) for c in sorted(calls, key=lambda c: c or 0)) if calls != {None} else "?"
    cpu = statistics.median(r.cpu_s for r in runs)
    per_call = f" ({cpu / int(statistics.median(r.calls or 0 for r in runs)) * 1000:.1f} ms/call)" if calls != {None} else ""
    loads = [r.load for r in runs]
    return (
        f"{label:34s} {statistics.median(walls):6.2f} s wall (range {min(walls):.2f}-{max(walls):.2f}), "
        f"{cpu:6.2f} s CPU{per_call}; peak PSS {max(r.peak_pss_mb for r in runs):.0f} MB (anonymous {max(r.peak_anon_mb for r in runs):.0f} MB); "
        f"{count} model calls; "
        f"load {min(loads):.2f}-{max(loads):.2f}"
    )


def run_scales(api_base: str, scales: Sequence[int], extra: Sequence[str] = ()) -> None:
    """`evalcore run` on the workload cycled `scale` times, once per scale: wall, CPU and peak PSS, and their growth."""
    print(f"scale: evalcore run on the peer workload cycled N times ({CASES} x N cases x {RUNS} runs x {len(MODELS)} models), one run each")
    base: Timed | None = None
    for scale in (1, *scales):
        with tempfile.TemporaryDirectory(prefix=f"evalcore-scale-{scale}-") as name:
            folder = Path(name)
            write_golden(folder, scale)
            limits = ["--golden-limit", f"cases={CASES * scale + 1}", "--golden-limit", f"nodes={200_000 + 200 * CASES * scale}"]
            result = run_evalcore(folder, api_base, [*limits, *extra], 1, timeout_s=600.0 * scale)
        base = base or result
        calls = result.calls or 0
        growth = (result.cpu_s / base.cpu_s) / (calls / (base.calls or 1)) if calls else float("nan")
        # What each further call costs, the run's fixed start-up and end left out: the slope from the 1x run.
        added = calls - (base.calls or 0)
        marginal = f"; {(result.cpu_s - base.cpu_s) / added * 1000:.1f} ms per call added to x1" if added > 0 else ""
        print(
            f"  x{scale:<4d} {calls:6d} model calls: {result.wall_s:8.2f} s wall, {result.cpu_s:8.2f} s CPU "
            f"({result.cpu_s / max(calls, 1) * 1000:.1f} ms/call; CPU per call {growth:.2f} x that of x1{marginal}), "
            f"peak PSS {result.peak_pss_mb:.0f} MB ({result.peak_pss_mb / base.peak_pss_mb:.2f} x that of x1), "
            f"anonymous {result.peak_anon_mb:.0f} MB ({result.peak_anon_mb / max(base.peak_anon_mb, 1):.2f} x); load {result.load:.2f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="rounds of evalcore then promptfoo; medians are reported (default 5)")
    parser.add_argument("--evalcore-args", action="append", default=[], metavar="ARGS", help="also time `evalcore run ARGS` in each round (repeatable)")
    parser.add_argument("--no-promptfoo", action="store_true", help="measure evalcore against the ideal only")
    parser.add_argument("--scale", metavar="N,N,...", help="instead: evalcore run on the workload cycled N times (e.g. 10,30,100), wall, CPU, memory")
    parser.add_argument("--model-names", choices=sorted(MODEL_NAMES), default="priced", help="priced names (default), or generic ones no price list knows")
    parser.add_argument(
        "--server-apart", action="store_true", help="also time `evalcore run --url` against the reference server started apart (with --scale: only that)"
    )
    args = parser.parse_args()
    global MODELS
    MODELS = MODEL_NAMES[args.model_names]
    if args.scale:
        scales = [int(n) for n in args.scale.split(",") if n.strip()]
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before", flush=True)
        server = SimServerProcess(latency_ms=LATENCY_MS, aliases={model: "sim-lexical" for model in MODELS})
        apart = ReferenceServerProcess([]) if args.server_apart else None
        try:
            run_scales(server.url(), scales, ["--url", apart.url()] if apart is not None else [])
        finally:
            server.stop()
            if apart is not None:
                apart.stop()
        return
    with_promptfoo = not args.no_promptfoo
    if with_promptfoo:
        ensure_promptfoo()
    variants = [("evalcore run", [])] + [(f"evalcore run {extra}", shlex.split(extra)) for extra in args.evalcore_args]
    load_before = os.getloadavg()[0]
    server = SimServerProcess(latency_ms=LATENCY_MS, aliases={model: "sim-lexical" for model in MODELS})
    apart = ReferenceServerProcess([]) if args.server_apart else None
    if apart is not None:
        variants.append(("evalcore run --url (server apart)", ["--url", apart.url()]))
    results: dict[str, list[Timed]] = {label: [] for label, _ in variants}
    results["promptfoo eval"] = []
    try:
        api_base = server.url()
        with tempfile.TemporaryDirectory(prefix="evalcore-peer-") as name:
            folder = Path(name)
            cases = write_golden(folder)
            if with_promptfoo:
                config = promptfoo_config(cases, openai_tools(), api_base)
                (folder / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
                run_promptfoo(folder)  # warm-up: the first start reads promptfoo's files from disk
            run_evalcore(folder, api_base, [], 0)  # warm-up: the same for Python's modules
            for round_no in range(1, args.repeat + 1):
                for label, extra in variants:
                    results[label].append(run_evalcore(folder, api_base, extra, round_no))
                if with_promptfoo:
                    results["promptfoo eval"].append(run_promptfoo(folder))
        calls = statistics.median(r.calls or 0 for r in results["evalcore run"])
        raw = statistics.median(asyncio.run(raw_httpx(api_base, int(calls))) for _ in range(3))
        openai_import = statistics.median(timed([sys.executable, "-c", "import openai"], evalcore_environment(), ROOT)[1] for _ in range(3))
    finally:
        server.stop()
        if apart is not None:
            apart.stop()

    ideal = calls * LATENCY_MS / 1000 / CONCURRENCY
    shape = f"{CASES} cases x {RUNS} runs x {len(MODELS)} models ({', '.join(MODELS)})"
    print(f"peer workload: {shape}, concurrency {CONCURRENCY}, stub latency {LATENCY_MS:g} ms; {args.repeat} rounds")
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after (other work shares the cores)")
    if with_promptfoo:
        print(f"peer: promptfoo {installed_version('promptfoo')} on Node.js {installed_version('node')} (bench/promptfoo/package.json)")
    print(f"ideal for evalcore's {calls:g} model calls: {ideal:.2f} s; raw httpx, that many POSTs at concurrency {CONCURRENCY}: {raw:.2f} s (no start-up)")
    print(f"importing the openai SDK alone, in a fresh process: {openai_import:.2f} s CPU (median of 3), a fixed cost of every run on its route")
    for label, runs in results.items():
        if runs:
            print(line(label, runs))
    if with_promptfoo:
        base = results["promptfoo eval"]
        for label, _ in variants:
            ratios = [e.wall_s / p.wall_s for e, p in zip(results[label], base, strict=True)]
            verdict = "at or below promptfoo" if statistics.median(ratios) <= 1.0 else "SLOWER than promptfoo"
            print(f"{label} / promptfoo eval, wall: median {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f}): {verdict}")


if __name__ == "__main__":
    main()
