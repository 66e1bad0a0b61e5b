"""Pure logic: the golden file's shape as a JSON Schema, for editors (completion, checking as you type).

    python -m evalcore.golden.json_schema > docs/golden.schema.json

The schema is built from the loader's key tables (`evalcore.golden.loader`), so a key the loader accepts is a key
the schema names, with the same description; a test checks that the committed file equals this output. The loader
stays the authority: it also checks what a schema cannot say (a tool exists on the server, a rubric file exists,
arguments against the tool's inputSchema, the limits).
In YAML editors (the YAML language server), put this line at the top of a golden file:

    # yaml-language-server: $schema=../docs/golden.schema.json
"""

from __future__ import annotations

import json
from typing import Any, Final

from evalcore.golden.conversation_reader import PATTERN_KEYS, STATE_KEYS, USER_KEYS
from evalcore.golden.injection import ATTACK_SURFACES, EXPECTATIONS, FAULT_KINDS
from evalcore.golden.loader import ATTACK_KEYS, CALL_KEYS, CASE_FIELDS, CASE_KINDS, CHECKED_VALUES, INJECT_KEYS, REVIEW_KEYS, TOP_LEVEL_FIELDS
from evalcore.golden.model import ARG_MATCH_MODES, REVIEW_STATUSES

SCHEMA_ID: Final = "https://evalcore.invalid/golden.schema.json"
_TEXT: Final[dict[str, Any]] = {"type": "string", "minLength": 1}
_NAME_LIST: Final[dict[str, Any]] = {"type": "array", "items": _TEXT}


def _object(properties: dict[str, Any], *, required: tuple[str, ...] = (), description: str = "") -> dict[str, Any]:
    shape: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        shape["required"] = list(required)
    if description:
        shape["description"] = description
    return shape


def _closed(keys: tuple[str, ...], known: dict[str, Any]) -> dict[str, Any]:
    """Every key of `keys`, each with its shape in `known` (or any value)."""
    return {key: known.get(key, {}) for key in keys}


def golden_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a golden-set file."""
    arg_rule = _object(
        {
            "one_of": {"type": "array", "minItems": 1, "description": "the accepted values: any one of them matches"},
            "optional": {"type": "boolean", "description": "true: the argument may be absent (and, without one_of, have any value)"},
        },
        description="an argument rule: {one_of: [CA, California]}, {one_of: [celsius], optional: true}, {optional: true}",
    )
    arg_rule["anyOf"] = [{"required": ["one_of"]}, {"required": ["optional"]}]
    expected_value = {
        "description": "the expected value, or a rule {one_of, optional} (a mapping with one_of or optional is a rule)",
        "if": {"type": "object", "anyOf": [{"required": ["one_of"]}, {"required": ["optional"]}]},
        "then": {"$ref": "#/$defs/arg_rule"},
    }
    args = {"type": "object", "additionalProperties": {"$ref": "#/$defs/expected_value"}, "description": "argument name -> expected value or rule"}
    arg_match = {"type": "object", "additionalProperties": {"enum": list(ARG_MATCH_MODES)}, "description": "per argument: exact (default) | semantic | ignore"}
    call = _object(
        _closed(CALL_KEYS, {"tool": {**_TEXT, "description": "the tool called"}, "args": {"$ref": "#/$defs/args"}, "arg_match": {"$ref": "#/$defs/arg_match"}}),
        required=("tool",),
        description="one expected call with its own arguments",
    )
    calls = {"type": "array", "minItems": 1, "items": {"anyOf": [_TEXT, {"$ref": "#/$defs/call"}]}}
    inject = _object(
        _closed(
            INJECT_KEYS,
            {
                "fault": {"enum": list(FAULT_KINDS)},
                "tool": _TEXT,
                "on_call": {"type": "integer", "minimum": 1},
                "repeat": {"type": "boolean"},
                "expect": {"enum": list(EXPECTATIONS)},
                "text": _TEXT,
                "shadow_name": _TEXT,
                "schema": {"type": "object"},
            },
        ),
        required=("fault", "tool"),
        description=CASE_FIELDS["inject"],
    )
    attack = _object(
        _closed(
            ATTACK_KEYS,
            {
                "surface": {"enum": list(ATTACK_SURFACES)},
                "forbidden_tools": _NAME_LIST,
                "forbidden_args": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {"type": "string"}}},
                "forbidden_answers": _NAME_LIST,
            },
        ),
        required=("surface",),
        description=CASE_FIELDS["attack"],
    )
    review = _object(
        _closed(
            REVIEW_KEYS,
            {"status": {"enum": list(REVIEW_STATUSES)}, "by": {"type": "string"}, "at": {"type": "string"}, "checked": {"enum": list(CHECKED_VALUES)}},
        ),
        required=("status",),
        description=CASE_FIELDS["review"],
    )
    pattern = _object(_closed(PATTERN_KEYS, {"method": {"enum": ["elicitation", "sampling", "roots"]}, "tool": _TEXT, "mode": {"enum": ["form", "url"]}}))
    conversation: dict[str, dict[str, Any]] = {
        "user": _object(
            _closed(
                USER_KEYS,
                {
                    "goal": _TEXT,
                    "facts": {"type": "object"},
                    "unknown": _NAME_LIST,
                    "private": _NAME_LIST,
                    "persona": _TEXT,
                    "max_turns": {"type": "integer", "minimum": 0},
                    "model": _TEXT,
                },
            ),
            description="the simulated user of a multi-turn case",
        ),
        "sampling_model": {"type": "string", "minLength": 1, "description": "who answers sampling requests (default: the model under test)"},
        "roots": {"type": "array", "items": {"type": "object"}, "description": "the answer to roots/list"},
        "expect_input_requests": _object(
            {"must": {"type": "array", "items": pattern}, "must_not": {"type": "array", "items": pattern}}, description="input requests expected or forbidden"
        ),
        "expect_state": {
            "type": "array",
            "items": _object(_closed(STATE_KEYS, {"tool": _TEXT, "resource": _TEXT, "path": _TEXT, "arguments": {"type": "object"}})),
        },
    }
    known: dict[str, dict[str, Any]] = {
        "id": _TEXT,
        "prompt": _TEXT,
        "system": _TEXT,
        "expect_tool": {"anyOf": [_TEXT, {"type": "null"}]},
        "expect_args": {"$ref": "#/$defs/args"},
        "arg_match": {"$ref": "#/$defs/arg_match"},
        "expect_sequence": calls,
        "expect_set": calls,
        "kind": {"enum": list(CASE_KINDS)},
        "rubric": _TEXT,
        "inject": inject,
        "attack": attack,
        "review": review,
        **conversation,
    }
    case_properties = {
        key: {**known.get(key, {}), "description": CASE_FIELDS.get(key, known.get(key, {}).get("description", ""))} for key in (*CASE_FIELDS, *conversation)
    }
    case = _object(case_properties, required=("id", "prompt"), description="one golden case")
    case["anyOf"] = [{"required": ["expect_tool"]}, {"required": ["expect_sequence"]}, {"required": ["expect_set"]}]
    top: dict[str, dict[str, Any]] = {key: {"description": text} for key, text in TOP_LEVEL_FIELDS.items()}
    top["server"].update({"type": "string"})
    top["rubric"].update({"type": "string"})
    top["system"].update(_TEXT)
    top["cases"].update({"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/case"}})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "evalcore golden set",
        "description": "A golden set: the cases of one MCP server and the tool behaviour a good model shows on each (docs/golden.md).",
        "anyOf": [_object(top, required=("cases",)), {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/case"}}],
        "$defs": {"case": case, "call": call, "args": args, "arg_match": arg_match, "arg_rule": arg_rule, "expected_value": expected_value},
    }


def schema_text() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(golden_json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
