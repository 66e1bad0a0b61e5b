"""Pure logic: the `sim/lexical` model, a deterministic baseline that picks a tool by lexical relevance.

It never sees golden expectations: only the conversation and the tools as
offered (OpenAI function tools). For the last user message:

1. Each tool is a document of its name (split into words, counted twice, as
   names are the strongest signal), its description, and its parameters' names
   and descriptions. Words are tokenised, lower-cased, stop-words dropped and
   lightly stemmed (`evalcore.models.sim.text`).
2. Tools are ranked by Okapi BM25 (k1 = 1.2, b = 0.75; Robertson & Zaragoza,
   "The Probabilistic Relevance Framework: BM25 and Beyond", 2009), with
   idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)) over the N offered tools.
   Ties go to the tool offered first.
3. The top tool is called only when its coverage, the idf-weighted share of
   the distinct query words it contains, sum idf(t in query and tool) / sum
   idf(t in query), is at least `MIN_COVERAGE` (0.2). Query words no tool
   contains get the highest idf, so off-topic requests ("tell me a joke")
   score near 0 and get a text answer instead of a call.
4. Arguments come from the prompt (`evalcore.models.sim.arguments`). When a
   required argument that only the user can supply (one with a `pattern`,
   such as an id) cannot be filled, it asks the user for it instead of
   calling: "Which ticket id do you mean? ..." - as real models do.

In a conversation with several user messages (a simulated user answering a
question), steps 1-4 read all the user's messages together.

Once a tool result is in the conversation it answers in text with the first
300 characters of that result: one tool call per task. It will miss
multi-step cases, which is an honest baseline result.

A request offering no tools at all is a plain completion (an MCP server's
`sampling/createMessage`, answered by the model under test): it answers with
the last paragraph of the last user message, at most 300 characters, an
extractive stand-in for a summary.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.models.sim.arguments import fill_arguments
from evalcore.models.sim.reply import SimReply, SimToolCall, last_tool_result, last_user_text, message_text, reply_tokens, request_tokens
from evalcore.models.sim.text import content_terms, split_identifier, without_values
from evalcore.redaction import clip

LEXICAL_VERSION = "lexical-1"
MIN_COVERAGE = 0.2
BM25_K1 = 1.2
BM25_B = 0.75
NAME_WEIGHT = 2
RESULT_PREVIEW_CHARS = 300
NO_TOOL_TEXT = "I can answer that without tools: none of the available tools fits this request, so I will not call one."


@dataclass(frozen=True)
class ToolScore:
    name: str
    bm25: float
    coverage: float


def function_of(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    """The function part of an OpenAI tool; an MCP tool dict is read as its own function."""
    function = tool.get("function")
    return function if isinstance(function, Mapping) else tool


def parameters_of(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    function = function_of(tool)
    schema = function.get("parameters", function.get("inputSchema"))
    return schema if isinstance(schema, Mapping) else {}


def tool_terms(tool: Mapping[str, Any]) -> list[str]:
    function = function_of(tool)
    name = str(function.get("name", ""))
    parts = [split_identifier(name)] * NAME_WEIGHT + [str(function.get("description") or "")]
    properties = parameters_of(tool).get("properties")
    if isinstance(properties, Mapping):
        for prop_name, prop in properties.items():
            parts.append(split_identifier(str(prop_name)))
            if isinstance(prop, Mapping) and isinstance(prop.get("description"), str):
                parts.append(prop["description"])
    return content_terms(" ".join(parts))


def rank_tools(query: str, tools: Sequence[Mapping[str, Any]]) -> list[ToolScore]:
    """Every tool with its BM25 score and coverage for `query`, best first."""
    documents = [Counter(tool_terms(tool)) for tool in tools]
    if not documents:
        return []
    query_terms = list(dict.fromkeys(content_terms(without_values(query))))
    count = len(documents)
    average_length = sum(sum(d.values()) for d in documents) / count or 1.0

    def idf(term: str) -> float:
        containing = sum(1 for d in documents if term in d)
        return math.log(1 + (count - containing + 0.5) / (containing + 0.5))

    weights = {term: idf(term) for term in query_terms}
    total_weight = sum(weights.values())
    scores = []
    for tool, document in zip(tools, documents, strict=True):
        length = sum(document.values())
        bm25 = 0.0
        for term in query_terms:
            frequency = document[term]
            if frequency:
                bm25 += weights[term] * frequency * (BM25_K1 + 1) / (frequency + BM25_K1 * (1 - BM25_B + BM25_B * length / average_length))
        covered = sum(weights[t] for t in query_terms if t in document)
        scores.append(ToolScore(str(function_of(tool).get("name", "")), bm25, covered / total_weight if total_weight else 0.0))
    order = sorted(range(len(scores)), key=lambda i: (-scores[i].bm25, -scores[i].coverage, i))
    return [scores[i] for i in order]


def choose_tool(query: str, tools: Sequence[Mapping[str, Any]]) -> ToolScore | None:
    ranked = rank_tools(query, tools)
    if not ranked or ranked[0].bm25 <= 0 or ranked[0].coverage < MIN_COVERAGE:
        return None
    return ranked[0]


def summarise_result(tool_name: str, result_text: str) -> str:
    preview = clip(result_text.strip(), RESULT_PREVIEW_CHARS)
    if preview.lower().startswith("error"):
        return f"The tool {tool_name} reported a problem: {preview}"
    return f"Here is what {tool_name} returned: {preview}"


def lexical_reply(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> SimReply:
    """The sim/lexical answer to this conversation: one tool call, or text."""
    offered = list(tools or [])
    input_tokens = request_tokens(messages, offered)
    calls: tuple[SimToolCall, ...] = ()
    result = last_tool_result(messages)
    if not offered and result is None:
        text: str | None = plain_completion(last_user_text(messages))
    elif result is not None:
        text = summarise_result(*result)
    else:
        prompt = "\n".join(message_text(m) for m in messages if m.get("role") == "user")
        chosen = choose_tool(prompt, offered)
        if chosen is None:
            text = NO_TOOL_TEXT
        else:
            tool = next(t for t in offered if function_of(t).get("name") == chosen.name)
            arguments = fill_arguments(parameters_of(tool), prompt, tool_name=chosen.name)
            missing = missing_identifiers(parameters_of(tool), arguments)
            if missing:
                text = f"Which {split_identifier(missing[0]).lower()} do you mean? I need it to {split_identifier(chosen.name).lower()}."
            else:
                calls = (SimToolCall(chosen.name, json.dumps(arguments)),)
                text = None
    return SimReply(
        text=text,
        tool_calls=calls,
        input_tokens=input_tokens,
        output_tokens=reply_tokens(text, calls),
        model_version=LEXICAL_VERSION,
    )


def missing_identifiers(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """Required properties with a `pattern` (ids only the user can give) that the arguments lack."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = [name for name in schema.get("required") or [] if isinstance(name, str)]
    return [name for name in required if name not in arguments and isinstance(properties.get(name), Mapping) and "pattern" in properties[name]]


def plain_completion(prompt: str) -> str:
    """The answer to a request without tools: the prompt's last paragraph, at most 300 characters."""
    paragraphs = [part.strip() for part in prompt.split("\n\n") if part.strip()]
    return clip(paragraphs[-1] if paragraphs else "", 300) or "(nothing to answer)"
