"""Pure logic: the `paraphrased` perturbation: every description as a named model reworded it (`--paraphrase-model`).

The command asks the model once per description, before any arm runs
(`PARAPHRASE_PROMPT`); the same meaning in other words shows how much a
model depends on the exact wording.
"""

from __future__ import annotations

from evalcore.compare.perturbations import CatalogInput, perturbation
from evalcore.models.tool_format import CatalogRewrite, ToolOverride

ID = "paraphrased"
PARAPHRASE_PROMPT = (
    "Paraphrase the tool description below for an API catalog: keep its meaning, use other words, at most two sentences. "
    "Answer with the new description only.\n\n{description}"
)


@perturbation(ID, title="descriptions paraphrased by a model", needs_model=True)
def paraphrased(catalog: CatalogInput) -> CatalogRewrite:
    assert catalog.paraphrase is not None  # Perturbation.apply checks it
    overrides = {}
    for tool in catalog.tools:
        description = str(tool.get("description") or "")
        if description.strip():
            overrides[str(tool.get("name", ""))] = ToolOverride(description=catalog.paraphrase(description))
    return CatalogRewrite(overrides)
