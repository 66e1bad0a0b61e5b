"""Pure logic: fill a tool's arguments from the prompt alone, guided by each property's JSON Schema.

The `sim/lexical` baseline's argument filler. Per top-level property (local
`$ref`s and `anyOf`/`oneOf` with a `null` branch resolved), first rule that
applies wins:

- `enum`: the enum value that appears earliest in the prompt (whole word or same stem).
- `pattern`: the first prompt token (punctuation trimmed) the regex matches in full.
- `format: date-time`: an ISO date-time in the prompt, else a prompt date joined
  with each `HH:MM` time in order (`2026-08-05` + `10:00` -> `2026-08-05T10:00:00Z`).
- `format: date`: an ISO date (`YYYY-MM-DD`) in the prompt.
- `format: email`, or a property named like `email`: an email address in the prompt.
- `integer` / `number`: a free-standing number in the prompt (not part of an id,
  date or time) that respects `minimum` / `maximum`.
- arrays whose items have one of the rules above: every unused match, in order.
- a required free-text string (no enum, pattern or format), by property name:
  place or name-like (`city`, `country`, `location`, `name`, `company`, ...):
  the first run of capitalised words that does not start a sentence;
  query-like (`query`, `keywords`, `search`, `term`, `topic`): up to six content
  words of the free text, without the words of the tool's own name;
  title-like (`subject`, `title`, `summary`): the first eight words of the free text;
  anything else (`body`, `description`, `message`, ...): the free text, up to 500 characters.
  The free text is the first unused quoted span, else the text after the first
  `": "`, else the prompt minus a leading greeting, "please" / "can you", its first
  word (usually the verb) and the articles or particles right after it.

Each token, date or quoted span is used at most once, so `to` and `cc`, or
`from_date` and `to_date`, take successive matches in schema order.
Optional properties are only filled when a constrained rule finds a value;
optional free text and anything that cannot be filled is omitted (the server's
default then applies, or the server rejects the call, which is honest).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalcore.models.sim.text import STOP_WORDS, split_identifier, stem

PLACE_LIKE = frozenset({"city", "town", "country", "location", "place", "region", "destination", "origin", "name", "company", "person"})
QUERY_LIKE = frozenset({"query", "q", "keyword", "keywords", "search", "term", "terms", "topic"})
TITLE_LIKE = frozenset({"subject", "title", "summary", "heading", "headline", "label"})
MAX_QUERY_WORDS = 6
MAX_TITLE_WORDS = 8
MAX_FREE_TEXT = 500

_WORD = re.compile(r"[^\s,;!?()\[\]{}\"<>]+")
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
_DATETIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b(?!T\d)")
_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_NUMBER = re.compile(r"(?<![\w.\-/:@])-?\d+(?:\.\d+)?(?![\w\-/:@]|\.\d)")
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|‘([^’]+)’|(?:(?<=\s)|^)'([^']+)'(?=[\s.,;:!?]|$)")
_LEADING_PHRASE = re.compile(
    r"^\s*(?:(?:hi|hello|hey)\b[\s,!.]*)?(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"[A-Za-z'’]+\s+(?:(?:up|out|me|us|a|an|the|for|to|about|on|of|some|my|our)\s+)*",
    re.IGNORECASE,
)


@dataclass
class PromptFacts:
    """What the filler can take from one prompt, and what it has already used."""

    text: str
    words: list[str]
    emails: list[str]
    datetimes: list[str]
    dates: list[str]
    numbers: list[str]
    quoted: list[str]
    capitalised: list[str]
    used: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, text: str) -> PromptFacts:
        explicit = _DATETIME.findall(text)
        dates = _DATE.findall(text)
        composed = [f"{dates[0]}T{int(h):02d}:{m}:00Z" for h, m in _TIME.findall(_DATETIME.sub(" ", text))] if dates else []
        return cls(
            text=text,
            words=[w.strip(".:'’") for w in _WORD.findall(text) if w.strip(".:'’")],
            emails=_EMAIL.findall(text),
            datetimes=explicit + composed,
            dates=dates,
            numbers=_NUMBER.findall(_DATETIME.sub(" ", text)),
            quoted=[next(g for g in groups if g) for groups in _QUOTED.findall(text)],
            capitalised=_capitalised_runs(text),
        )

    def take(self, candidates: list[str]) -> str | None:
        for candidate in candidates:
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate
        return None

    def take_all(self, candidates: list[str]) -> list[str]:
        return [c for c in candidates if self.take([c]) is not None]


def _capitalised_runs(text: str) -> list[str]:
    runs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            runs.append(" ".join(current))
            current.clear()

    sentence_start = True
    for raw in text.split():
        word = raw.strip(".,;:!?()\"'’")
        is_name = bool(word) and word[0].isupper() and word.replace("-", "").replace("'", "").isalpha() and not word.isupper()
        if is_name and not sentence_start:
            current.append(word)
        else:
            flush()
        if raw[-1] in ",;:.!?":
            flush()
        sentence_start = raw.endswith((".", "!", "?"))
    flush()
    return runs


def resolve(prop: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """A property schema with local `$ref`s followed and a nullable `anyOf`/`oneOf` flattened to its first non-null branch."""
    resolved = dict(prop)
    if depth > 8:
        return resolved
    ref = resolved.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, Mapping) else {}
        if isinstance(target, Mapping):
            resolved = {**resolve(target, root, depth + 1), **resolved}
    for key in ("anyOf", "oneOf"):
        branches = resolved.get(key)
        if isinstance(branches, list):
            branch = next((b for b in branches if isinstance(b, Mapping) and b.get("type") != "null"), None)
            if branch is not None:
                resolved.pop(key)
                resolved = {**resolve(branch, root, depth + 1), **resolved}
    return resolved


def schema_type(prop: Mapping[str, Any]) -> str | None:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _enum_value(values: list[Any], facts: PromptFacts) -> Any:
    text = facts.text.lower()
    words = [(m.start(), m.group()) for m in re.finditer(r"[a-z0-9]+", text)]
    best: tuple[int, Any] | None = None
    for value in values:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            continue
        literal = str(value).lower()
        found = re.search(rf"(?<![\w-]){re.escape(literal)}(?![\w-])", text)
        position = found.start() if found else None
        if position is None and literal.isalpha():
            position = next((start for start, word in words if stem(word) == stem(literal)), None)
        if position is not None and (best is None or position < best[0]):
            best = (position, value)
    return None if best is None else best[1]


def _pattern_matches(pattern: str, facts: PromptFacts) -> list[str]:
    try:
        regex = re.compile(pattern)
    except re.error:  # an ECMA-262 construct Python's re does not take: no match, as a naive client would fare
        return []
    return [word for word in facts.words if regex.fullmatch(word)]


def _numbers(prop: Mapping[str, Any], facts: PromptFacts, integer: bool) -> list[str]:
    accepted = []
    for text in facts.numbers:
        value = float(text)
        if integer and not value.is_integer():
            continue
        if "minimum" in prop and value < prop["minimum"] or "maximum" in prop and value > prop["maximum"]:
            continue
        if "exclusiveMinimum" in prop and value <= prop["exclusiveMinimum"] or "exclusiveMaximum" in prop and value >= prop["exclusiveMaximum"]:
            continue
        accepted.append(text)
    return accepted


def _email_like(name: str, prop: Mapping[str, Any]) -> bool:
    return prop.get("format") == "email" or (schema_type(prop) == "string" and bool(set(split_identifier(name).lower().split()) & {"email", "mail"}))


def _is_free_text(name: str, prop: Mapping[str, Any]) -> bool:
    constrained = any(key in prop for key in ("enum", "const", "pattern")) or prop.get("format") in ("date", "date-time")
    return schema_type(prop) == "string" and not constrained and not _email_like(name, prop)


def _candidates(name: str, prop: Mapping[str, Any], facts: PromptFacts) -> list[str] | None:
    """Values a constrained property could take, in prompt order; None when no constrained rule applies."""
    kind = schema_type(prop)
    if isinstance(prop.get("pattern"), str):
        return _pattern_matches(prop["pattern"], facts)
    if prop.get("format") == "date-time":
        return facts.datetimes
    if prop.get("format") == "date":
        return facts.dates
    if _email_like(name, prop):
        return facts.emails
    if kind in ("integer", "number"):
        return _numbers(prop, facts, integer=kind == "integer")
    return None


def _convert(value: str, prop: Mapping[str, Any]) -> Any:
    kind = schema_type(prop)
    if kind == "integer":
        return int(float(value))
    if kind == "number":
        return float(value)
    return value


def free_text(facts: PromptFacts) -> str:
    quoted = facts.take(facts.quoted)
    if quoted is not None:
        return quoted
    _, colon, after = facts.text.partition(": ")
    if colon and after.strip():
        return after.strip().rstrip(".?!")
    return _LEADING_PHRASE.sub("", facts.text, count=1).strip().rstrip(".?!")


def _free_string(name: str, facts: PromptFacts, tool_name: str) -> str | None:
    words = set(split_identifier(name).lower().split())
    if words & PLACE_LIKE:
        return facts.take(facts.capitalised)
    text = free_text(facts)
    if words & QUERY_LIKE:
        skip = {stem(w) for w in split_identifier(tool_name).lower().split()}
        kept = [w for w in re.findall(r"[A-Za-z0-9'’-]+", text) if w.lower() not in STOP_WORDS and not w.isdigit() and stem(w) not in skip]
        return " ".join(kept[:MAX_QUERY_WORDS]) or None
    if words & TITLE_LIKE:
        return " ".join(text.split()[:MAX_TITLE_WORDS]) or None
    return text[:MAX_FREE_TEXT] or None


def _fill_one(name: str, prop: Mapping[str, Any], required: bool, facts: PromptFacts, tool_name: str) -> Any:
    kind = schema_type(prop)
    if isinstance(prop.get("enum"), list):
        return _enum_value(prop["enum"], facts)
    if "const" in prop:
        return prop["const"]
    if kind == "array":
        raw_items = prop.get("items")
        items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
        if isinstance(items.get("enum"), list):
            found = [v for v in items["enum"] if _enum_value([v], facts) is not None]
            return found or None
        candidates = _candidates(name, items, facts)
        if candidates is None:
            return None
        return [_convert(value, items) for value in facts.take_all(candidates)] or None
    candidates = _candidates(name, prop, facts)
    if candidates is not None:
        value = facts.take(candidates)
        return None if value is None else _convert(value, prop)
    if kind == "boolean":
        return False if required else None
    if kind == "string" and required:
        return _free_string(name, facts, tool_name)
    return None


def fill_arguments(schema: Mapping[str, Any], prompt: str, *, tool_name: str = "") -> dict[str, Any]:
    """Arguments for a tool with this `inputSchema`, taken from `prompt` by the rules in the module docstring."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    required = set(schema.get("required") or [])
    facts = PromptFacts.read(prompt)
    resolved = {name: resolve(prop, schema) for name, prop in properties.items() if isinstance(prop, Mapping)}
    # Constrained properties first, so free text never takes a quoted span an id or date needed.
    order = sorted(resolved, key=lambda n: _is_free_text(n, resolved[n]))
    filled: dict[str, Any] = {}
    for name in order:
        value = _fill_one(name, resolved[name], name in required, facts, tool_name)
        if value is not None:
            filled[name] = value
    return {name: filled[name] for name in properties if name in filled}
