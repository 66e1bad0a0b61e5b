"""Pure data and helpers: what a sim model answers, and reading an OpenAI-shaped conversation.

Both the litellm custom provider and the HTTP endpoint turn a `SimReply` into
their own response objects; the policies (lexical, script, judge) only ever
produce `SimReply` values, so one policy behaves the same on both paths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

_COUNTED_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class SimToolCall:
    name: str
    arguments: str  # JSON text, verbatim (a script may plant malformed JSON on purpose)


@dataclass(frozen=True)
class SimReply:
    text: str | None
    tool_calls: tuple[SimToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    model_version: str = "sim"
    error_status: int | None = None  # a scripted provider failure: the HTTP status to fail with
    error_message: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def finish_reason(self) -> Literal["tool_calls", "stop"]:
        return "tool_calls" if self.tool_calls else "stop"


def count_tokens(text: str) -> int:
    """A stand-in tokenizer: words and punctuation marks. Deterministic, not any provider's count."""
    return len(_COUNTED_TOKEN.findall(text))


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping) and part.get("type") == "text")
    return ""


def last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    return next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")


def assistant_turns(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many assistant messages the conversation already has: the index of the turn being asked for."""
    return sum(1 for m in messages if m.get("role") == "assistant")


def last_tool_result(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """(tool name, result text) when the conversation ends with a tool result, else None."""
    if not messages or messages[-1].get("role") != "tool":
        return None
    result = messages[-1]
    call_id = result.get("tool_call_id")
    name = str(result.get("name") or "the tool")
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if isinstance(call, Mapping) and call.get("id") == call_id:
                name = str((call.get("function") or {}).get("name", name))
    return name, message_text(result)


def request_tokens(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> int:
    return count_tokens(json.dumps(list(messages), default=str)) + count_tokens(json.dumps(list(tools or []), default=str))


def reply_tokens(text: str | None, calls: Sequence[SimToolCall]) -> int:
    return count_tokens(text or "") + sum(count_tokens(call.name) + count_tokens(call.arguments) for call in calls)


def call_id(turn: int, index: int) -> str:
    """Deterministic tool-call ids, unique within one conversation."""
    return f"call_sim_{turn}_{index}"


def openai_message(reply: SimReply, turn: int) -> dict[str, Any]:
    """The assistant message in OpenAI chat-completions shape."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call_id(turn, index), "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for index, call in enumerate(reply.tool_calls)
        ]
    return message
