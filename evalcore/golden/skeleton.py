"""Pure logic: a golden-file skeleton from a server's tools, and a plausible value for a JSON Schema.

    document = skeleton_document(tools, server="reference")   # one positive case per tool, one negative case
    text = render_yaml(document)                               # loads with `load_golden_set`, schemas and all

`example_value` picks, for one property's schema: its first `examples` entry, else its `const`, the first of its
`enum`, its `default`, a value its `format` names (date, date-time, email, uri), a string its `pattern` matches
(simple patterns: literals, \\d \\w, classes, {n} + * ?), a number within `minimum`/`maximum`, or a word. It returns
`NO_VALUE` when it cannot make one the schema accepts: the caller then leaves the argument for a human.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import yaml
from jsonschema import validators

NO_VALUE: Final = object()
_FORMATS: Final = {
    "date": "2026-01-15",
    "date-time": "2026-01-15T10:00:00Z",
    "time": "10:00:00",
    "email": "someone@example.com",
    "idn-email": "someone@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000001",
}
_CLASS_PICK: Final = {"d": "1", "w": "a", "s": " ", "D": "A", "W": "-", "S": "A"}


def example_value(schema: Any, name: str = "value") -> Any:
    """A value `schema` accepts, or `NO_VALUE` (see the module docstring for the order of sources)."""
    if not isinstance(schema, Mapping):
        return "example" if schema is True else NO_VALUE
    candidates: list[Any] = []
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        candidates.append(schema["examples"][0])
    for key in ("const", "default"):
        if key in schema:
            candidates.append(schema[key])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        candidates.append(schema["enum"][0])
    candidates.extend(_by_type(schema, name))
    for variant in schema.get("anyOf") or schema.get("oneOf") or []:
        candidates.append(example_value(variant, name))
    for candidate in candidates:
        if candidate is not NO_VALUE and accepts(schema, candidate):
            return candidate
    return NO_VALUE


def accepts(schema: Mapping[str, Any], value: Any) -> bool:
    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        return bool(cls(schema).is_valid(value))
    except Exception:  # a schema the validator cannot use: no value can be vouched for
        return False


def _by_type(schema: Mapping[str, Any], name: str) -> list[Any]:
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    out: list[Any] = []
    if "string" in kinds or (kind is None and ("pattern" in schema or "format" in schema)):
        if isinstance(schema.get("format"), str) and schema["format"] in _FORMATS:
            out.append(_FORMATS[schema["format"]])
        if isinstance(schema.get("pattern"), str) and (sample := pattern_sample(schema["pattern"])) is not None:
            out.append(sample)
        out.append(name.replace("_", " "))
    if "integer" in kinds or "number" in kinds:
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        number = max(1, int(low) + (1 if "exclusiveMinimum" in schema else 0)) if isinstance(low, int | float) else 1
        high = schema.get("maximum")
        out.append(min(number, int(high)) if isinstance(high, int | float) else number)
    if "boolean" in kinds:
        out.append(True)
    if "array" in kinds:
        item = example_value(schema.get("items", {}), name)
        out.append([item] if item is not NO_VALUE else [])
    if "object" in kinds:
        out.append(example_arguments(schema) or {})
    if "null" in kinds:
        out.append(None)
    return out


def pattern_sample(pattern: str) -> str | None:
    """A string that matches `pattern` in full, for simple patterns; None when this cannot make one."""
    out: list[str] = []
    i = 0
    body = pattern.removeprefix("^").removesuffix("$")
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            piece, i = _CLASS_PICK.get(body[i + 1], body[i + 1]), i + 2
        elif char == "[":
            end = body.find("]", i + 1)
            if end < 0:
                return None
            picked = _class_pick(body[i + 1 : end])
            if picked is None:
                return None
            piece, i = picked, end + 1
        elif char in "()|":
            return None
        elif char == ".":
            piece, i = "a", i + 1
        else:
            piece, i = char, i + 1
        count, i = _quantifier(body, i)
        if count is None:
            return None
        out.append(piece * count)
    sample = "".join(out)
    return sample if re.fullmatch(pattern.removeprefix("^").removesuffix("$"), sample) else None


def _class_pick(inner: str) -> str | None:
    if inner.startswith("^"):  # a negated class: a letter is usually outside it
        excluded = inner[1:]
        return next((c for c in "a1A-" if re.fullmatch(f"[^{excluded}]", c) is not None), None)
    if inner.startswith("\\") and len(inner) > 1:
        return _CLASS_PICK.get(inner[1], inner[1])
    return inner[0] if inner else None


def _quantifier(body: str, i: int) -> tuple[int | None, int]:
    if i < len(body) and body[i] in "+*?":
        return (1 if body[i] != "?" else 1), i + 1
    if i < len(body) and body[i] == "{":
        end = body.find("}", i)
        if end < 0:
            return None, i
        low = body[i + 1 : end].split(",")[0]
        return (int(low) if low.isdigit() else None), end + 1
    return 1, i


def example_arguments(schema: Any, *, all_properties: bool = False) -> dict[str, Any] | None:
    """Values for the required properties (all, with `all_properties`) of an inputSchema; None when one cannot be made."""
    if not isinstance(schema, Mapping):
        return {}
    properties: Mapping[str, Any] = schema["properties"] if isinstance(schema.get("properties"), Mapping) else {}
    required = [name for name in schema.get("required") or [] if isinstance(name, str)]
    names = list(properties) if all_properties else [name for name in properties if name in required]
    out: dict[str, Any] = {}
    for name in names:
        value = example_value(properties.get(name, {}), name)
        if value is NO_VALUE:
            if name in required:
                return None
            continue
        out[name] = value
    return out


def first_sentence(text: Any) -> str:
    """The description's first sentence (its first line), without the trailing full stop."""
    if not isinstance(text, str) or not text.strip():
        return ""
    line = text.strip().splitlines()[0]
    return re.split(r"(?<=[.!?])\s", line)[0].rstrip(".").strip()


def skeleton_document(tools: Sequence[Mapping[str, Any]], server: str | None = None) -> dict[str, Any]:
    """A golden set to fill in: one positive case per tool (its required arguments with placeholder values the schema
    accepts, or `{optional: true}` where none could be made) and one negative case."""
    cases: list[dict[str, Any]] = []
    for tool in tools:
        name = str(tool.get("name"))
        schema: Mapping[str, Any] = tool["inputSchema"] if isinstance(tool.get("inputSchema"), Mapping) else {}
        properties: Mapping[str, Any] = schema["properties"] if isinstance(schema.get("properties"), Mapping) else {}
        args: dict[str, Any] = {}
        for argument in [a for a in schema.get("required") or [] if isinstance(a, str) and a in properties]:
            value = example_value(properties[argument], argument)
            args[argument] = {"optional": True} if value is NO_VALUE else value
        case: dict[str, Any] = {
            "id": f"{name}-1",
            "prompt": f"TODO: what a user types that needs {name}" + (f" ({first_sentence(tool.get('description'))})" if tool.get("description") else ""),
            "expect_tool": name,
        }
        if args:
            case["expect_args"] = args
        cases.append(case)
    cases.append({"id": "no-tool-1", "prompt": "TODO: a request none of these tools serves", "expect_tool": None})
    document: dict[str, Any] = {}
    if server:
        document["server"] = server
    document["cases"] = cases
    return document


def render_yaml(document: Mapping[str, Any], header: str = "") -> str:
    """The document as YAML (keys in their order, long text unwrapped), under `header` lines as comments."""
    body = yaml.safe_dump(dict(document), sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=None)
    comments = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comments + body
