"""A refusal (`message.refusal`) is the model's answer: kept on the turn, shown in the drill-down as a refusal, and
scored as an answer (a correct non-call on a negative case; on a positive case selection fails, "refused")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from evalcore.behaviour.agent import AgentTools, run_agent
from evalcore.dashboard.conversation import conversation
from evalcore.golden.model import GoldenCase
from evalcore.models.openai_route import ROUTE_VARIABLE
from evalcore.models.types import ModelSpec
from evalcore.records import Transcript
from evalcore.scoring.attempt import score_attempt
from tests.scripted_openai import Scripted, scripted_openai

REFUSAL = "I can't help with that."


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Scripted]:
    with scripted_openai() as scripted:
        yield scripted


def _refused(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch, route: str) -> Transcript:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-refusal-placeholder")
    monkeypatch.setenv(ROUTE_VARIABLE, route)
    spec = ModelSpec("openai/my-model", api_base=f"{endpoint.url}/v1", max_retries=0)
    tools = AgentTools.from_mcp([{"name": "get_weather", "inputSchema": {"type": "object"}}])
    agent = run_agent(prompt="CASE:refusal", system="Be brief.", model=spec, mcp=None, tools=tools, context={})  # type: ignore[arg-type]  # never called
    return asyncio.run(agent)


@pytest.mark.parametrize("route", ["", "litellm"])
def test_a_refusal_is_the_answer_kept_and_shown_as_a_refusal(endpoint: Scripted, route: str, monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = _refused(endpoint, monkeypatch, route)
    assert transcript.turns[0].refusal == REFUSAL and transcript.turns[0].text is None
    assert transcript.refused and transcript.final_text == REFUSAL and transcript.stop_reason == "final"
    stored = json.loads(transcript.to_json())
    assert stored["turns"][0]["refusal"] == REFUSAL
    entries = conversation(stored)
    assert [(entry.title, entry.body) for entry in entries if entry.kind == "assistant"] == [("Assistant (refused)", REFUSAL)]


def test_a_refusal_scores_as_an_answer(endpoint: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = _refused(endpoint, monkeypatch, "")
    attempt = {"final_text": transcript.final_text, "stop_reason": transcript.stop_reason, "model_turns": len(transcript.turns), "refused": transcript.refused}
    negative = score_attempt(GoldenCase("chitchat", "Tell me a secret.", None), transcript.tool_calls, **attempt)
    assert negative.passed and negative.selection_correct and negative.reasons == ()  # a correct non-call, and an answer
    positive = score_attempt(GoldenCase("weather", "Weather in Paris?", "get_weather", {"city": "Paris"}), transcript.tool_calls, **attempt)
    assert not positive.passed and positive.selection_correct is False
    assert positive.reasons == ("refused",)  # not "the final answer is empty", nor "called no tool"
