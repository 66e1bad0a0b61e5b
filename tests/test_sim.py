"""The sim policies as pure functions: argument filling, lexical ranking, script resolution, the overlap judge."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalcore.errors import ConfigError
from evalcore.models.judge_prompt import judge_user_message, section
from evalcore.models.sim.arguments import fill_arguments
from evalcore.models.sim.judge_policy import PASS_OVERLAP, verdict
from evalcore.models.sim.lexical import MIN_COVERAGE, choose_tool, lexical_reply, rank_tools
from evalcore.models.sim.script import UNKNOWN_CASE_TEXT, parse_script, script_reply
from evalcore.models.sim.server import completion_body
from evalcore.models.sim.text import content_terms, stem

DOCS = Path(__file__).resolve().parent.parent / "docs" / "sim-models.md"
EMAIL = {"type": "string", "pattern": r"^[^@\s]+@[^@\s]+\.[^@\s]+$"}


def tool(name: str, description: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties or {}, "required": required or []}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


# --- argument filling -------------------------------------------------------------------------------


def test_dates_and_times_compose_into_date_times_and_emails_fill_in_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "start": {"type": "string", "format": "date-time"},
            "end": {"type": "string", "format": "date-time"},
            "attendees": {"type": "array", "items": EMAIL},
        },
        "required": ["title", "start", "end", "attendees"],
    }
    prompt = "Create a calendar event 'Acme renewal call' on 2026-08-05 from 10:00 to 10:30 with billing@acme.example and ops@desk.example."
    assert fill_arguments(schema, prompt) == {
        "title": "Acme renewal call",
        "start": "2026-08-05T10:00:00Z",
        "end": "2026-08-05T10:30:00Z",
        "attendees": ["billing@acme.example", "ops@desk.example"],
    }
    explicit = fill_arguments(schema, "Book it from 2026-08-05T09:00:00+02:00 to 2026-08-05T09:45:00+02:00")
    assert (explicit["start"], explicit["end"]) == ("2026-08-05T09:00:00+02:00", "2026-08-05T09:45:00+02:00")


def test_each_value_is_used_once_so_to_and_cc_differ() -> None:
    schema = {
        "type": "object",
        "properties": {
            "to": EMAIL,
            "cc": {"anyOf": [{"type": "array", "items": EMAIL}, {"type": "null"}]},
            "subject": {"type": "string"},
            "body": {"type": "string"},
        },
        "required": ["to", "subject", "body"],
    }
    arguments = fill_arguments(schema, 'Email ana@x.example and copy bo@y.example: subject "Renewal", body "See you Monday."', tool_name="send_email")
    assert arguments == {"to": "ana@x.example", "cc": ["bo@y.example"], "subject": "Renewal", "body": "See you Monday."}


def test_enums_resolve_through_refs_and_stems() -> None:
    schema = {
        "type": "object",
        "$defs": {"Units": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "Status": {"type": "string", "enum": ["open", "closed"]}},
        "properties": {"units": {"$ref": "#/$defs/Units"}, "status": {"$ref": "#/$defs/Status"}},
    }
    assert fill_arguments(schema, "Close it and show fahrenheit") == {"units": "fahrenheit", "status": "closed"}
    assert fill_arguments(schema, "nothing relevant") == {}


def test_numbers_respect_bounds_and_ids_are_not_numbers() -> None:
    schema = {
        "type": "object",
        "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 10}, "customer_id": {"type": "string", "pattern": r"^CUST-\d{4}$"}},
    }
    assert fill_arguments(schema, "Show 5 articles for CUST-1001") == {"limit": 5, "customer_id": "CUST-1001"}
    assert fill_arguments(schema, "Show 50 articles for CUST-1001.") == {"customer_id": "CUST-1001"}
    assert fill_arguments(schema, "for cust-1001 on 2026-01-01 at 10:30") == {}  # a lower-case id does not match; dates and times are not numbers


def test_free_text_by_property_name_and_what_is_left_out() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "note": {"type": "string"}, "notify": {"type": "boolean"}, "odd": {"type": "string", "pattern": "(?<x>a)"}},
        "required": ["city", "notify", "odd"],
    }
    assert fill_arguments(schema, "What's the weather like in New York today?") == {"city": "New York", "notify": False}
    query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    assert fill_arguments(query, "Please search the knowledge base for the refund policy", tool_name="search_knowledge_base") == {"query": "refund policy"}
    assert fill_arguments({"type": "object"}, "anything") == {}


# --- lexical ranking --------------------------------------------------------------------------------

TOOLS = [
    tool("getWeather", "Current weather for a city.", {"city": {"type": "string", "description": "City name"}}, ["city"]),
    tool("search_invoices", "Search a customer's invoices by status.", {"status": {"type": "string", "enum": ["paid", "open"]}}),
    tool("send_email", "Send an email message.", {"to": EMAIL}),
]


def test_ranking_prefers_the_tool_whose_words_match() -> None:
    ranked = rank_tools("Is it raining? What's the weather in Oslo?", TOOLS)
    assert ranked[0].name == "getWeather" and ranked[0].bm25 > ranked[1].bm25
    chosen = choose_tool("find my paid invoices", TOOLS)
    assert chosen is not None and chosen.name == "search_invoices" and chosen.coverage >= MIN_COVERAGE
    assert choose_tool("write me a sonnet about the sea", TOOLS) is None
    assert choose_tool("weather", TOOLS[:1]) is not None  # a single offered tool still gets called when it fits
    assert choose_tool("anything", []) is None


def test_lexical_reply_summarises_a_tool_result_and_stops() -> None:
    messages = [
        {"role": "user", "content": "weather in Oslo"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "getWeather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x" * 400},
    ]
    reply = lexical_reply(messages, TOOLS)
    assert reply.tool_calls == () and reply.text == "Here is what getWeather returned: " + "x" * 299 + "…"
    failed = lexical_reply([*messages[:2], {"role": "tool", "tool_call_id": "c1", "content": "Error: no station"}], TOOLS)
    assert failed.text == "The tool getWeather reported a problem: Error: no station"


def test_stemming_meets_in_the_middle() -> None:
    assert stem("invoices") == stem("invoice") and stem("scheduled") == stem("schedule") == stem("scheduling")
    assert content_terms("Please show the 3 overdue invoices") == ["overdu", "invoic"]


# --- scripts ----------------------------------------------------------------------------------------


def documented_script() -> Any:
    block = re.search(r"```yaml\n(.*?)```", DOCS.read_text(), re.DOTALL)
    assert block is not None
    return yaml.safe_load(block.group(1))


def reply_for(document: Any, case_id: str, attempt: int = 1, run_date: str = "2026-10-01", turn: int = 0) -> Any:
    script = parse_script(Path("doc.yaml"), document)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "x"}] + [{"role": "assistant", "content": None}] * turn
    return script_reply(script, messages, {"case_id": case_id, "attempt": attempt, "run_date": run_date})


def test_the_documented_script_example_means_what_the_docs_say() -> None:
    document = documented_script()
    first = reply_for(document, "weather-paris")
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("get_weather", '{"city": "Paris"}')]
    assert (first.latency_ms, first.input_tokens, first.output_tokens, first.model_version) == (120, 210, 35, "sim-script")
    assert reply_for(document, "weather-paris", turn=1).text == "It is 18 degrees and cloudy in Paris."
    assert reply_for(document, "weather-paris", attempt=3).tool_calls[0].arguments == '{"city": "London"}'
    assert reply_for(document, "weather-paris", attempt=4).error_status == 503
    november = reply_for(document, "weather-paris", attempt=4, run_date="2026-11-01")  # the from-block replaced the case, attempts included
    assert november.error_status is None and november.tool_calls[0].arguments == '{"city": "paris"}'
    assert november.model_version == "sim-script-2026-11" and november.latency_ms == 0
    assert [reply_for(document, "invoice-then-email", turn=t).tool_calls[0].name for t in (0, 1)] == ["search_invoices", "send_email"]
    assert reply_for(document, "invoice-then-email", turn=2).text == "I found the overdue invoice and emailed billing."
    assert reply_for(document, "chit-chat").text == "Hello! How can I help?"
    assert reply_for(document, "broken-arguments").tool_calls[0].arguments == '{"invoice_id": "INV-'
    assert reply_for(document, "nobody").text == UNKNOWN_CASE_TEXT


def test_from_blocks_accumulate_in_date_order() -> None:
    document = {
        "cases": {"a": {"text": "a0"}, "b": {"text": "b0"}},
        "from": {"2026-12-01": {"cases": {"b": {"text": "b2"}}}, date(2026, 11, 1): {"cases": {"a": {"text": "a1"}}}},
    }
    assert [reply_for(document, case, run_date="2026-12-05").text for case in ("a", "b")] == ["a1", "b2"]
    assert [reply_for(document, case, run_date="2026-11-15").text for case in ("a", "b")] == ["a1", "b0"]
    assert [reply_for(document, case, run_date="2026-10-31").text for case in ("a", "b")] == ["a0", "b0"]


def test_parallel_calls_come_in_one_turn() -> None:
    document = {"cases": {"p": {"parallel": True, "calls": [{"name": "a"}, {"name": "b"}], "text": "both"}}}
    assert [c.name for c in reply_for(document, "p").tool_calls] == ["a", "b"]
    assert reply_for(document, "p", turn=1).text == "both"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"cases": {"a": {"calls": [{"args": {}}]}}}, r"case 'a': calls\[0\]: needs a tool name"),
        ({"cases": {"a": {"attempts": {"first": {}}}}}, r"case 'a': attempt key 'first' is not a number"),
        ({"cases": {"a": {"tokens": {"input": -1}}}}, r"case 'a': tokens must be"),
        ({"cases": {"a": {"calls": [{"name": "x", "raw_args": {}}]}}}, r"case 'a': calls\[0\]: raw_args must be a string"),
        ({"from": {"soon": {}}}, r"from: 'soon' is not a date"),
        ({"defaults": {"text": "hi"}}, r"defaults: unknown key 'text'"),
        ({"case": {}}, r"top level: unknown key 'case'"),
    ],
)
def test_script_mistakes_are_config_errors_that_say_where(document: Any, problem: str) -> None:
    with pytest.raises(ConfigError, match=rf"^sim script doc.yaml: {problem}"):
        parse_script(Path("doc.yaml"), document)


# --- the overlap judge and the HTTP body -----------------------------------------------------------


def test_overlap_judge_threshold() -> None:
    rubric = "The answer gives the temperature and the humidity."
    assert verdict(rubric, "task", "temperature 18")["score"] == PASS_OVERLAP and verdict(rubric, "task", "temperature 18")["pass"]
    assert not verdict(rubric, "task", "it is fine")["pass"]
    assert verdict(None, "Where is order ORD-50001?", "Order ORD-50001 ships Monday.")["pass"]  # no case rubric: the task's words
    assert not verdict(rubric, "task", None)["pass"]


def test_judge_prompt_sections_round_trip() -> None:
    text = judge_user_message(rubric="R", case_rubric=None, prompt="P", tool_calls_summary="", final_text="A\nB")
    assert section(text, "final_answer") == "A\nB" and section(text, "task") == "P"
    assert section(text, "tool_calls") == "(no tool calls)"


def test_http_body_is_an_openai_chat_completion() -> None:
    messages = [{"role": "user", "content": "weather in Oslo"}]
    body = completion_body("sim-lexical", lexical_reply(messages, TOOLS), messages)
    choice = body["choices"][0]
    assert body["object"] == "chat.completion" and choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "getWeather", "arguments": '{"city": "Oslo"}'}
    assert body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    assert body["id"] == completion_body("sim-lexical", lexical_reply(messages, TOOLS), messages)["id"]
