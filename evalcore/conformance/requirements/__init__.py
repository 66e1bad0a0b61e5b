"""The official conformance suite's requirement sets, mapped onto our checks (one data file per revision).

`2026-07-28.yaml` beside this module names every server scenario of the official suite's frozen requirement
file for that revision (scored and not scored), says how our checks cover it (`same`, `differently`, `beyond-spec`, `missing`),
which checks decide it, and why. `load(revision)` reads it into typed records; `evalcore.conformance.requirement_view`
turns a run's check verdicts into a verdict per official scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from evalcore.errors import ConfigError

Coverage = Literal["same", "differently", "beyond-spec", "missing"]
COVERAGES: tuple[Coverage, ...] = ("same", "differently", "beyond-spec", "missing")
UNCHECKED: tuple[Coverage, ...] = ("beyond-spec", "missing")  # the coverages that name no check
HERE = Path(__file__).resolve().parent
REVISIONS: tuple[str, ...] = tuple(sorted(path.stem for path in HERE.glob("*.yaml")))


@dataclass(frozen=True)
class Requirement:
    """One official scenario: its id, whether the official suite scores it, and how our checks cover it."""

    id: str
    leg: str
    scored: bool
    reason: str  # why the official file does not score it ("extension", "pending", ...); "" when scored
    coverage: Coverage
    checks: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class RequirementSet:
    revision: str
    package: str
    version: str
    file: str
    requirements: tuple[Requirement, ...]

    @property
    def source(self) -> str:
        return f"{self.package} {self.version}, {self.file}"


def load(revision: str) -> RequirementSet:
    """The requirement set of `revision`; ConfigError when we have no map for it."""
    if revision not in REVISIONS:
        raise ConfigError(f"--requirements {revision}: no requirement set for that revision (known: {', '.join(REVISIONS)})")
    import yaml

    document = yaml.safe_load((HERE / f"{revision}.yaml").read_text(encoding="utf-8"))
    source = document["source"]
    return RequirementSet(
        revision=str(document["revision"]),
        package=str(source["package"]),
        version=str(source["version"]),
        file=str(source["file"]),
        requirements=tuple(_requirement(entry) for entry in document["scenarios"]),
    )


def _requirement(entry: dict[str, object]) -> Requirement:
    coverage = str(entry["coverage"])
    checks = entry.get("checks") or []
    if coverage not in COVERAGES or not isinstance(checks, list):
        raise ValueError(f"requirement {entry.get('id')!r}: coverage {coverage!r} or checks {checks!r} malformed")
    if (coverage in UNCHECKED) != (not checks):
        raise ValueError(f"requirement {entry['id']!r}: a 'missing' or 'beyond-spec' scenario names no check, any other names at least one")
    return Requirement(
        id=str(entry["id"]),
        leg=str(entry.get("leg", "server")),
        scored=bool(entry["scored"]),
        reason=str(entry.get("reason") or ""),
        coverage=cast(Coverage, coverage),
        checks=tuple(str(check) for check in checks),
        note=" ".join(str(entry.get("note") or "").split()),
    )
