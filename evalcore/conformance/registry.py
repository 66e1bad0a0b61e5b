"""Orchestration support: the registry of conformance checks, keyed by stable id.

A check is a small async function judging one rule of the spec against a live
server. Its id (`family.name`) is stable: reports, the store and the JUnit
output all name it, so a user can always find which rule failed and where the
spec says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from evalcore.conformance.context import RunContext

FAMILIES: tuple[str, ...] = (
    "discover",
    "list_order",
    "cache_fields",
    "result_type",
    "schema_2020_12",
    "error_codes",
    "headers",
    "removed_methods",
    "http_semantics",
    "meta_validation",
)

Outcome = Literal["pass", "fail", "skip", "error"]


@dataclass(frozen=True)
class Verdict:
    """One run of one check: its outcome and a one-line reason."""

    outcome: Outcome
    detail: str = ""


def passed(detail: str = "") -> Verdict:
    return Verdict("pass", detail)


def failed(detail: str) -> Verdict:
    return Verdict("fail", detail)


def skipped(detail: str) -> Verdict:
    """The rule does not apply to this server or transport; never counted as a pass."""
    return Verdict("skip", detail)


def verdict(ok: bool, detail_if_failed: str, detail_if_passed: str = "") -> Verdict:
    return passed(detail_if_passed) if ok else failed(detail_if_failed)


CheckFunction = Callable[["RunContext"], Awaitable[Verdict]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    spec: str  # where the rule is written, as a path in the spec repository plus anchor
    level: Literal["MUST", "SHOULD"]
    http_only: bool
    scan: bool  # judges every exchange of the run, so it runs after all other checks
    function: CheckFunction

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]


REGISTRY: dict[str, Check] = {}


def check(
    check_id: str,
    *,
    title: str,
    spec: str,
    level: Literal["MUST", "SHOULD"] = "MUST",
    http_only: bool = False,
    scan: bool = False,
) -> Callable[[CheckFunction], CheckFunction]:
    """Register a check under `check_id`, which must be `family.name` with a known family."""
    family, _, name = check_id.partition(".")
    if family not in FAMILIES or not name:
        raise ValueError(f"check id {check_id!r} must be 'family.name' with family in {FAMILIES}")
    if check_id in REGISTRY:
        raise ValueError(f"check id {check_id!r} registered twice")

    def register(function: CheckFunction) -> CheckFunction:
        REGISTRY[check_id] = Check(check_id, title, spec, level, http_only, scan, function)
        return function

    return register


def all_checks() -> list[Check]:
    """Every registered check, in family order (the runner runs scans after the rest)."""
    import evalcore.conformance.checks  # noqa: F401  (registers the checks)

    order = {family: index for index, family in enumerate(FAMILIES)}
    return sorted(REGISTRY.values(), key=lambda c: (order[c.family], c.id))
