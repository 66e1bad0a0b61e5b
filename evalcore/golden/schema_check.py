"""Pure logic: an expected call's arguments against its tool's `inputSchema` (JSON Schema), one problem a line.

    argument_problems("get_time", {"tz": "UTC"}, {}, schema)
    -> [("tz", 'get_time: unknown argument "tz", did you mean "timezone"? (get_time takes: timezone)')]

Three checks, so that a case that can never pass is refused before a model is called:

- an argument the tool does not declare (unless its schema allows others, `additionalProperties`);
- a value (each `one_of` alternative) that its property's schema refuses: a wrong type, an enum it is not in...;
  an argument matched with `ignore` is not checked, its value is never compared;
- a required argument the call does not give, when the call gives arguments at all (a case with none checks
  only which tool is called); to check some arguments only, list the others as `{optional: true}` (any value).

A schema the validator cannot use (an unresolvable `$ref`, an unknown draft) is not held against the case.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Mapping
from typing import Any

from jsonschema import exceptions as schema_exceptions
from jsonschema import validators

from evalcore.golden.model import argument_rule

_NAMES_SHOWN = 12


def argument_problems(tool: str, args: Mapping[str, Any], arg_match: Mapping[str, str], schema: Mapping[str, Any]) -> list[tuple[str | None, str]]:
    """(argument or None, problem) for every way `args` cannot be a valid call of `tool`; [] when none."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = [name for name in schema.get("required") or [] if isinstance(name, str)]
    extra = schema.get("additionalProperties")
    others_allowed = extra is True or isinstance(extra, Mapping)
    validator = _validator(schema)
    problems: list[tuple[str | None, str]] = []
    for name, expected in args.items():
        if name not in properties:
            if not others_allowed:
                takes = ", ".join(list(properties)[:_NAMES_SHOWN]) or "no arguments"
                close = closest_name(str(name), [str(p) for p in properties])
                hint = f', did you mean "{close}"?' if close else ""
                problems.append((name, f'{tool}: unknown argument "{name}"{hint} ({tool} takes: {takes})'))
            continue
        if arg_match.get(name) == "ignore" or validator is None or not isinstance(properties[name], Mapping | bool):
            continue
        for alternative in argument_rule(expected).alternatives:
            if (reason := _refusal(validator, alternative, properties[name], str(name))) is not None:
                problems.append((name, f'{tool}: argument "{name}": {reason}'))
    for name in required:
        if args and name not in args:
            problems.append((None, f'{tool}: missing required argument "{name}" (give its value, or {{optional: true}} to accept any)'))
    return problems


def closest_name(name: str, names: list[str]) -> str | None:
    """The declared name `name` most likely stands for: a close spelling (difflib), else the shortest name it abbreviates
    (same first letter, its letters in order: "tz" -> "timezone", "qty" -> "quantity")."""
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        return close[0]
    lowered = name.lower()

    def abbreviates(full: str) -> bool:
        rest = iter(full.lower())
        return bool(lowered) and full[:1].lower() == lowered[0] and all(char in rest for char in lowered)

    candidates = sorted((full for full in names if abbreviates(full)), key=len)
    return candidates[0] if candidates else None


def _validator(schema: Mapping[str, Any]) -> Any:
    """A validator for the tool's schema (its `$schema` draft, else 2020-12), or None when the schema is unusable."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return _new_validator(schema)
    return _validator_for(key)


@functools.lru_cache(maxsize=256)
def _validator_for(key: str) -> Any:
    """One validator per schema text: checking a schema costs far more than reading it, and every expected call of
    a tool shares its tool's schema."""
    return _new_validator(json.loads(key))


def _new_validator(schema: Mapping[str, Any]) -> Any:
    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema)
    except (schema_exceptions.SchemaError, schema_exceptions.UnknownType, TypeError, ValueError):
        return None


def _refusal(validator: Any, value: Any, property_schema: Any, name: str) -> str | None:
    """Why the property's schema refuses `value` (the deepest error's message), or None."""
    try:
        errors = list(validator.descend(value, property_schema, path=name))
    except Exception:  # an unresolvable $ref or a schema the validator chokes on: not the case's fault
        return None
    if not errors:
        return None
    best = schema_exceptions.best_match(errors)
    return best.message if best is not None else errors[0].message
