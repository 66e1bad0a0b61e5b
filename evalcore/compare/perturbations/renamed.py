"""Pure logic: the `renamed` perturbation: every tool offered under an opaque name (tool_1 ... tool_n).

The numbers are dealt in a shuffled order, so no name hints at the server's
order either. Descriptions and schemas stay; calls still go to the real tools.
It shows how much a model leans on names rather than descriptions.
"""

from __future__ import annotations

from evalcore.compare.perturbations import CatalogInput, perturbation
from evalcore.models.tool_format import CatalogRewrite, ToolOverride

ID = "renamed"


@perturbation(ID, title="tools renamed tool_1 … tool_n")
def renamed(catalog: CatalogInput) -> CatalogRewrite:
    names = catalog.names
    numbers = list(range(1, len(names) + 1))
    catalog.rng(ID).shuffle(numbers)
    taken = set(names)
    overrides = {}
    for name, number in zip(names, numbers, strict=True):
        new_name = f"tool_{number}"
        while new_name in taken:  # a server that already has a tool_<n>
            new_name = f"{new_name}_"
        overrides[name] = ToolOverride(name=new_name)
    return CatalogRewrite(overrides)
