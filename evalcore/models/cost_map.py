"""I/O layer: litellm's bundled cost map, read as a file, without importing litellm.

litellm prices calls from `model_prices_and_context_window_backup.json` in its package when
`LITELLM_LOCAL_MODEL_COST_MAP` is set (evalcore sets it). The OpenAI-wire route (`evalcore.models.openai_route`)
reads the same file, to know a model's prices (cached, audio and reasoning tokens included) and whether litellm
treats it as a reasoning model, without paying seconds of CPU for `import litellm`. The file is found with
`importlib.util.find_spec`, which does not run litellm's `__init__`, once per process, and read once per file
version (its path, size and modification time). Once litellm is imported, its live map is read instead: it is
the same file plus whatever was registered with litellm since.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

COST_MAP_FILE = "model_prices_and_context_window_backup.json"
# The per-token prices of a chat call, as litellm's `generic_cost_per_token` reads them for a call with no service
# tier. An entry with any other per-token price (`*_above_*_tokens`: a price by call size) is priced by litellm.
PRICE_FIELDS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "input_cost_per_audio_token",
    "output_cost_per_audio_token",
    "output_cost_per_reasoning_token",
)


@dataclass(frozen=True)
class CostMapEntry:
    """What the map says of one chat model: its prices (USD per token, None when absent), and how litellm treats it."""

    prices: Mapping[str, float | None]
    tiered: bool  # a `*_above_*_tokens` rate: litellm prices such calls one by one
    supports_reasoning: bool

    @property
    def input_cost_per_token(self) -> float | None:
        return self.prices.get("input_cost_per_token")

    @property
    def output_cost_per_token(self) -> float | None:
        return self.prices.get("output_cost_per_token")

    @property
    def flat(self) -> bool:
        prices = (self.input_cost_per_token, self.output_cost_per_token)
        return not self.tiered and all(p is not None and math.isfinite(p) for p in prices)


@functools.cache
def cost_map_path() -> Path | None:
    """litellm's bundled cost map, or None when litellm (or the file) is not installed.

    Looked up once per process: the route of every model call asks, and `find_spec` walks the import path."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / COST_MAP_FILE
        if path.is_file():
            return path
    return None


def bundled_entry(model: str) -> CostMapEntry | None:
    """The map's chat entry for a model string (`openai/NAME` as litellm keys it: `NAME`, else `openai/NAME`), or None."""
    provider, _, name = model.partition("/")
    keys = (name, model) if provider == "openai" else (model,)
    litellm = getattr(sys.modules.get("evalcore.models.litellm_loader"), "litellm", None)  # None while it is imported
    if litellm is not None:  # the live map: the bundled file and what was registered with litellm since
        live: Mapping[str, object] = litellm.model_cost
        return next((entry for key in keys if (entry := _entry(live.get(key))) is not None), None)
    path = cost_map_path()
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:  # removed since it was found
        return None
    return next((entry for key in keys if (entry := _file_entry(str(path), stat.st_size, stat.st_mtime_ns, key)) is not None), None)


@functools.lru_cache(maxsize=256)
def _file_entry(path: str, size: int, mtime_ns: int, key: str) -> CostMapEntry | None:
    """One model's entry in the map file, read once per file version (path, size and time are its identity) and key."""
    return _entry(_file(path, size, mtime_ns).get(key))


@functools.lru_cache(maxsize=2)
def _file(path: str, size: int, mtime_ns: int) -> dict[str, object]:
    """The map file's JSON object, read once per file version (the arguments are its identity)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry(info: object) -> CostMapEntry | None:
    if not isinstance(info, dict) or info.get("mode") != "chat":
        return None
    return CostMapEntry(
        prices={field: _price(info.get(field)) for field in PRICE_FIELDS},
        tiered=any("_above_" in field and value is not None for field, value in info.items()),
        supports_reasoning=bool(info.get("supports_reasoning")),
    )


def _price(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
