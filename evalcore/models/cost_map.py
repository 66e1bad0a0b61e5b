"""I/O layer: litellm's bundled cost map, read as a file, without importing litellm.

litellm prices calls from `model_prices_and_context_window_backup.json` in its package when
`LITELLM_LOCAL_MODEL_COST_MAP` is set (evalcore sets it). The direct route (`evalcore.models.direct`) reads the
same file, to know that a model is one litellm would price flat, and at what price, without paying seconds of
CPU for `import litellm`. The file is found with `importlib.util.find_spec`, which does not run litellm's
`__init__`, once per process, and read once per file version (its path, size and modification time).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from dataclasses import dataclass
from pathlib import Path

COST_MAP_FILE = "model_prices_and_context_window_backup.json"


@dataclass(frozen=True)
class CostMapEntry:
    """What the map says of one chat model: its unit prices (USD per token) and whether litellm treats it specially."""

    input_cost_per_token: float | None
    output_cost_per_token: float | None
    tiered: bool  # a `*_above_*_tokens` rate: litellm prices such calls one by one
    supports_reasoning: bool

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


def bundled_openai_chat_model(name: str) -> CostMapEntry | None:
    """The map's entry for OpenAI chat model `name` (as litellm keys it: `name`, or `openai/name`), or None."""
    path = cost_map_path()
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:  # removed since it was found
        return None
    return _entries(str(path), stat.st_size, stat.st_mtime_ns).get(name)


@functools.lru_cache(maxsize=4)
def _entries(path: str, size: int, mtime_ns: int) -> dict[str, CostMapEntry]:
    """The map's `openai` chat models by bare name, read once per file version (the arguments are its identity)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries: dict[str, CostMapEntry] = {}
    for key, info in data.items() if isinstance(data, dict) else ():
        if not isinstance(info, dict) or info.get("litellm_provider") != "openai" or info.get("mode") != "chat":
            continue
        bare = key.removeprefix("openai/")
        if bare in entries and key != bare:
            continue  # the bare key is the one litellm finds first
        entries[bare] = CostMapEntry(
            input_cost_per_token=_price(info.get("input_cost_per_token")),
            output_cost_per_token=_price(info.get("output_cost_per_token")),
            tiered=any("_above_" in field and value is not None for field, value in info.items()),
            supports_reasoning=bool(info.get("supports_reasoning")),
        )
    return entries


def _price(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
