"""Pure logic: the `short_descriptions` perturbation: every description cut to the start of its first sentence.

    short = the first sentence (up to the first ". " or line break), at most SHORT_WORDS words

It shows which tools lean on the detail of a long description: the lists,
examples and "use X instead" notes that come after its first words.
"""

from __future__ import annotations

import re

from evalcore.compare.perturbations import CatalogInput, perturbation
from evalcore.models.tool_format import CatalogRewrite, ToolOverride

ID = "short_descriptions"
SHORT_WORDS = 6
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def shorten(description: str) -> str:
    """The first sentence of `description`, cut to SHORT_WORDS words."""
    first = _SENTENCE_END.split(description.strip(), maxsplit=1)[0].strip()
    words = first.split()
    return " ".join(words[:SHORT_WORDS]).rstrip(",;:(") + ("…" if len(words) > SHORT_WORDS else "")


@perturbation(ID, title=f"descriptions cut to {SHORT_WORDS} words")
def short_descriptions(catalog: CatalogInput) -> CatalogRewrite:
    overrides = {}
    for tool in catalog.tools:
        description = str(tool.get("description") or "")
        short = shorten(description)
        if short and short != description:
            overrides[str(tool.get("name", ""))] = ToolOverride(description=short)
    return CatalogRewrite(overrides)
