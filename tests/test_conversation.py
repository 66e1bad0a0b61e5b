"""An attempt's transcript as a conversation: the order, the folded results, the highlighted failure, `_meta` left out."""

from __future__ import annotations

from evalcore.dashboard.conversation import calls_side_by_side, conversation, without_meta

TRANSCRIPT = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris, then Lyon?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
                {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "21 C"},
        {"role": "tool", "tool_call_id": "c2", "content": "unknown city"},
        {"role": "assistant", "content": "Paris: 21 C. Lyon: unknown."},
    ],
    "executions": [
        {
            "tool": "get_weather",
            "arguments": {"city": "Paris"},
            "result": {"content": [], "_meta": {"x": 1}},
            "error": None,
            "is_error": False,
            "latency_ms": 12.4,
        },
        {"tool": "get_weather", "arguments": {"city": "Lyon"}, "result": None, "error": "JSON-RPC -32602: unknown city", "is_error": True, "latency_ms": 3.0},
    ],
    "final_text": "Paris: 21 C. Lyon: unknown.",
    "stop_reason": "final",
    "error": None,
}


def test_a_transcript_reads_as_a_conversation_in_order():
    entries = conversation(TRANSCRIPT)
    assert [e.kind for e in entries] == ["system", "user", "tool_call", "tool_call", "tool_result", "tool_result", "assistant"]
    assert entries[0].folded and not entries[1].folded
    assert entries[2].title == "Tool call · get_weather" and '"city": "Paris"' in entries[2].body
    paris, lyon = entries[4], entries[5]
    assert paris.title == "Tool result · get_weather · 12 ms" and paris.folded and not paris.failed and paris.body == "21 C"
    assert lyon.failed and not lyon.folded and "protocol or transport error" in lyon.title and lyon.body == "JSON-RPC -32602: unknown city"
    assert entries[-1].body == "Paris: 21 C. Lyon: unknown." and entries[-1].title == "Assistant"  # the final answer, once


def test_a_stopped_attempt_ends_with_its_error_and_unseen_executions():
    transcript = {**TRANSCRIPT, "messages": TRANSCRIPT["messages"][:3], "final_text": None, "stop_reason": "model_error", "error": "timeout after 30s"}
    entries = conversation(transcript)
    assert [e.kind for e in entries[-3:]] == ["tool_result", "tool_result", "error"]
    assert entries[-3].body == '{\n  "content": []\n}'  # the result, without its _meta
    assert entries[-1].failed and entries[-1].title == "Attempt stopped: model_error" and entries[-1].body == "timeout after 30s"


def test_final_text_missing_from_the_messages_is_shown_once():
    entries = conversation({"messages": [{"role": "user", "content": "hi"}], "final_text": "Hello!"})
    assert [(e.kind, e.body) for e in entries] == [("user", "hi"), ("assistant", "Hello!")]


def test_meta_is_left_out_at_any_depth_and_calls_line_up():
    assert without_meta({"a": [{"_meta": 1, "b": 2}], "_meta": {}}) == {"a": [{"b": 2}]}
    expected = {"expect_tool": "get_weather", "expect_args": {"city": "Paris"}, "expect_sequence": []}
    want, got = calls_side_by_side(expected, [{"name": "get_weather", "arguments": {"city": "Lyon"}}])
    assert want == 'get_weather {"city": "Paris"}' and got == 'get_weather {"city": "Lyon"}'
    assert calls_side_by_side({"expect_tool": None}, [])[0] == "(no tool call: a negative case)"
    assert calls_side_by_side(None, [])[1] == "(no tool calls)"
