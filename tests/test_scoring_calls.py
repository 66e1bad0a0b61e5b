"""Per-call telemetry (Layer 3): model calls per model and tool calls per tool, from stored transcripts."""

from __future__ import annotations

import json

import pytest

from evalcore.behaviour.report import render_summary
from evalcore.scoring.calls import model_call_stats, parsed_transcripts, tool_call_stats


def _turn(latency: float, cost: float | None = 0.001, retries: int = 0) -> dict:
    return {"latency_ms": latency, "input_tokens": 100, "output_tokens": 20, "cost_usd": cost, "retries": retries}


def _execution(tool: str, latency: float, *, ids: list[int] | None = None, is_error: bool = False, fault: str | None = None) -> dict:
    return {"tool": tool, "latency_ms": latency, "is_error": is_error, "request_ids": ids or [1], "fault": fault}


TRANSCRIPTS = [
    {"turns": [_turn(10), _turn(20, retries=2)], "executions": [_execution("get_weather", 5), _execution("get_weather", 7, ids=[3, 4], fault="stream_cut")]},
    {
        "turns": [_turn(30), _turn(40), _turn(100)],
        "executions": [_execution("get_weather", 9, is_error=True, fault="stream_cut"), _execution("send_email", 50)],
    },
]


def test_model_calls_count_each_turn_once():
    stats = model_call_stats("m", TRANSCRIPTS)
    assert stats.calls == 5 and stats.retries == 2
    assert stats.latency_p50_ms == 30
    assert stats.latency_p95_ms == pytest.approx(40 + 0.8 * 60)  # Hyndman-Fan 7 between the two slowest
    assert stats.mean_input_tokens == 100 and stats.mean_output_tokens == 20
    assert stats.cost_per_call_usd == pytest.approx(0.001)


def test_an_unknown_price_leaves_cost_per_call_unknown():
    assert model_call_stats("m", [{"turns": [_turn(10), _turn(10, cost=None)]}]).cost_per_call_usd is None
    empty = model_call_stats("m", [])
    assert empty.calls == 0 and empty.latency_p50_ms is None and empty.cost_per_call_usd is None


def test_tool_calls_per_tool_with_retries_and_faults():
    weather, email = tool_call_stats(TRANSCRIPTS)
    assert (weather.tool, weather.calls, weather.retries) == ("get_weather", 3, 1)
    assert weather.error_rate == pytest.approx(1 / 3) and weather.latency_p50_ms == 7
    assert weather.faults == (("stream_cut", 2),)
    assert (email.tool, email.calls, email.retries, email.faults) == ("send_email", 1, 0, ())


def test_older_transcripts_without_request_ids_still_count():
    (stats,) = tool_call_stats([{"executions": [{"tool": "t", "latency_ms": 1.0, "is_error": False}]}])
    assert stats.calls == 1 and stats.retries == 0 and stats.faults == ()


def test_rows_are_grouped_by_model_and_the_summary_shows_per_call_numbers():
    rows = [{"model": "a", "transcript_json": json.dumps(t)} for t in TRANSCRIPTS] + [{"model": "b", "transcript_json": None}]
    grouped = parsed_transcripts(rows)
    assert list(grouped) == ["a"] and len(grouped["a"]) == 2
    report = {
        "runId": "r",
        "golden": {"path": "g"},
        "server": {"target": "t"},
        "runs": 1,
        "models": [{"model": "a", "simulated": False, "metrics": {"cost_per_correct_usd": 0.0025}, "modelCalls": {"calls": 5, "latency_p95_ms": 88.0}}],
        "toolCalls": [
            {
                "tool": "get_weather",
                "calls": 3,
                "latency_p50_ms": 7,
                "latency_p95_ms": 8.8,
                "error_rate": 1 / 3,
                "retries": 1,
                "faults": [{"fault": "stream_cut", "calls": 2}],
            }
        ],
        "caseGates": {"failing": []},
        "baseline": None,
    }
    text = render_summary(report)
    assert "0.00250" in text and "88" in text and "stream_cut×2" in text
    # A simulated model has no price, in the model-calls table as in the summary above it (and on the dashboard): never 0.00000.
    simulated = {
        **report["models"][0],
        "model": "sim/lexical",
        "simulated": True,
        "metrics": {"cost_per_correct_usd": 0.0},
        "modelCalls": {"calls": 5, "cost_per_call_usd": 0.0},
    }
    text = render_summary({**report, "models": [simulated]})
    (row,) = [line for line in text.split("model calls", 1)[1].splitlines() if line.startswith("sim/lexical ")]
    assert "0.00000" not in row and row.count("no price") == 2
