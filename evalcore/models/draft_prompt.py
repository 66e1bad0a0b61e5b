"""Pure logic: the prompt that asks a model to draft golden cases for a server's tools, and reading its answer.

The tools go in a tagged section as JSON (name, title, description, inputSchema, annotations), with how many positive
cases to write per tool; the model answers one JSON object:

    {"cases": [{"id": "...", "purpose": "positive | negative | disambiguation", "prompt": "...",
                "expect_tool": "tool name or null", "expect_args": {...}, "arg_match": {...}}]}

Any model `run` takes can draft; `sim/drafter` is the offline, deterministic one (it reads the same sections back).
Code fences and text around the JSON object are tolerated. What the answer holds is checked by the caller
(`evalcore.behaviour.drafting`): nothing here trusts it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

PURPOSES: Final = ("positive", "negative", "disambiguation")
DRAFT_SYSTEM_PROMPT: Final = (
    "You write test cases for an MCP server's tools: requests a real user would type, each with the tool call a good "
    "assistant makes. Use only the tools listed, their exact parameter names, and values their schemas accept. "
    'Reply with one JSON object and nothing else: {"cases": [{"id", "purpose", "prompt", "expect_tool", "expect_args", "arg_match"}]}.'
)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def draft_messages(tools: Sequence[Mapping[str, Any]], per_tool: int) -> list[dict[str, Any]]:
    listed = [{key: tool[key] for key in ("name", "title", "description", "inputSchema", "annotations") if key in tool} for tool in tools]
    user = (
        f"<tools>\n{json.dumps(listed, ensure_ascii=False, sort_keys=True)}\n</tools>\n\n<per_tool>\n{per_tool}\n</per_tool>\n\n"
        "For each tool write per_tool positive cases (purpose positive): the user's words, expect_tool, and expect_args with "
        'every required argument (a value, or {"one_of": [...]} for equally right values; arg_match semantic for free text). '
        "Add negative cases no tool should serve (purpose negative, expect_tool null), and for tools whose descriptions are "
        "close, a case only one of them serves (purpose disambiguation). Answer with the JSON object only."
    )
    return [{"role": "system", "content": DRAFT_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def section(text: str, name: str) -> str | None:
    match = re.search(rf"<{name}>\n?(.*?)\n?</{name}>", text, re.DOTALL)
    return match.group(1) if match else None


def parse_drafts(text: str | None) -> list[Any]:
    """The `cases` list of the model's answer; [] when the answer holds none (the caller reports it)."""
    if not text:
        return []
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    candidates.append(text)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            document = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(document, dict) and isinstance(document.get("cases"), list):
            return list(document["cases"])
        if isinstance(document, list):
            return document
    return []
