"""Pure logic: the `no_descriptions` perturbation: every tool offered without its description (name and schema only).

It shows which tools a model finds by their name alone, and which only
through words their description carries.
"""

from __future__ import annotations

from evalcore.compare.perturbations import CatalogInput, perturbation
from evalcore.models.tool_format import CatalogRewrite, ToolOverride

ID = "no_descriptions"


@perturbation(ID, title="descriptions removed")
def no_descriptions(catalog: CatalogInput) -> CatalogRewrite:
    return CatalogRewrite({name: ToolOverride(remove_description=True) for name in catalog.names})
