"""Orchestration: the two arms of a comparison, run side by side in one process, each stored as an ordinary behaviour run.

Both arms run the same golden set and models, N attempts each per (model,
case), at the same time (`asyncio.TaskGroup`), so time of day and provider
load hit both alike; a failure of one arm cancels the other, which the store
then shows as cancelled. The candidate is another server, or the same one
whose tools the models see rewritten (`BehaviourConfig.tool_overrides`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from evalcore.behaviour.runner import BehaviourConfig, run_behaviour
from evalcore.errors import TargetError
from evalcore.mcp.client import McpClient
from evalcore.mcp.target import Target
from evalcore.mcp.transport.base import Limits
from evalcore.records import RunReport

ProgressCallback = Callable[[int, int], None]
MAX_TOOL_PAGES = 50


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: what it runs, against what."""

    config: BehaviourConfig
    target: Target


async def run_arms(baseline: Arm, candidate: Arm, progress: ProgressCallback | None = None) -> tuple[RunReport, RunReport]:
    """Run both arms at once; their reports (each also stored as a behaviour run), baseline first."""
    done: dict[str, tuple[int, int]] = {}

    def arm_progress(name: str) -> ProgressCallback:
        def report(finished: int, total: int) -> None:
            done[name] = (finished, total)
            if progress is not None:
                progress(sum(d for d, _ in done.values()), sum(t for _, t in done.values()))

        return report

    try:
        async with asyncio.TaskGroup() as group:
            first = group.create_task(run_behaviour(baseline.config, baseline.target, progress=arm_progress("baseline")))
            second = group.create_task(run_behaviour(candidate.config, candidate.target, progress=arm_progress("candidate")))
    except BaseExceptionGroup as failed:  # the first arm's failure, as the command reports one (the other arm was cancelled)
        raise failed.exceptions[0] from None
    return first.result(), second.result()


async def server_tool_names(target: Target, limits: Limits) -> list[str]:
    """The names of the tools the server lists (every page), to check overrides against before any run starts."""
    client = McpClient(target.open(limits), limits=limits)
    try:
        names: list[str] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            exchange = await client.request("tools/list", {"cursor": cursor} if cursor else None)
            result = exchange.result
            if result is None or not isinstance(result.get("tools"), list):
                raise TargetError(f"{target} did not list its tools: {exchange.describe()} (run `python -m evalcore conformance` on it)")
            names.extend(str(tool.get("name")) for tool in result["tools"] if isinstance(tool, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return names
    finally:
        await client.aclose()
