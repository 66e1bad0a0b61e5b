"""Protocol layer: validate messages against the official 2026-07-28 wire models (`mcp-types`), through their JSON Schema.

The models are the reference for shapes; evalcore's own checks add what they
tolerate (e.g. unknown `resultType` values). Validation reads the models' JSON
Schema (wire_shapes.schema.json, written by `evalcore.mcp.protocol.wire_schema`
and held to the pinned models by a test) with a 2020-12 validator built once
per shape and process: building the pydantic models themselves cost most of a
second of a conformance run. JSON Schema takes the wire as JSON is typed: a
string is not an integer and "true" is not a boolean, where pydantic's lax mode
would have converted them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jsonschema.exceptions import ValidationError, best_match
from jsonschema.validators import Draft202012Validator

from evalcore.mcp.protocol.constants import PROTOCOL_VERSION
from evalcore.redaction import clip

SCHEMA_PATH = Path(__file__).with_name("wire_shapes.schema.json")
INPUT_REQUIRED_MODEL = "InputRequiredResult"
# Verdicts kept per process: at most MEMO_ENTRIES results of at most MEMO_TEXT_LIMIT characters (16 MB in all).
MEMO_ENTRIES, MEMO_TEXT_LIMIT = 128, 128 * 1024
MESSAGE_LIMIT = 300  # a validator's message quotes the offending value, which the server chose


@functools.cache
def _document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    if document.get("protocolVersion") != PROTOCOL_VERSION:
        raise RuntimeError(f"{SCHEMA_PATH.name} describes {document.get('protocolVersion')}, not {PROTOCOL_VERSION}")
    return document


@functools.cache
def _validator(models: tuple[str, ...]) -> Draft202012Validator:
    """A validator accepting any of `models` (a union, as the official surface types are), built once per process."""
    branches = [{"$ref": f"#/$defs/{name}"} for name in models]
    schema = {"$defs": _document()["$defs"], **({"anyOf": branches} if len(branches) > 1 else branches[0])}
    return Draft202012Validator(schema)


def _result_models(method: str) -> Sequence[str] | None:
    models: list[str] | None = _document()["results"].get(method)
    return models


def envelope_problem(message: Mapping[str, Any]) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 response, error or notification; None if it is one."""
    if "result" in message:
        model = "JSONRPCResponse"
    elif "error" in message:
        model = "JSONRPCError"
    elif "method" in message:
        model = "JSONRPCRequest" if "id" in message else "JSONRPCNotification"
    else:
        return "neither result, error nor method"
    problem = _problem((model,), message)
    if problem:
        return problem
    if "result" in message and "error" in message:
        return "carries both result and error"
    return None


def result_problem(method: str, result: Mapping[str, Any]) -> str | None:
    """Why `result` is not a valid 2026-07-28 result of `method`; None if valid or if the method has no official model."""
    models = _result_models(method)
    return None if models is None else _result_problem(tuple(models), result)


def result_model_problem(method: str, result: Mapping[str, Any]) -> str | None:
    """Why `result` is not the official model its own `resultType` names (InputRequiredResult for "input_required",
    else the method's complete result); None if valid or if the method has no official model.

    Stricter than `result_problem`: the surface union accepts a malformed complete result as a lenient
    InputRequiredResult, so a GetPromptResult whose messages have no content would pass there.
    """
    models = _result_models(method)
    if models is None:
        return None
    input_required = result.get("resultType") == "input_required"
    model = next((name for name in models if (name == INPUT_REQUIRED_MODEL) == input_required), None)
    if model is None:
        return f"resultType {result.get('resultType')!r} is not a result {method} may give"
    return _result_problem((model,), result)


def model_problem(model: str, instance: Mapping[str, Any]) -> str | None:
    """Why `instance` is not a valid `model` (a wire model the schema defines, e.g. ElicitRequest); None if it is one.
    Judged once per distinct text, as results are."""
    return _result_problem((model,), instance)


def _problem(models: tuple[str, ...], instance: Mapping[str, Any]) -> str | None:
    """The most relevant error (the deepest, inside a union the branch that came closest), where it is, and how many more."""
    errors = list(_validator(models).iter_errors(dict(instance)))
    if not errors:
        return None
    first = _meant(best_match(errors))
    where = ".".join(str(part) for part in first.absolute_path) or "(root)"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {clip(first.message, MESSAGE_LIMIT)}{more}"


def _meant(error: ValidationError) -> ValidationError:
    """Inside a union ("not valid under any of the given schemas"), the error of the branch the message meant: the one
    whose `const`s and `enum`s (a content block's `type`, a `resultType`) and type it meets, with the fewest errors."""
    while error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for inner in error.context:
            branches.setdefault(inner.relative_schema_path[0], []).append(inner)
        meant = [found for found in branches.values() if not any(_rules_out(e) for e in found)]
        if not meant:
            break
        error = best_match(min(meant, key=len))
    return error


def _rules_out(error: ValidationError) -> bool:
    return error.validator in ("const", "enum") or (error.validator == "type" and not error.relative_path)


def _result_problem(models: tuple[str, ...], result: Mapping[str, Any]) -> str | None:
    """`_problem` of a result, judged once per distinct result text: the runs of a suite list the same tools,
    prompts and resources again, and the verdict is a function of the text alone."""
    text = json.dumps(result, sort_keys=True, separators=(",", ":"))
    return _problem_of_text(models, text) if len(text) <= MEMO_TEXT_LIMIT else _problem(models, result)


@functools.lru_cache(maxsize=MEMO_ENTRIES)
def _problem_of_text(models: tuple[str, ...], text: str) -> str | None:
    return _problem(models, json.loads(text))
