"""Model worker processes: the same answers and errors as in-process calls, a dead worker stops the run, nothing left running."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
from evalcore.errors import ConfigError, ModelError, ModelWorkerError
from evalcore.models import pricing, workers
from evalcore.models import zygote as zygote_module
from evalcore.models.sim.launcher import running_sim_server
from evalcore.models.tool_format import ToolNameMap, to_openai_tools
from evalcore.models.types import ModelSpec, ModelTurn
from evalcore.models.workers import IN_PROCESS, ModelWorkerPool, auto_worker_count
from evalcore.store.behaviour import list_runs, load_attempts
from evalcore.target import Target

ROOT = Path(__file__).resolve().parents[1]
CONTEXT = {"case_id": "weather", "attempt": 2, "run_date": "2026-11-01"}
TOOLS = [
    {"name": "get_weather", "description": "Current weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "docs.search", "description": "Search the documentation.", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
]
SCRIPT = """\
defaults: {latency_ms: 0, tokens: {input: 120, output: 30}, model_version: script-v3}
cases:
  weather:
    calls: [{name: get_weather, args: {city: Oslo}}]
    text: "Rainy in Oslo."
    attempts:
      2: {calls: [{name: docs.search, args: {query: weather API}}]}
  slow:
    latency_ms: 20000
    no_call: true
  quick:
    no_call: true
    text: "Done."
"""
GOLDEN = """\
cases:
  - {id: quick, prompt: "Say done.", expect_tool: null}
  - {id: slow, prompt: "Take your time.", expect_tool: null}
"""


def _pool_run(coroutine_factory: Any, size: int = 1) -> Any:
    async def body() -> Any:
        pool = ModelWorkerPool(size)
        await pool.start()
        try:
            return await coroutine_factory(pool)
        finally:
            await pool.close()

    return asyncio.run(body())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _without_latency(turn: ModelTurn) -> ModelTurn:
    return replace(turn, latency_ms=0.0)


@pytest.fixture
def script_model(tmp_path: Path) -> ModelSpec:
    (tmp_path / "script.yaml").write_text(SCRIPT)
    return ModelSpec(name=f"sim/script:{tmp_path / 'script.yaml'}")


def test_a_worker_answers_exactly_as_the_caller_s_own_loop(script_model: ModelSpec) -> None:
    openai_tools, name_map = to_openai_tools(TOOLS)
    assert name_map.renamed  # docs.search is renamed for the model and mapped back
    messages = [{"role": "user", "content": "How is the weather in Oslo?"}]

    async def both(pool: ModelWorkerPool) -> tuple[ModelTurn, ModelTurn]:
        here = await IN_PROCESS.complete(script_model, messages, openai_tools, name_map, context=CONTEXT)
        there = await pool.complete(script_model, messages, openai_tools, name_map, context=CONTEXT)
        return here, there

    here, there = _pool_run(both)
    assert [c.name for c in there.tool_calls] == ["docs.search"]  # the MCP name, mapped back in the worker
    assert _without_latency(there) == _without_latency(here)
    assert there.model_version and there.input_tokens == 120 and there.cost_usd == 0.0


def test_errors_cross_the_pool_with_their_type_and_message(tmp_path: Path) -> None:
    missing = ModelSpec(name=f"sim/script:{tmp_path / 'missing.yaml'}")
    refused = ModelSpec(name="hosted_vllm/nothing-here", api_base="http://127.0.0.1:9/v1", max_retries=0, timeout_s=5)

    async def errors(pool: ModelWorkerPool) -> list[tuple[type[BaseException], str]]:
        found = []
        for spec in (missing, refused):
            for caller in (IN_PROCESS, pool):
                try:
                    await caller.complete(spec, [{"role": "user", "content": "hi"}], [], ToolNameMap(), context=CONTEXT)
                except Exception as exc:
                    found.append((type(exc), re.sub(r" at 0x[0-9a-f]+", "", str(exc))))  # object addresses differ between processes
        return found

    (config_here, config_there, model_here, model_there) = _pool_run(errors)
    assert config_here == config_there and config_here[0] is ConfigError and "missing.yaml" in config_here[1]
    assert model_here[0] is model_there[0] is ModelError
    # The same failure in words; the transport's own text differs (litellm's async path uses aiohttp, its sync path httpx).
    assert model_here[1].split(" - ")[0] == model_there[1].split(" - ")[0] == "hosted_vllm/nothing-here: InternalServerError: Hosted_vllmException"


def test_registered_prices_reach_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pricing, "_REGISTERED", {})  # this test's price table, gone afterwards
    pricing.register_prices({"hosted_vllm/sim-lexical": (2e-6, 8e-6)})
    with running_sim_server() as api_base:
        spec = ModelSpec(name="hosted_vllm/sim-lexical", api_base=api_base, timeout_s=10)
        turn = _pool_run(lambda pool: pool.complete(spec, [{"role": "user", "content": "hello"}], [], ToolNameMap()))
    assert turn.input_tokens and turn.output_tokens
    assert turn.cost_usd == pytest.approx(turn.input_tokens * 2e-6 + turn.output_tokens * 8e-6)


def test_a_killed_worker_fails_its_calls_with_a_clear_error(script_model: ModelSpec) -> None:
    slow = {**CONTEXT, "case_id": "slow"}

    async def kill_mid_call(pool: ModelWorkerPool) -> tuple[str, str]:
        (pid,) = pool.pids
        call = asyncio.create_task(pool.complete(script_model, [{"role": "user", "content": "hi"}], [], ToolNameMap(), context=slow))
        await asyncio.sleep(0.5)
        assert not call.done()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ModelWorkerError) as in_flight:
            await asyncio.wait_for(call, 10)
        with pytest.raises(ModelWorkerError) as afterwards:
            await pool.complete(script_model, [{"role": "user", "content": "hi"}], [], ToolNameMap(), context=CONTEXT)
        return str(in_flight.value), str(afterwards.value)

    in_flight, afterwards = _pool_run(kill_mid_call)
    assert "model worker (pid" in in_flight and "1 call(s) in flight" in in_flight
    assert afterwards == in_flight


def test_closing_the_pool_stops_every_worker_even_mid_call(script_model: ModelSpec) -> None:
    slow = {**CONTEXT, "case_id": "slow"}

    async def leave_a_call_running() -> list[int]:
        pool = ModelWorkerPool(3)
        await pool.start()
        pids = pool.pids
        call = asyncio.create_task(pool.complete(script_model, [{"role": "user", "content": "hi"}], [], ToolNameMap(), context=slow))
        await asyncio.sleep(0.3)
        await pool.close()
        call.cancel()
        return pids

    started = time.monotonic()
    pids = asyncio.run(leave_a_call_running())
    assert len(set(pids)) == 3
    assert not any(_alive(pid) for pid in pids)
    assert time.monotonic() - started < 10  # the 20 s call did not hold the pool open


def test_worker_count_follows_the_concurrency() -> None:
    assert [auto_worker_count(c) for c in (1, 4, 5, 8, 16, 1000)] == [0, 0, 5, 8, 16, workers.MAX_MODEL_WORKERS]


def test_a_run_whose_worker_dies_stops_with_one_line_and_keeps_what_it_stored(tmp_path: Path, script_model: ModelSpec, reference_url: str) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    db = tmp_path / "evals.duckdb"
    config = BehaviourConfig(golden_path=tmp_path / "tasks.yaml", models=(script_model,), db_path=db, runs=3, concurrency=8, model_workers=2, batch_seconds=0.1)

    async def run_and_kill_workers() -> None:
        run = asyncio.create_task(run_behaviour(config, Target(url=reference_url)))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (db.exists() and list_runs(db) and list_runs(db)[0]["attempts"] >= 3):
            await asyncio.sleep(0.1)  # the three quick attempts are stored; the three slow ones are in flight
        for pid in _zygote_children():
            os.kill(pid, signal.SIGKILL)
        await asyncio.wait_for(run, 30)

    with pytest.raises(ModelWorkerError, match=r"^model worker \(pid \d+\) stopped with \d call\(s\) in flight$"):
        asyncio.run(run_and_kill_workers())
    (run,) = list_runs(config.db_path)
    assert run["status"] == "failed" and "ModelWorkerError" in run["error"]
    assert sorted(r["case_id"] for r in load_attempts(config.db_path, run["run_id"])) == ["quick", "quick", "quick"]


def _zygote_children() -> list[int]:
    zygote = zygote_module._zygote
    assert zygote is not None
    pid = zygote._process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    assert children, "the run's workers are the zygote's children"
    return [int(child) for child in children]


def test_sigterm_stops_a_run_like_ctrl_c_and_leaves_no_process_behind(tmp_path: Path, script_model: ModelSpec) -> None:
    (tmp_path / "tasks.yaml").write_text(GOLDEN)
    db = tmp_path / "evals.duckdb"
    command = [sys.executable, "-m", "evalcore", "run", "--golden", str(tmp_path / "tasks.yaml"), "--models", script_model.name]
    command += ["--db", str(db), "--runs", "4", "--concurrency", "8", "--model-workers", "2", "--timeout", "60"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (db.exists() and list_runs(db) and list_runs(db)[0]["attempts"] >= 4):
            time.sleep(0.1)  # the quick attempts are stored; the slow ones wait in the workers
        descendants = _descendants(process.pid)
        assert len(descendants) >= 4  # the reference server, the zygote and its two workers
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130 and stderr.strip().splitlines()[-1] == "interrupted"
    (run,) = list_runs(db)
    assert run["effective_status"] == "cancelled" and run["attempts"] == 4
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in descendants) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in descendants if _alive(pid)]


def _descendants(pid: int) -> list[int]:
    children = [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return children + [grandchild for child in children for grandchild in _descendants(child)]
