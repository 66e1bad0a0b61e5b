"""Profile: where one `evalcore run` of the peer workload spends its CPU, by area, as shares of the active samples.

It runs the peer workload of bench/peer_workload.py once (20 cases x 5 runs x 2 models, concurrency 8,
the sim endpoint answering in 50 ms) as a user types it, into a store an unprofiled run made first, under py-spy (`py-spy record --subprocesses
--nonblocking -f raw`: every thread of the run's process tree, idle threads left out, so the samples stand
for CPU), and sorts each sample into one area by the frames on its stack, the first rule that matches
winning:

- the reference MCP server (its own process);
- importing litellm or the openai SDK (on the thread `adapter.start_litellm_import` starts), and every other import;
- redaction (the secret scrubbing of every text that is stored or shown);
- the store (DuckDB, reads and writes);
- litellm's per-call work, in three parts: its logging and callback machinery, the HTTP client under it
  (the OpenAI SDK, httpx, httpcore), and the rest (building the request, parsing the response, pricing);
- a model call on the OpenAI-wire route (evalcore.models.openai_route and the openai SDK under it);
- the model adapter's own work (evalcore.models), the MCP client (evalcore.mcp, aiohttp on the
  event loop), scoring, telemetry spans, the progress line;
- the event loop and the threads themselves (asyncio, selectors, starting a thread per call);
- the main thread with no Python frame: the interpreter starting and shutting down (freeing every module);
- the rest of evalcore, and everything else.

Shares, unlike seconds, hold up on a loaded machine, though not fully: py-spy counts a thread that is ready to
run but waits for a core as active. The line above the table gives the load average.
`--raw PATH` keeps py-spy's samples. Needs py-spy (requirements-dev.txt) and the right to trace a child
process. Run: `.venv/bin/python bench/profile_run.py [--rate 100] [--scale 1]`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import peer_workload  # noqa: E402  (the workload and its stub, shared)

REFERENCE_SERVER = "the reference MCP server (its own process)"
# litellm's per-call bookkeeping, by file (py-spy names some of litellm's files without their folder)
LITELLM_LOGGING = re.compile(r"logging|logger|datadog|integrations/|callback|cost_calc|cost_tracking|pricing|hidden_params|response_metadata")
HTTP_PACKAGES = ("openai", "httpx", "httpcore", "h11", "anyio", "sniffio", "certifi", "ssl", "aiohttp", "yarl", "multidict", "aiohappyeyeballs", "propcache")
STDLIB = frozenset(sys.stdlib_module_names) - {"ssl"}


def _package(frame: str) -> str:
    """The top-level package or module of one frame (`name (package/module.py:12)`), `<frozen ...>` as it is."""
    match = re.search(r"\(([^()]*?):\d+\)\s*$", frame)
    path = match.group(1) if match else ""
    return path if path.startswith("<") else path.split("/", 1)[0].removesuffix(".py")


def area_of(stack: str) -> str:
    """The area one py-spy raw stack (`process A;[process B;]frame;frame...`, root first) belongs to.

    The area is that of the innermost frame outside the standard library (json.dumps called by the store is the
    store's time); a stack of standard-library frames only is the event loop's or the threads' when those run it.
    """
    frames = stack.split(";")
    if sum(1 for frame in frames[:2] if frame.startswith("process ")) > 1:
        return REFERENCE_SERVER  # a child process of the run: the only one it starts is the reference server
    if any("importlib._bootstrap" in frame for frame in frames):
        model_imports = any("litellm_loader" in frame or "start_litellm_import" in frame for frame in frames)
        return "importing litellm or the openai SDK" if model_imports else "other imports"
    if all(frame.startswith("process ") for frame in frames):
        return "no Python frame (interpreter start-up and shutdown)"
    if any("(evalcore/models/openai_route.py" in frame for frame in frames) and not any("(evalcore/redaction" in frame for frame in frames):
        return "model calls on the OpenAI-wire route (evalcore.models.openai_route, the openai SDK)"
    under_litellm = any("(litellm/" in frame for frame in frames)
    owner = next((frame for frame in reversed(frames) if not frame.startswith("process ") and _package(frame) not in STDLIB), "")
    package = _package(owner)
    if "(evalcore/redaction.py" in owner or "(evalcore/models/redaction.py" in owner:
        return "redaction"
    if "(evalcore/store/" in owner or package == "duckdb":
        return "the store (DuckDB)"
    if under_litellm and package in HTTP_PACKAGES:
        return "litellm: HTTP client (OpenAI SDK, httpx)"
    if under_litellm and package != "evalcore":
        return "litellm: logging, callbacks, cost" if LITELLM_LOGGING.search(owner) else "litellm: request and response"
    if "(evalcore/mcp/" in owner or package in ("mcp", "mcp_types", *HTTP_PACKAGES):
        return "MCP client (evalcore.mcp, aiohttp)"
    if "(evalcore/scoring/" in owner:
        return "scoring"
    if "(evalcore/telemetry/" in owner or package == "opentelemetry":
        return "telemetry spans"
    if "(evalcore/models/" in owner or package == "tenacity":
        return "model adapter (evalcore.models, retries)"
    if package == "evalcore":
        return "rest of evalcore"
    if not owner and any(f"({name}" in frame for frame in frames for name in ("asyncio/", "selectors.py", "threading.py", "concurrent/")):
        return "event loop and threads"
    return f"other ({package or 'standard library'})"


def breakdown(raw: Path) -> Counter[str]:
    samples: Counter[str] = Counter()
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            samples[area_of(stack)] += int(count)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=100, help="samples per second per thread (default 100)")
    parser.add_argument("--scale", type=int, default=1, help="the workload this many times over (cases cycled, default 1)")
    parser.add_argument("--raw", type=Path, metavar="PATH", help="keep py-spy's raw samples here")
    parser.add_argument("--evalcore-args", default="", metavar="ARGS", help="extra `evalcore run` arguments")
    args = parser.parse_args()
    py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if py_spy is None:
        raise SystemExit("py-spy is not installed: .venv/bin/python -m pip install -r requirements-dev.txt")
    load_before = os.getloadavg()[0]
    server = peer_workload.SimServerProcess(latency_ms=peer_workload.LATENCY_MS, aliases={model: "sim-lexical" for model in peer_workload.MODELS})
    try:
        api_base = server.url()
        with tempfile.TemporaryDirectory(prefix="evalcore-profile-") as name:
            folder = Path(name)
            peer_workload.write_golden(folder, args.scale)
            raw = args.raw or folder / "samples.txt"
            # Run once first, unprofiled: it creates the store (a user's exists) and writes evalcore's bytecode.
            warm_up = peer_workload.evalcore_command(folder, api_base, args.evalcore_args.split(), 0)
            subprocess.run(warm_up, env=peer_workload.evalcore_environment(), cwd=peer_workload.ROOT, capture_output=True, check=False)
            command = peer_workload.evalcore_command(folder, api_base, args.evalcore_args.split(), 1)
            record = [py_spy, "record", "--subprocesses", "--nonblocking", "-r", str(args.rate), "-f", "raw", "-o", str(raw), "--", *command]
            done = subprocess.run(record, env=peer_workload.evalcore_environment(), cwd=peer_workload.ROOT, capture_output=True, text=True)
            if done.returncode not in (0, 1) or not raw.exists():
                raise SystemExit(f"py-spy record failed ({done.returncode}):\n{done.stderr[-3000:]}")
            samples = breakdown(raw)
    finally:
        server.stop()
    total = sum(samples.values()) or 1
    print(f"profile of one `evalcore run` of the peer workload x{args.scale}: {total} active samples at {args.rate}/s per thread")
    print(f"machine: {os.cpu_count()} cores, load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("| where | share |\n|---|---|")
    for area, count in samples.most_common():
        print(f"| {area} | {count / total:.1%} |")


if __name__ == "__main__":
    main()
