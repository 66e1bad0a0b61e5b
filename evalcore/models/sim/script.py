"""Pure logic (plus a cached YAML read): the `sim/script:<path>` model, which replays scripted behaviour per golden case.

For testing scoring, statistics and drift without a real model. The runner
passes `case_id`, `attempt` and `run_date` in the call's context; the script
says what the "model" does for that case at that attempt on that date.

    # sim-script.yaml
    defaults:                      # optional; these are the built-in defaults
      latency_ms: 0                # simulated with asyncio.sleep on every model turn, and reported
      tokens: {input: 0, output: 0}
      model_version: sim-script    # reported as the model version (drift attribution)
    cases:
      weather-paris:               # a golden case id
        calls:                     # in order: one call per model turn, then the final text
          - {name: get_weather, args: {city: Paris}}
        text: "It is 18 degrees and cloudy in Paris."
        latency_ms: 120            # any default may be overridden per case
        tokens: {input: 210, output: 35}
        attempts:                  # per-attempt overrides, merged key by key over the case
          3: {calls: [{name: get_weather, args: {city: London}}]}
          4: {error: 503}          # this attempt fails like a provider outage (never recovers)
      invoice-then-email:
        calls:
          - {name: search_invoices, args: {customer_id: CUST-1001, status: overdue}}
          - {name: send_email, args: {to: billing@acme.example, subject: Overdue, body: Please pay.}}
        parallel: false            # true: all calls in the first turn
        text: "I found the overdue invoice and emailed billing."
      chit-chat:
        no_call: true              # answer in text at once
        text: "Hello! How can I help?"
      broken-arguments:
        calls:
          - {name: get_invoice, raw_args: '{"invoice_id": "INV-'}   # verbatim, here malformed JSON
      weather-london:
        calls: [{name: get_weather, args: {city: London}}]
        p_calls: 0.5               # make the calls in this share of attempts; answer `text` at once in the others
        p_calls_if:                # ... the first rule whose offered tool's description contains the phrase sets the share
          - {tool: get_weather, contains: "current conditions", p: 0.95}
    seed: 1                        # the draws' seed (default 0)
    from:                          # behaviour changes from a date on (the run's run_date)
      "2026-11-01":
        defaults: {model_version: sim-script-2026-11}
        cases:
          weather-paris: {calls: [{name: get_weather, args: {city: paris}}], text: "Paris: cloudy."}

Resolution for (case, attempt, run date): `from` blocks dated on or before the
run date apply in date order; for each case the newest block that names it wins
and replaces the whole case entry (its `attempts` included), while `defaults`
merge key by key. Then `attempts[n]` is merged over the case entry. On model
turn k (the number of assistant messages already in the conversation) the sim
emits `calls[k]`, or, once the calls are used up, the final `text` (default
"Done."). `no_call: true` (or no `calls`) answers with `text` at once. `error`
(a status, or `{status, message}`) fails every turn of that case and attempt
with that HTTP status, so 429/5xx exercise the retries and 4xx fail at once.
A case id the script does not name gets no call and the text
"no script for this case"; without a run date the sim uses today's date.

`p_calls` makes the scripted calls a chance event, as a real model's choice
is: each attempt draws u in [0, 1) from a hash of (seed, case, attempt, the
offered tools' names and descriptions) and makes its calls when u < p. The
draw is deterministic, but any change to the catalog the model sees is a fresh
draw, as it is for a sampled model; `p_calls_if` ties the share to a
description, so a reworded description has a known true effect.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from evalcore.errors import ConfigError
from evalcore.models.sim.lexical import function_of
from evalcore.models.sim.reply import SimReply, SimToolCall, assistant_turns
from evalcore.paths import golden_file

UNKNOWN_CASE_TEXT = "no script for this case"
DEFAULT_TEXT = "Done."
BUILT_IN_DEFAULTS: Mapping[str, Any] = {"latency_ms": 0, "tokens": {"input": 0, "output": 0}, "model_version": "sim-script"}
DEFAULT_KEYS = frozenset(BUILT_IN_DEFAULTS)
CASE_KEYS = frozenset({"calls", "text", "no_call", "parallel", "error", "attempts", "p_calls", "p_calls_if"}) | DEFAULT_KEYS
TOP_KEYS = frozenset({"version", "defaults", "cases", "from", "seed"})
RULE_KEYS = frozenset({"tool", "contains", "p"})


@dataclass(frozen=True)
class Script:
    path: Path
    defaults: Mapping[str, Any]
    cases: Mapping[str, Mapping[str, Any]]
    changes: tuple[tuple[date, Mapping[str, Any], Mapping[str, Mapping[str, Any]]], ...]  # (from, defaults, cases), by date
    seed: int = 0

    def entry(self, case_id: str | None, attempt: int, run_date: date) -> tuple[Mapping[str, Any], Mapping[str, Any] | None]:
        """(defaults, case entry with the attempt override merged) as they stand on `run_date`; None for an unknown case."""
        defaults = {**BUILT_IN_DEFAULTS, **self.defaults}
        cases = dict(self.cases)
        for since, block_defaults, block_cases in self.changes:
            if since <= run_date:
                defaults.update(block_defaults)
                cases.update(block_cases)
        case = cases.get(case_id) if case_id is not None else None
        if case is None:
            return defaults, None
        override = (case.get("attempts") or {}).get(attempt, {})
        return defaults, {**{k: v for k, v in case.items() if k != "attempts"}, **override}


def _fail(path: Path, where: str, problem: str) -> ConfigError:
    return ConfigError(f"sim script {path}: {where}: {problem}")


def _check_keys(path: Path, where: str, entry: Any, allowed: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(entry, Mapping):
        raise _fail(path, where, f"expected a mapping, got {type(entry).__name__}")
    unknown = sorted(str(k) for k in entry if k not in allowed)
    if unknown:
        raise _fail(path, where, f"unknown key {unknown[0]!r} (expected one of: {', '.join(sorted(allowed))})")
    if "tokens" in entry:
        tokens = entry["tokens"]
        if not isinstance(tokens, Mapping) or not all(isinstance(tokens.get(k, 0), int) and tokens.get(k, 0) >= 0 for k in ("input", "output")):
            raise _fail(path, where, "tokens must be {input: int, output: int}")
    if "latency_ms" in entry and not (isinstance(entry["latency_ms"], int | float) and entry["latency_ms"] >= 0):
        raise _fail(path, where, "latency_ms must be a non-negative number")
    return entry


def _check_calls(path: Path, where: str, calls: Any) -> None:
    if not isinstance(calls, list):
        raise _fail(path, where, "calls must be a list of {name, args}")
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise _fail(path, f"{where}: calls[{index}]", "needs a tool name: {name: ..., args: {...}}")
        extra = set(call) - {"name", "args", "raw_args"}
        if extra:
            raise _fail(path, f"{where}: calls[{index}]", f"unknown key {sorted(extra)[0]!r} (expected name, args, raw_args)")
        if "args" in call and not isinstance(call["args"], Mapping):
            raise _fail(path, f"{where}: calls[{index}]", "args must be a mapping")
        if "raw_args" in call and not isinstance(call["raw_args"], str):
            raise _fail(path, f"{where}: calls[{index}]", "raw_args must be a string")


def _check_share(path: Path, where: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _fail(path, where, f"a share must be a number from 0 to 1, got {value!r}")


def _check_chances(path: Path, where: str, entry: Mapping[str, Any]) -> None:
    if "p_calls" in entry:
        _check_share(path, f"{where}: p_calls", entry["p_calls"])
    rules = entry.get("p_calls_if", [])
    if not isinstance(rules, list):
        raise _fail(path, where, "p_calls_if must be a list of {tool, contains, p}")
    for index, rule in enumerate(rules):
        rule_where = f"{where}: p_calls_if[{index}]"
        _check_keys(path, rule_where, rule, RULE_KEYS)
        if not all(isinstance(rule.get(key), str) for key in ("tool", "contains")) or "p" not in rule:
            raise _fail(path, rule_where, "needs tool, contains (text) and p: {tool: get_weather, contains: forecast, p: 0.9}")
        _check_share(path, f"{rule_where}: p", rule["p"])


def _check_case(path: Path, case_id: str, entry: Any) -> Mapping[str, Any]:
    where = f"case {case_id!r}"
    case = dict(_check_keys(path, where, entry, CASE_KEYS))
    _check_chances(path, where, case)
    if "calls" in case:
        _check_calls(path, where, case["calls"])
    attempts: dict[int, Mapping[str, Any]] = {}
    for key, override in (case.get("attempts") or {}).items():
        try:
            number = int(key)
        except (TypeError, ValueError):
            raise _fail(path, where, f"attempt key {key!r} is not a number") from None
        attempt_where = f"{where}: attempt {number}"
        checked = _check_keys(path, attempt_where, override, CASE_KEYS - {"attempts"})
        _check_chances(path, attempt_where, checked)
        if "calls" in checked:
            _check_calls(path, attempt_where, checked["calls"])
        attempts[number] = checked
    if attempts:
        case["attempts"] = attempts
    return case


def _check_cases(path: Path, where: str, cases: Any) -> dict[str, Mapping[str, Any]]:
    if cases is None:
        return {}
    if not isinstance(cases, Mapping):
        raise _fail(path, where, "cases must be a mapping of case id to behaviour")
    return {str(case_id): _check_case(path, str(case_id), entry) for case_id, entry in cases.items()}


def _as_date(path: Path, key: Any) -> date:
    if isinstance(key, date):
        return key
    try:
        return date.fromisoformat(str(key))
    except ValueError:
        raise _fail(path, "from", f"{key!r} is not a date (YYYY-MM-DD)") from None


def parse_script(path: Path, document: Any) -> Script:
    top = _check_keys(path, "top level", document if document is not None else {}, TOP_KEYS)
    defaults = _check_keys(path, "defaults", top.get("defaults") or {}, DEFAULT_KEYS)
    changes = []
    for key, block in (top.get("from") or {}).items():
        since = _as_date(path, key)
        checked = _check_keys(path, f"from {since}", block, frozenset({"defaults", "cases"}))
        block_defaults = _check_keys(path, f"from {since}: defaults", checked.get("defaults") or {}, DEFAULT_KEYS)
        changes.append((since, block_defaults, _check_cases(path, f"from {since}", checked.get("cases"))))
    changes.sort(key=lambda change: change[0])
    seed = top.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _fail(path, "seed", f"must be a whole number, got {seed!r}")
    return Script(path=path, defaults=defaults, cases=_check_cases(path, "cases", top.get("cases")), changes=tuple(changes), seed=seed)


@functools.lru_cache(maxsize=32)
def _load(path: Path, mtime_ns: int, size: int) -> Script:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"sim script {path}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    return parse_script(path, document)


def load_script(path: str | Path) -> Script:
    """The script at `path`, read again only when the file changed."""
    # absolute(), not resolve(): resolving symlinks lstat()s every path component, and the sim asks on every call.
    resolved = Path(path).expanduser().absolute()
    try:
        stat = resolved.stat()
    except FileNotFoundError as exc:  # a model's identity names its script relative to its project (evalcore.paths)
        found = golden_file(str(path))
        if found is None:
            raise ConfigError(f"sim script {path}: cannot read it ({exc.strerror}); model strings look like sim/script:path/to/script.yaml") from exc
        resolved = found.absolute()
        stat = resolved.stat()
    except OSError as exc:
        raise ConfigError(f"sim script {path}: cannot read it ({exc.strerror}); model strings look like sim/script:path/to/script.yaml") from exc
    return _load(resolved, stat.st_mtime_ns, stat.st_size)


def _calls(entry: Mapping[str, Any]) -> list[SimToolCall]:
    calls = []
    for call in entry.get("calls") or []:
        arguments = call["raw_args"] if "raw_args" in call else json.dumps(call.get("args") or {}, default=str)
        calls.append(SimToolCall(call["name"], arguments))
    return calls


def _error(entry: Mapping[str, Any]) -> tuple[int | None, str]:
    error = entry.get("error")
    if error is None:
        return None, ""
    if isinstance(error, Mapping):
        return int(error.get("status", 500)), str(error.get("message", "scripted failure"))
    return int(error), "scripted failure"


def calls_share(entry: Mapping[str, Any], tools: Sequence[Mapping[str, Any]] | None) -> float:
    """The share of attempts that make the scripted calls: the first `p_calls_if` rule whose tool is offered with a
    description containing its phrase, else `p_calls`, else 1."""
    descriptions = {str(function_of(tool).get("name")): str(function_of(tool).get("description") or "") for tool in tools or ()}
    for rule in entry.get("p_calls_if") or ():
        if rule["tool"] in descriptions and rule["contains"].lower() in descriptions[rule["tool"]].lower():
            return float(rule["p"])
    return float(entry.get("p_calls", 1.0))


def attempt_draw(seed: int, case_id: str, attempt: int, tools: Sequence[Mapping[str, Any]] | None) -> float:
    """u in [0, 1), fixed by the seed, the case, the attempt and the catalog the model sees (names and descriptions, in order)."""
    catalog = [(str(function_of(t).get("name")), str(function_of(t).get("description") or "")) for t in tools or ()]
    digest = hashlib.sha256(json.dumps([seed, case_id, attempt, catalog]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def script_reply(
    script: Script, messages: Sequence[Mapping[str, Any]], context: Mapping[str, Any], tools: Sequence[Mapping[str, Any]] | None = None
) -> SimReply:
    """What the script says the model does on this turn of this case, attempt and run date, offered these tools."""
    raw_date = context.get("run_date")
    run_date = raw_date if isinstance(raw_date, date) else date.fromisoformat(str(raw_date)) if raw_date else date.today()
    case_id = context.get("case_id")
    defaults, entry = script.entry(None if case_id is None else str(case_id), int(context.get("attempt") or 1), run_date)
    settings = {**defaults, **(entry or {})}
    tokens = settings.get("tokens") or {}
    common: dict[str, Any] = {
        "input_tokens": int(tokens.get("input", 0)),
        "output_tokens": int(tokens.get("output", 0)),
        "latency_ms": float(settings.get("latency_ms", 0)),
        "model_version": str(settings.get("model_version")),
    }
    if entry is None:
        return SimReply(text=UNKNOWN_CASE_TEXT, **common)
    status, message = _error(entry)
    if status is not None:
        return SimReply(text=None, error_status=status, error_message=message, **common)
    text = str(entry.get("text", DEFAULT_TEXT))
    calls = [] if entry.get("no_call") else _calls(entry)
    if calls and ("p_calls" in entry or "p_calls_if" in entry):
        attempt = int(context.get("attempt") or 1)
        if attempt_draw(script.seed, str(case_id), attempt, tools) >= calls_share(entry, tools):
            calls = []
    turn = assistant_turns(messages)
    if entry.get("parallel"):
        return SimReply(text=None, tool_calls=tuple(calls), **common) if turn == 0 and calls else SimReply(text=text, **common)
    if turn < len(calls):
        return SimReply(text=None, tool_calls=(calls[turn],), **common)
    return SimReply(text=text, **common)
