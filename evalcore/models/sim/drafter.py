"""Pure logic: the `sim/drafter` model, an offline, deterministic drafter of golden cases (labelled simulated).

It reads the tagged sections of the draft prompt (`evalcore.models.draft_prompt`) and works from the tools' names,
descriptions and schemas alone, never from a server's answers or a golden set:

- per tool, `per_tool` positive cases: the description's first sentence in one of three phrasings, followed by the
  arguments in words ("... with city Paris"); the required arguments get a value their schema accepts
  (`evalcore.golden.skeleton.example_value`: the schema's examples, enum, default, format, pattern), every other
  case adds the first optional argument that has one; free text (a string without enum, pattern or format) is
  matched `semantic`, the rest `exact`; a required argument no value can be made for is `{optional: true}`;
- two negative cases no tool serves (small talk, general knowledge);
- for each pair of tools whose descriptions share at least `CLOSE_OVERLAP` of their content words (Jaccard), a
  disambiguation case: the first tool's request, in its own words.

A real model writes better prompts; this one exists so tests and the demo run offline, and its drafts say so.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from evalcore.golden.skeleton import NO_VALUE, example_value, first_sentence
from evalcore.models.draft_prompt import section
from evalcore.models.sim.reply import SimReply, last_user_text, reply_tokens, request_tokens
from evalcore.models.sim.text import content_terms

DRAFTER_VERSION: Final = "drafter-1"
CLOSE_OVERLAP: Final = 0.25
NEGATIVE_PROMPTS: Final = ("Thanks, that's all I needed today!", "Tell me a short joke about penguins.")
_PHRASINGS: Final = ("{Sentence}{with}.", "Could you {sentence}?{use}", "I need this done: {sentence}{with}.")


def drafter_reply(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None = None) -> SimReply:
    prompt = last_user_text(messages)
    try:
        listed = json.loads(section(prompt, "tools") or "[]")
        per_tool = int(section(prompt, "per_tool") or 1)
    except ValueError:
        listed, per_tool = [], 1
    text = json.dumps({"cases": draft_cases(listed if isinstance(listed, list) else [], per_tool)}, ensure_ascii=False)
    return SimReply(text=text, input_tokens=request_tokens(messages, tools), output_tokens=reply_tokens(text, ()), model_version=DRAFTER_VERSION)


def draft_cases(tools: Sequence[Mapping[str, Any]], per_tool: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    usable = [tool for tool in tools if isinstance(tool, Mapping) and isinstance(tool.get("name"), str)]
    for tool in usable:
        for index in range(max(1, per_tool)):
            cases.append(_positive(tool, index))
    for number, text in enumerate(NEGATIVE_PROMPTS, start=1):
        cases.append({"id": f"no-tool-{number}", "purpose": "negative", "prompt": text, "expect_tool": None})
    for first, second in itertools.combinations(usable, 2):
        if _overlap(first, second) >= CLOSE_OVERLAP:
            case = _positive(first, 0)
            theirs = set(_plain_words(second))
            own = [word for word in dict.fromkeys(_plain_words(first)) if word not in theirs]
            case.update(id=f"disambiguate-{first['name']}-vs-{second['name']}", purpose="disambiguation")
            case["prompt"] = f"Specifically the {' '.join(own[:4]) or _spoken(str(first['name']))} one: " + case["prompt"][0].lower() + case["prompt"][1:]
            cases.append(case)
    return cases


def _positive(tool: Mapping[str, Any], index: int) -> dict[str, Any]:
    name = str(tool["name"])
    schema: Mapping[str, Any] = tool["inputSchema"] if isinstance(tool.get("inputSchema"), Mapping) else {}
    properties: Mapping[str, Any] = schema["properties"] if isinstance(schema.get("properties"), Mapping) else {}
    required = [arg for arg in schema.get("required") or [] if isinstance(arg, str) and arg in properties]
    args: dict[str, Any] = {}
    arg_match: dict[str, str] = {}
    for arg in required:
        value = example_value(properties[arg], arg)
        args[arg] = {"optional": True} if value is NO_VALUE else value
    if index % 2 == 1:
        for arg, optional_schema in properties.items():
            if arg not in args and (value := example_value(optional_schema, arg)) is not NO_VALUE:
                args[arg] = value
                break
    for arg, value in args.items():
        prop: Mapping[str, Any] = properties[arg] if isinstance(properties.get(arg), Mapping) else {}
        if isinstance(value, str) and not any(key in prop for key in ("enum", "pattern", "format", "const")) and not _id_like(value):
            arg_match[arg] = "semantic"
    sentence = first_sentence(tool.get("description")) or _spoken(name)
    phrase = " and ".join(f"{_spoken(arg)} {_say(value)}" for arg, value in args.items() if not (isinstance(value, dict) and "optional" in value))
    template = _PHRASINGS[index % len(_PHRASINGS)]
    prompt = template.format(
        Sentence=sentence[0].upper() + sentence[1:],
        sentence=sentence[0].lower() + sentence[1:],
        with_=phrase,
        **{"with": f", with {phrase}" if phrase else "", "use": f" Use {phrase}." if phrase else ""},
    )
    case: dict[str, Any] = {"id": f"{name}-{index + 1}", "purpose": "positive", "prompt": prompt, "expect_tool": name}
    if args:
        case["expect_args"] = args
    if arg_match:
        case["arg_match"] = arg_match
    return case


def _overlap(first: Mapping[str, Any], second: Mapping[str, Any]) -> float:
    a, b = _words(first), _words(second)
    return len(a & b) / len(a | b) if a | b else 0.0


def _words(tool: Mapping[str, Any]) -> set[str]:
    return set(content_terms(f"{_spoken(str(tool.get('name')))} {first_sentence(tool.get('description'))}"))


def _plain_words(tool: Mapping[str, Any]) -> list[str]:
    """The longer words of the tool's name and first sentence, as written (for a prompt to read naturally)."""
    text = f"{_spoken(str(tool.get('name')))} {first_sentence(tool.get('description'))}".lower()
    return [word for word in re.findall(r"[a-z]+", text) if len(word) > 3]


def _spoken(name: str) -> str:
    """`get_customer` / `getCustomer` / `get-customer` -> "get customer"."""
    return " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ").replace(".", " ").lower().split())


def _id_like(value: str) -> bool:
    return bool(re.fullmatch(r"[A-Z0-9][A-Z0-9_\-.:@/]*", value)) or "@" in value or any(char.isdigit() for char in value.split()[0] if value.split())


def _say(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_say(item) for item in value) or "none"
    return json.dumps(value, ensure_ascii=False)
