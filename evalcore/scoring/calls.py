"""Pure logic: per-call telemetry from stored transcripts (Layer 3): model calls per model, MCP tool calls per tool.

An attempt's latency (in `metrics`) is its model time summed over turns; here
each model call and each tool call counts once, so p50/p95 describe a single
call. Retries are re-sent requests (provider retries for a model call, a cut
stream re-issued with a new id for a tool call). Cost per call is the mean over
calls, and None when any call's price is unknown: a cost is never guessed.

A tool call is a server call only when it was sent: a call of a distractor tool
(`evalcore perturb`, error_type `distractor`) is the model's wrong choice, never
the server's, so it is in no tool's calls, errors or latency.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.records import DISTRACTOR
from evalcore.scoring.metrics import percentile


@dataclass(frozen=True)
class ModelCallStats:
    model: str
    calls: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    mean_input_tokens: float | None  # per call, over calls that reported a count
    mean_output_tokens: float | None
    cost_per_call_usd: float | None
    retries: int


@dataclass(frozen=True)
class ToolCallStats:
    tool: str
    calls: int
    error_rate: float
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    retries: int
    faults: tuple[tuple[str, int], ...]  # (injected fault, calls that had it), most common first


def model_call_stats(model: str, transcripts: Iterable[Mapping[str, Any]]) -> ModelCallStats:
    """Every model turn of the model's attempts (`transcripts` are parsed `transcript_json`s)."""
    transcripts = list(transcripts)
    turns = [turn for transcript in transcripts for turn in transcript.get("turns") or []]
    return model_turn_stats(model, turns, sum(int(t.get("retries") or 0) for t in transcripts))


def model_turn_stats(model: str, turns: Sequence[Mapping[str, Any]], failed_call_retries: int = 0) -> ModelCallStats:
    """The per-call figures of a model's turns (each a transcript's `turns` entry: latency_ms, tokens, cost_usd, retries).

    `retries` counts every provider retry, those of calls that failed beyond their retries too
    (`failed_call_retries`, the transcripts' own `retries`): the same sum as the run metrics' `retries`.
    """
    costs: list[float | None] = [turn.get("cost_usd") for turn in turns]
    known = [cost for cost in costs if cost is not None]
    return ModelCallStats(
        model=model,
        calls=len(turns),
        latency_p50_ms=percentile(_numbers(turns, "latency_ms"), 50),
        latency_p95_ms=percentile(_numbers(turns, "latency_ms"), 95),
        mean_input_tokens=_mean(_numbers(turns, "input_tokens")),
        mean_output_tokens=_mean(_numbers(turns, "output_tokens")),
        cost_per_call_usd=math.fsum(known) / len(costs) if costs and len(known) == len(costs) else None,  # fsum: any order, one result
        retries=sum(int(turn.get("retries") or 0) for turn in turns) + failed_call_retries,
    )


def tool_call_stats(transcripts: Iterable[Mapping[str, Any]]) -> list[ToolCallStats]:
    """Every executed tool call of the transcripts, grouped by tool name, in name order."""
    return execution_stats(execution for transcript in transcripts for execution in transcript.get("executions") or [])


def execution_stats(executions: Iterable[Mapping[str, Any]]) -> list[ToolCallStats]:
    """Tool executions (a transcript's `executions` entries: tool, is_error, latency_ms, request_ids, error_type, fault)
    sent to the server, per tool, in name order; calls of a distractor tool were never sent and are left out."""
    by_tool: dict[str, list[Mapping[str, Any]]] = {}
    for execution in executions:
        if execution.get("error_type") != DISTRACTOR:
            by_tool.setdefault(str(execution.get("tool")), []).append(execution)
    stats = []
    for tool, executions in sorted(by_tool.items()):
        latencies = _numbers(executions, "latency_ms")
        faults: dict[str, int] = {}
        for execution in executions:
            fault = _fault(execution)
            if fault is not None:
                faults[fault] = faults.get(fault, 0) + 1
        stats.append(
            ToolCallStats(
                tool=tool,
                calls=len(executions),
                error_rate=sum(1 for e in executions if e.get("is_error")) / len(executions),
                latency_p50_ms=percentile(latencies, 50),
                latency_p95_ms=percentile(latencies, 95),
                retries=sum(max(0, len(e.get("request_ids") or []) - 1) for e in executions),
                faults=tuple(sorted(faults.items(), key=lambda item: (-item[1], item[0]))),
            )
        )
    return stats


def parsed_transcripts(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Stored attempt rows' transcripts, parsed, per model (rows without one are skipped)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("transcript_json"):
            out.setdefault(str(row["model"]), []).append(json.loads(row["transcript_json"]))
    return out


def _fault(execution: Mapping[str, Any]) -> str | None:
    """The fault injected into the call, or None: only a fault's name is one (a missing value read from a table is NaN,
    which is truthy and would count every call as faulted)."""
    fault = execution.get("fault")
    return fault if isinstance(fault, str) and fault else None


def _numbers(items: Iterable[Mapping[str, Any]], key: str) -> list[float]:
    return [float(item[key]) for item in items if isinstance(item.get(key), int | float)]


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None
