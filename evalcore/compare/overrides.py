"""Pure logic (plus one bounded file read): the `--candidate-tools` file, tool overrides the candidate arm's models see,
and what the models of two runs saw differently.

    tools:
      get_weather:
        description: "Current weather conditions for a city: temperature and sky."
        name: current_weather      # optional: the name the model sees; its calls still go to get_weather

The file is read within small YAML limits (`evalcore.golden.yaml_reader`),
so a hostile file costs bounded time and memory. Every problem names the file
and its line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.errors import ConfigError
from evalcore.golden.limits import GoldenLimits
from evalcore.golden.yaml_reader import LineMapping, YamlRefusal, read_yaml
from evalcore.models.tool_format import MODEL_NAME_PATTERN, ToolOverride, assign_model_names, with_overrides

OVERRIDE_LIMITS = GoldenLimits(file_bytes=1024 * 1024, nodes=20_000, alias_nodes=1_000, depth=8, prompt_chars=20_000, cases=1)
OVERRIDE_KEYS = ("description", "name")
FORM = 'tools: {TOOL_NAME: {description: "...", name: "new_name"}}'


def load_overrides(path: Path) -> dict[str, ToolOverride]:
    """The overrides in `path`, by the server's tool name; a `ConfigError` naming the file and line for anything else."""
    try:
        size = path.stat().st_size
        if size > OVERRIDE_LIMITS.file_bytes:
            raise ConfigError(f"{path}: {size} bytes, more than a tool-overrides file may have ({OVERRIDE_LIMITS.file_bytes})")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the tool-overrides file ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        document = read_yaml(text, OVERRIDE_LIMITS)
    except YamlRefusal as refusal:
        raise ConfigError(f"{path}:{refusal.line or 1}: {refusal.reason}") from None
    if not isinstance(document, LineMapping) or set(document) != {"tools"} or not isinstance(document["tools"], LineMapping):
        line = document.line if isinstance(document, LineMapping) else 1
        raise ConfigError(f"{path}:{line}: expected one key, tools, in the form {FORM}")
    tools = document["tools"]
    if not tools:
        raise ConfigError(f"{path}:{tools.line}: tools lists no tool; the candidate would be the baseline")
    overrides: dict[str, ToolOverride] = {}
    for tool_name, entry in tools.items():
        where = f"{path}:{tools.line_of(tool_name)}: tool {tool_name!r}"
        if not isinstance(entry, LineMapping) or not entry or set(entry) - set(OVERRIDE_KEYS):
            raise ConfigError(f"{where}: expected description and/or name, in the form {FORM}")
        values = {key: entry.get(key) for key in OVERRIDE_KEYS}
        for key, value in values.items():
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ConfigError(f"{path}:{entry.line_of(key)}: tool {tool_name!r}: {key} must be non-empty text")
            if value is not None and len(value) > OVERRIDE_LIMITS.prompt_chars:
                raise ConfigError(f"{path}:{entry.line_of(key)}: tool {tool_name!r}: {key} is longer than {OVERRIDE_LIMITS.prompt_chars} characters")
        new_name = values["name"]
        if new_name is not None and not MODEL_NAME_PATTERN.match(new_name):
            raise ConfigError(f"{path}:{entry.line_of('name')}: tool {tool_name!r}: name {new_name!r} must be 1-64 letters, digits, '_' or '-'")
        overrides[str(tool_name)] = ToolOverride(description=values["description"], name=new_name)
    return overrides


def check_overrides(path: Path, overrides: Mapping[str, ToolOverride], server_tools: Sequence[str]) -> None:
    """A `ConfigError` for an override of a tool the server does not list, or a new name the model would see twice."""
    unknown = [name for name in overrides if name not in server_tools]
    if unknown:
        raise ConfigError(f"{path}: tool {unknown[0]!r} is not a tool of the server (it lists: {', '.join(server_tools) or 'no tools'})")
    try:
        with_overrides(assign_model_names(list(server_tools)), overrides)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def seen_catalog(server_tools: Sequence[Mapping[str, Any]], catalog: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """What the models saw of each tool in a run: real name -> (the name shown, the description shown).

    `server_tools` is a run's `server_tools_json` ([{"name", "description"}, ...]); `catalog` its config's `catalog`
    (`CatalogRewrite.to_json`: {"tools": {TOOL: {"description", "name", "remove_description"}}, "distractors": [...]},
    {} when the run showed the tools as listed). A distractor is a tool of its own, never on the server.
    """
    overrides = catalog.get("tools") or {}
    seen: dict[str, tuple[str, str]] = {}
    for tool in server_tools:
        name = str(tool.get("name"))
        override = overrides.get(name) or {}
        description = "" if override.get("remove_description") else str(override.get("description") or tool.get("description") or "")
        seen[name] = (str(override.get("name") or name), description)
    for distractor in catalog.get("distractors") or ():
        name = str(distractor.get("name"))
        seen.setdefault(name, (name, str(distractor.get("description") or "")))
    return seen


def catalog_diff(baseline: Mapping[str, tuple[str, str]], candidate: Mapping[str, tuple[str, str]]) -> dict[str, str]:
    """Per server tool whose shown name or description differs between two `seen_catalog`s, the difference in words
    (a rename, then the description as a unified diff, difflib); {} when the models of both saw the same tools."""
    differences: dict[str, str] = {}
    for name in candidate:
        if name not in baseline:
            differences[name] = f"added tool {candidate[name][0]}: {candidate[name][1]}"
    for name in baseline:
        if name not in candidate:
            differences[name] = f"removed tool {baseline[name][0]}"
            continue
        (old_name, old_text), (new_name, new_text) = baseline[name], candidate.get(name, baseline[name])
        lines = [f"shown as {new_name} (was {old_name})"] if old_name != new_name else []
        if old_text != new_text:
            diff = difflib.unified_diff(old_text.splitlines(), new_text.splitlines(), "baseline", "candidate", lineterm="", n=0)
            lines += [line for line in diff if not line.startswith("@@")]
        if lines:
            differences[name] = "\n".join(lines)
    return differences
