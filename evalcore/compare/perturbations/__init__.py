"""Pure logic: the registry of catalog perturbations, keyed by stable id (`evalcore perturb`).

A perturbation is one module in this package: a function from the server's
tool listing (`CatalogInput`) to what the models see instead (a
`CatalogRewrite`: overrides, distractor tools, order), registered with
`@perturbation`. Its id, title and whether it needs a model (`--paraphrase-model`)
are declared there and nowhere else; adding one is adding one file.

A generator is deterministic: its randomness comes from `CatalogInput.rng`,
seeded by `--seed` and the perturbation's id, so one seed gives one rewrite.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.models.tool_format import CatalogRewrite, assign_model_names


@dataclass(frozen=True)
class CatalogInput:
    """What a perturbation may read: the tools as the server lists them, the seed, and a named model's paraphraser."""

    tools: Sequence[Mapping[str, Any]]
    seed: int = 0
    paraphrase: Callable[[str], str] | None = None  # description -> the `--paraphrase-model`'s rewording

    def rng(self, perturbation_id: str) -> random.Random:
        return random.Random(f"{self.seed}:{perturbation_id}")

    @property
    def names(self) -> list[str]:
        return [str(tool.get("name", "")) for tool in self.tools]

    def model_names(self) -> list[str]:
        """The names the model sees for the server's tools, in the server's order."""
        name_map = assign_model_names(self.names)
        return [name_map.to_model(name) for name in self.names]


Generator = Callable[[CatalogInput], CatalogRewrite]


@dataclass(frozen=True)
class Perturbation:
    id: str
    title: str
    needs_model: bool
    function: Generator

    def apply(self, catalog: CatalogInput) -> CatalogRewrite:
        if self.needs_model and catalog.paraphrase is None:
            raise ValueError(f"perturbation {self.id} needs a model (--paraphrase-model)")
        return self.function(catalog)


REGISTRY: dict[str, Perturbation] = {}


def perturbation(perturbation_id: str, *, title: str, needs_model: bool = False) -> Callable[[Generator], Generator]:
    """Register the decorated generator under `perturbation_id` (ids are unique)."""

    def register(function: Generator) -> Generator:
        if perturbation_id in REGISTRY:
            raise ValueError(f"perturbation id {perturbation_id!r} is registered twice")
        REGISTRY[perturbation_id] = Perturbation(perturbation_id, title, needs_model, function)
        return function

    return register


def registered() -> tuple[Perturbation, ...]:
    """Every perturbation, by id."""
    package = importlib.import_module(__name__)
    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    return tuple(REGISTRY[key] for key in sorted(REGISTRY))


def get(perturbation_id: str) -> Perturbation:
    """The perturbation registered as `perturbation_id`; KeyError naming the known ones."""
    known = {p.id: p for p in registered()}
    if perturbation_id not in known:
        raise KeyError(f"unknown perturbation {perturbation_id!r} (known: {', '.join(known)})")
    return known[perturbation_id]
