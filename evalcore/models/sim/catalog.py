"""Pure logic: the `sim/` model strings and which policy answers each.

    sim/lexical              the lexical tool-selection baseline (`lexical.py`)
    sim/script:<path>        replays a YAML script per case and attempt (`script.py`)
    sim/judge                the word-overlap judge (`judge_policy.py`)
    sim/drafter              drafts golden cases from tool names, descriptions and schemas (`drafter.py`)

The same policies serve the HTTP endpoint as models `sim-lexical` and `sim-judge`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evalcore.errors import ConfigError
from evalcore.models.sim.drafter import drafter_reply
from evalcore.models.sim.judge_policy import judge_reply
from evalcore.models.sim.lexical import lexical_reply
from evalcore.models.sim.reply import SimReply
from evalcore.models.sim.script import load_script, script_reply

SimKind = Literal["lexical", "script", "judge", "drafter"]
SIM_PROVIDER = "sim"
SIM_MODELS = ("sim/lexical", "sim/script:<path>", "sim/judge", "sim/drafter")


@dataclass(frozen=True)
class SimModel:
    kind: SimKind
    script_path: str | None = None


def parse_sim_model(name: str) -> SimModel:
    """`sim/lexical`, `sim/judge` or `sim/script:<path>` (the `sim/` prefix optional, as litellm strips it)."""
    model = name.removeprefix(f"{SIM_PROVIDER}/")
    if model in ("lexical", "judge", "drafter"):
        return SimModel(kind=model)  # type: ignore[arg-type]
    if model.startswith("script:") and model.removeprefix("script:").strip():
        return SimModel(kind="script", script_path=model.removeprefix("script:").strip())
    raise ConfigError(f"unknown sim model {name!r}; the sim models are {', '.join(SIM_MODELS)}")


def check_sim_model(name: str) -> SimModel:
    """Parse the model string and, for a script, load it now, so a bad path or script fails before any call."""
    model = parse_sim_model(name)
    if model.script_path is not None:
        load_script(model.script_path)
    return model


def sim_reply(name: str, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None, context: Mapping[str, Any]) -> SimReply:
    model = parse_sim_model(name)
    if model.kind == "lexical":
        return lexical_reply(messages, tools)
    if model.kind == "judge":
        return judge_reply(messages, tools)
    if model.kind == "drafter":
        return drafter_reply(messages, tools)
    assert model.script_path is not None
    return script_reply(load_script(model.script_path), messages, context, tools)
