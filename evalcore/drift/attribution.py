"""Pure logic: why a (model, case) changed: every fingerprint of the last run before a change point against the first after it.

The fingerprints (`Fingerprints`) compared, and what a difference is called:

| fingerprint                                     | component  | label                                |
|-------------------------------------------------|------------|--------------------------------------|
| server fingerprint (discover + tools/list)      | `server`   | server change (+ description diff)   |
| model version the provider reported             | `model`    | model update                         |
| ... an agent host's version in front of it      | `model`    | host update (claude-code 2.1.3 -> 4) |
| case hash (the golden case, its `system:` key)  | `case`     | golden case edited                   |
| system prompt sent, temperature, seed, steps... | `settings` | system prompt or sampling changed    |
| evalcore's version                              | `evalcore` | evalcore version changed             |

Two or more at the same change point: "ambiguous: server and model changed",
never one of them. None: "silent model update suspected" (for a drop), with
the evidence that nothing else changed. A model version that one side did not
report (None) is not counted as a change: there is nothing to compare. A
system prompt that changed together with the case hash is the case's own
`system:` key, so it counts as the case edit alone.

An attribution names the change that coincides with the change point; it is a
lead to check, not proof.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from evalcore.drift.types import Cause, ChangeKind, Component, Fingerprints
from evalcore.models.types import short_model_name, version_without_name

LABELS: Final[Mapping[Component, str]] = {
    "server": "server change",
    "model": "model update",
    "case": "golden case edited",
    "settings": "system prompt or sampling changed",
    "evalcore": "evalcore version changed",
}
NAMES: Final[Mapping[Component, str]] = {
    "server": "server",
    "model": "model",
    "case": "golden case",
    "settings": "system prompt or sampling",
    "evalcore": "evalcore",
}
SILENT: Final = "silent model update suspected"
HOST_NAMES: Final = ("claude-code", "codex")  # the agent hosts (evalcore.hosts.spec.HOSTS), whose version leads a host model's version
NO_CHANGE_RECOVERY: Final = "recovered with no fingerprint change"
SYSTEM_PROMPT_KEY: Final = "system_prompt"


@dataclass(frozen=True)
class Attribution:
    cause: Cause
    changed: tuple[Component, ...]
    label: str
    evidence: str
    description_diff: str


def changed_components(before: Fingerprints, after: Fingerprints) -> tuple[Component, ...]:
    """The fingerprints that differ between two runs of one (model, case), in the order of the module docstring's table."""
    changed: list[Component] = []
    if before.server != after.server:
        changed.append("server")
    if before.model_version is not None and after.model_version is not None and before.model_version != after.model_version:
        changed.append("model")
    case_edited = before.case_hash != after.case_hash
    if case_edited:
        changed.append("case")
    settings = _settings_diff_keys(before, after)
    if case_edited:
        settings = [key for key in settings if key != SYSTEM_PROMPT_KEY]
    if settings:
        changed.append("settings")
    if before.evalcore_version != after.evalcore_version:
        changed.append("evalcore")
    return tuple(changed)


def attribute(kind: ChangeKind, before: Fingerprints, after: Fingerprints, *, last_good: tuple[str, date], first_after: tuple[str, date]) -> Attribution:
    """The cause of a change between the run `last_good` (id, date) and the run `first_after`, with its evidence."""
    changed = changed_components(before, after)
    if len(changed) > 1:
        cause: Cause = "ambiguous"
        label = f"ambiguous: {_and([NAMES[c] for c in changed])} changed"
    elif changed:
        cause = changed[0]
        label = LABELS[changed[0]]
        host = host_update(before.model_version, after.model_version) if cause == "model" else None
        if host is not None:
            label = f"host update ({host[0]} -> {host[1]})"
    else:
        cause = "silent"
        label = SILENT if kind == "drop" else NO_CHANGE_RECOVERY
    diff = description_diff(_tools(before.server_tools_json), _tools(after.server_tools_json)) if "server" in changed else ""
    return Attribution(cause, changed, label, _evidence(before, after, last_good, first_after, diff), diff)


def host_update(before: str | None, after: str | None) -> tuple[str, str] | None:
    """(old, new) when an agent host's own version changed (`claude-code 2.1.332 / model` -> `claude-code 2.1.340 / ...`,
    `evalcore.hosts`), else None."""
    if before is None or after is None or not before.startswith(tuple(f"{host} " for host in HOST_NAMES)):
        return None
    old, new = before.split(" / ")[0], after.split(" / ")[0]
    return (old, new) if old != new else None


def action_sentence(
    kind: ChangeKind,
    attribution: Attribution,
    *,
    model: str,
    case_id: str,
    change_date: date,
    rates: tuple[float, float],
    before: Fingerprints,
    after: Fingerprints,
) -> str:
    """One sentence a user can act on, plain text (no markup; sim scripts by file name), e.g. "tools/list changed the search_kb
    description on 2026-11-19; pass rate 100% → 60% since: …"."""
    rate = f"pass rate {rates[0]:.0%} → {rates[1]:.0%} since"
    on = change_date.isoformat()
    if kind == "recovery":
        if attribution.cause == "silent":
            why = "nothing evalcore fingerprints changed, so the provider may have fixed the model"
        elif attribution.cause == "ambiguous":
            why = f"the {_and([NAMES[c] for c in attribution.changed])} changed that night"
        else:
            why = f"{_what_changed(attribution, before, after, model)} that night"
        return f"{case_id} recovered on {on}; {rate}; {why}: the open flag is closed by that run."
    if attribution.cause == "server":
        return f"{_server_change(before, after)} on {on}; {rate}: review or revert that change (diff below)."
    host = host_update(before.model_version, after.model_version) if attribution.cause == "model" else None
    if host is not None:
        return f"The agent host changed from {host[0]} to {host[1]} on {on}; {rate}: pin the earlier host version (hosts/package.json) to confirm."
    if attribution.cause == "model":
        return (
            f"{short_model_name(model)} reported version {_version(model, after)} instead of {_version(model, before)} from {on}; {rate}: "
            "pin the earlier version if the provider allows it, or adapt the tool descriptions to the new one."
        )
    if attribution.cause == "case":
        return f"The golden case {case_id} was edited on {on}; {rate}: check the edit against the model's calls before trusting either."
    if attribution.cause == "settings":
        change = _settings_change(before, after)
        return f"{change[:1].upper()}{change[1:]} on {on}; {rate}: revert it, or accept the new pass rate as the baseline."
    if attribution.cause == "evalcore":
        versions = f"{before.evalcore_version} to {after.evalcore_version}"
        return f"evalcore changed from {versions} on {on}; {rate}: re-run one night with {before.evalcore_version} to confirm."
    if attribution.cause == "ambiguous":
        both = "both" if len(attribution.changed) == 2 else "all"
        return f"The {_and([NAMES[c] for c in attribution.changed])} {both} changed on {on}; {rate}: re-run with one of them as before to tell which it was."
    return (
        f"Nothing evalcore fingerprints changed on {on}, yet {rate}: the provider may have updated {short_model_name(model)} silently; "
        "compare a failing transcript with a passing one from before."
    )


def description_diff(old_tools: Sequence[Mapping[str, Any]], new_tools: Sequence[Mapping[str, Any]]) -> str:
    """Added and removed tools, and each changed description as a unified diff (difflib); "" when nothing changed.

    `old_tools` / `new_tools` are `server_tools_json` lists: [{"name": ..., "description": ...}, ...].
    """
    old = {str(t.get("name")): str(t.get("description") or "") for t in old_tools}
    new = {str(t.get("name")): str(t.get("description") or "") for t in new_tools}
    lines: list[str] = []
    lines.extend(f"added tool {name}" for name in new if name not in old)
    lines.extend(f"removed tool {name}" for name in old if name not in new)
    for name in new:
        if name in old and old[name] != new[name]:
            lines.append(f"changed description of {name}:")
            lines.extend(f"  {line}" for line in _unified(old[name], new[name]))
    return "\n".join(lines)


def _evidence(before: Fingerprints, after: Fingerprints, last_good: tuple[str, date], first_after: tuple[str, date], diff: str) -> str:
    lines = [f"run {last_good[0]} ({last_good[1]}, the last before the change) against run {first_after[0]} ({first_after[1]}, the first after):"]
    lines.append("  model version: " + _compare(before.model_version, after.model_version, unreported="not reported"))
    lines.append("  server fingerprint: " + _compare(before.server[:12], after.server[:12]))
    lines.append("  case hash: " + _compare(before.case_hash, after.case_hash))
    settings_keys = _settings_diff_keys(before, after)
    old, new = dict(before.settings), dict(after.settings)
    if settings_keys:
        shown = [f"{key} {old.get(key, '—')} -> {new.get(key, '—')}" for key in settings_keys if key != SYSTEM_PROMPT_KEY]
        if SYSTEM_PROMPT_KEY in settings_keys:
            shown.insert(0, "system prompt changed")
        lines.append("  system prompt and sampling: " + "; ".join(shown))
    else:
        lines.append("  system prompt and sampling: unchanged")
    lines.append("  evalcore version: " + _compare(before.evalcore_version, after.evalcore_version))
    if diff:
        lines.append(diff)
    elif before.server != after.server:
        lines.append("tool names and descriptions unchanged (the change is in input schemas, annotations or server/discover)")
    if SYSTEM_PROMPT_KEY in settings_keys:
        lines.append("system prompt:")
        lines.extend(f"  {line}" for line in _unified(old.get(SYSTEM_PROMPT_KEY, ""), new.get(SYSTEM_PROMPT_KEY, "")))
    return "\n".join(lines)


def _compare(old: str | None, new: str | None, *, unreported: str = "—") -> str:
    old_text, new_text = old if old is not None else unreported, new if new is not None else unreported
    return f"unchanged ({new_text})" if old == new else f"{old_text} -> {new_text}"


def _settings_diff_keys(before: Fingerprints, after: Fingerprints) -> list[str]:
    old, new = dict(before.settings), dict(after.settings)
    return [key for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


def _server_change(before: Fingerprints, after: Fingerprints) -> str:
    old = {str(t.get("name")): str(t.get("description") or "") for t in _tools(before.server_tools_json)}
    new = {str(t.get("name")): str(t.get("description") or "") for t in _tools(after.server_tools_json)}
    described = [name for name in new if name in old and old[name] != new[name]]
    added = [name for name in new if name not in old]
    removed = [name for name in old if name not in new]
    parts = []
    if described:
        parts.append(f"changed the {_and(described)} description{'s' if len(described) > 1 else ''}")
    if added:
        parts.append(f"added {_and(added)}")
    if removed:
        parts.append(f"removed {_and(removed)}")
    return "tools/list " + _and(parts) if parts else "the server's tools or discover result changed (not a name or description)"


def _settings_change(before: Fingerprints, after: Fingerprints) -> str:
    old, new = dict(before.settings), dict(after.settings)
    parts = [
        "the system prompt changed" if key == SYSTEM_PROMPT_KEY else f"{key} went from {old.get(key, '—')} to {new.get(key, '—')}"
        for key in _settings_diff_keys(before, after)
    ]
    return _and(parts)


def _what_changed(attribution: Attribution, before: Fingerprints, after: Fingerprints, model: str) -> str:
    if attribution.cause == "server":
        return _server_change(before, after)
    if attribution.cause == "model":
        return f"the model reported version {_version(model, after)} instead of {_version(model, before)}"
    if attribution.cause == "settings":
        return _settings_change(before, after)
    if attribution.cause == "evalcore":
        return f"evalcore changed from {before.evalcore_version} to {after.evalcore_version}"
    return "the golden case was edited"


def _version(model: str, fingerprints: Fingerprints) -> str:
    return version_without_name(model, fingerprints.model_version) or "not reported"


def _unified(old: str, new: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1))[2:]  # without the ---/+++ file header


def _and(items: Sequence[str]) -> str:
    return "".join(items) if len(items) < 2 else ", ".join(items[:-1]) + " and " + items[-1]


def _tools(server_tools_json: str) -> list[Mapping[str, Any]]:
    try:
        tools = json.loads(server_tools_json or "[]")
    except json.JSONDecodeError:
        return []
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
