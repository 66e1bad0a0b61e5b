"""Protocol layer: JSON Schema 2020-12 handling for tool schemas, with no network access.

Pure functions over schema documents: dialect check, `$ref` resolution against
the document itself (a remote `$ref` is refused, never fetched, as the spec
requires), validation of instances, and example arguments built from a schema.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.validators import Draft202012Validator, validator_for
from referencing.jsonschema import DRAFT202012

_BASE_URI = "urn:evalcore:tool-schema"


class RemoteRefRefused(Exception):
    """Raised by the registry instead of fetching a `$ref` from the network."""


def _refuse(uri: str) -> referencing.Resource[Any]:
    raise RemoteRefRefused(uri)


def _registry(schema: dict[str, Any]) -> referencing.Registry[Any]:
    resource = referencing.Resource.from_contents(schema, default_specification=DRAFT202012)
    return referencing.Registry(retrieve=_refuse).with_resource(_BASE_URI, resource)  # type: ignore[call-arg]


def schema_errors(schema: object) -> list[str]:
    """Why `schema` is not a valid schema of its dialect (2020-12 unless `$schema` says otherwise)."""
    if not isinstance(schema, dict):
        return [f"schema is a {type(schema).__name__}, not an object"]
    # A server lists the same schemas on every run: the verdict is a function of the document's text alone.
    return list(_document_errors(json.dumps(schema, sort_keys=True, separators=(",", ":"))))


@functools.lru_cache(maxsize=4096)
def _document_errors(document: str) -> tuple[str, ...]:
    schema = json.loads(document)
    try:
        validator_class = validator_for(schema, default=Draft202012Validator)
    except Exception as exc:  # an unknown $schema URI
        return (f"unknown $schema dialect: {exc}",)
    errors = validator_class(validator_class.META_SCHEMA).iter_errors(schema)
    return tuple(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors)[:5]


def iter_refs(node: object, path: str = "#") -> Iterator[tuple[str, str]]:
    """Every (location, `$ref` value) in a schema document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield path, value
            elif key not in ("const", "enum", "examples", "default"):
                yield from iter_refs(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from iter_refs(item, f"{path}/{index}")


def unresolvable_refs(schema: dict[str, Any]) -> list[str]:
    """Each `$ref` that does not resolve inside the document, with why."""
    resolver = _registry(schema).resolver(base_uri=_BASE_URI)
    problems = []
    for location, ref in iter_refs(schema):
        try:
            resolver.lookup(ref)
        except (RemoteRefRefused, referencing.exceptions.Unresolvable):
            where = "does not resolve" if ref.startswith("#") else "points outside the document (clients must not fetch it)"
            problems.append(f"{location}: $ref {ref!r} {where}")
    return problems


def instance_errors(instance: object, schema: dict[str, Any]) -> list[str]:
    """Why `instance` does not validate against `schema` (2020-12, local refs only)."""
    try:
        validator = Draft202012Validator(schema, registry=_registry(schema))
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(instance)][:5]
    except (RemoteRefRefused, referencing.exceptions.Unresolvable, jsonschema.exceptions.SchemaError) as exc:
        return [f"schema cannot be used for validation: {exc}"]


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that should satisfy a tool's `inputSchema`, built from the schema alone.

    For each required property: its first `examples` value, else `default`,
    else `const`, else the first `enum` value, else a placeholder of its type
    (honouring `minimum`, `minLength`, `minItems` and common `format`s).
    """
    resolver = _registry(schema).resolver(base_uri=_BASE_URI)
    value = _example(schema, resolver, depth=0)
    return value if isinstance(value, dict) else {}


_FORMAT_EXAMPLES = {
    "date": "2026-01-15",
    "date-time": "2026-01-15T09:00:00Z",
    "time": "09:00:00",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def _example(schema: object, resolver: Any, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > 12:
        return None
    if "$ref" in schema:
        try:
            resolved = resolver.lookup(schema["$ref"])
        except (RemoteRefRefused, referencing.exceptions.Unresolvable):
            return None
        return _example(resolved.contents, resolved.resolver, depth + 1)
    for key in ("examples",):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = [b for b in schema.get(key, []) if not (isinstance(b, dict) and b.get("type") == "null")]
        if branches:
            return _example(branches[0], resolver, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties", {})
        return {name: _example(properties.get(name, {}), resolver, depth + 1) for name in schema.get("required", []) if isinstance(name, str)}
    if kind == "array":
        return [_example(schema.get("items", {}), resolver, depth + 1) for _ in range(int(schema.get("minItems", 1) or 1))]
    if kind == "integer":
        return int(schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in schema else 1))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "string":
        text = _FORMAT_EXAMPLES.get(str(schema.get("format")), "example")
        return text.ljust(int(schema.get("minLength", 0) or 0), "x")
    return None
