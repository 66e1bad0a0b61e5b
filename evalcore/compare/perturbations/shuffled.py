"""Pure logic: the `shuffled` perturbation: the server's tools offered in another order, nothing else changed.

A model that reads the catalog as a set picks the same tools; a difference
measures position bias (a model that favours the first or last tool listed).
"""

from __future__ import annotations

from evalcore.compare.perturbations import CatalogInput, perturbation
from evalcore.models.tool_format import CatalogRewrite

ID = "shuffled"


@perturbation(ID, title="tools offered in a shuffled order")
def shuffled(catalog: CatalogInput) -> CatalogRewrite:
    names = catalog.model_names()
    order = list(names)
    rng = catalog.rng(ID)
    for _ in range(10):  # a permutation that moves something, when there are two tools or more
        rng.shuffle(order)
        if order != names or len(names) < 2:
            break
    return CatalogRewrite(order=tuple(order))
