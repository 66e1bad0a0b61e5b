"""Orchestration: the arms of a comparison (or of a perturbation sweep), run side by side in one process, each stored
as an ordinary behaviour run.

Every arm runs the same golden set and models, N attempts each per (model,
case), at the same time (`asyncio.TaskGroup`), so time of day and provider
load hit them alike; a failure of one arm cancels the others, which the store
then shows as cancelled. A candidate is another server, or the same one
whose tools the models see rewritten (`BehaviourConfig.catalog`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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
    first, second = await run_side_by_side([baseline, candidate], progress)
    return first, second


async def run_side_by_side(arms: Sequence[Arm], progress: ProgressCallback | None = None) -> list[RunReport]:
    """Run every arm at once; their reports (each also stored as a behaviour run), in the order given."""
    done: dict[int, tuple[int, int]] = {}

    def arm_progress(index: int) -> ProgressCallback:
        def report(finished: int, total: int) -> None:
            done[index] = (finished, total)
            if progress is not None:
                progress(sum(d for d, _ in done.values()), sum(t for _, t in done.values()))

        return report

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run_behaviour(arm.config, arm.target, progress=arm_progress(i))) for i, arm in enumerate(arms)]
    except BaseExceptionGroup as failed:  # the first arm's failure, as the command reports one (the others were cancelled)
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


async def server_tool_names(target: Target, limits: Limits) -> list[str]:
    """The names of the tools the server lists (every page), to check overrides against before any run starts."""
    return [str(tool.get("name")) for tool in await server_tools(target, limits)]


async def server_tools(target: Target, limits: Limits) -> list[dict[str, Any]]:
    """The tools the server lists (every page), as it lists them."""
    client = McpClient(target.open(limits), limits=limits)
    try:
        listing = await client.list_all("tools/list", max_pages=MAX_TOOL_PAGES)
        if listing.failed is not None:
            raise TargetError(f"{target} did not list its tools: {listing.failed.describe()} (run `python -m evalcore conformance` on it)")
        return listing.items
    finally:
        await client.aclose()
