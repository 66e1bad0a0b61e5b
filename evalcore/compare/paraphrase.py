"""Orchestration: the `--paraphrase-model`'s rewording of each tool description, asked once before any arm runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from evalcore.compare.perturbations.paraphrased import PARAPHRASE_PROMPT
from evalcore.errors import ModelError
from evalcore.models.adapter import IN_PROCESS, ModelCaller
from evalcore.models.tool_format import ToolNameMap
from evalcore.models.types import ModelSpec
from evalcore.redaction import clip

MAX_PARAPHRASE_CHARS = 2_000


async def paraphrase_descriptions(model: ModelSpec, descriptions: Iterable[str], models: ModelCaller = IN_PROCESS) -> dict[str, str]:
    """Each distinct description with the model's rewording; ModelError when the model fails or answers nothing."""
    distinct = list(dict.fromkeys(d for d in descriptions if d.strip()))

    async def one(description: str) -> str:
        messages = [{"role": "user", "content": PARAPHRASE_PROMPT.format(description=description)}]
        turn = await models.complete(model, messages, [], ToolNameMap(), context={"purpose": "paraphrase"})
        text = (turn.text or "").strip()
        if not text:
            raise ModelError(f"{model.name} gave no paraphrase of the description {clip(description, 80)!r}")
        return clip(text, MAX_PARAPHRASE_CHARS)

    reworded = await asyncio.gather(*(one(description) for description in distinct))
    return dict(zip(distinct, reworded, strict=True))
