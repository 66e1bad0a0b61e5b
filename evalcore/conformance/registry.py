"""Orchestration support: the registry of conformance checks, keyed by stable id.

A check is a small async function judging one rule of the spec against a live
server. Its id (`family.name`) is stable: reports, the store and the JUnit
output all name it, so a user can always find which rule failed and where the
spec says so. Each check carries the spec sentence it enforces (`quote`); its
level (MUST, SHOULD, MAY) is the one that sentence uses, and it names the
server eras the rule is written for.

A server fails only on a sentence that binds the server. Some rules a server
is still worth being tried on bind the other side ("Requests **MUST** include
a string or integer ID" binds whoever sends the request); such a check says
`binds="sender"`, and its failures are warnings at most, whatever the
sentence's level.
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
    "prompts",
    "completion",
    "resources",
    "pagination",
    "subscriptions",
    "cancellation",
    "tools",
    "jsonrpc",
    "mrtr",
    "progress",
    "authorization",
)

Era = Literal["modern-only", "dual-era", "legacy-only"]
"""What the server speaks (spec basic/versioning.mdx "Terminology"): modern = 2026-07-28 and later
(per-request `_meta`), legacy = an `initialize` handshake (2025-11-25 and earlier), dual-era = both."""
MODERN_ERAS: tuple[Era, ...] = ("modern-only", "dual-era")
Level = Literal["MUST", "SHOULD", "MAY"]
Subject = Literal["server", "sender"]
# RFC 2119 words for each level, as the spec may write them (the schema's descriptions use lower case).
LEVEL_WORDS: dict[str, tuple[str, ...]] = {"MUST": ("must", "required"), "SHOULD": ("should", "recommended"), "MAY": ("may", "optional")}

# What one run of a check can say. A check only ever returns pass, fail, error,
# not_applicable or not_testable; its level turns a fail into a warning (SHOULD)
# or a note (MAY) when the runs are reduced.
Outcome = Literal["pass", "fail", "warn", "info", "error", "not_applicable", "not_testable"]
NOT_JUDGED: frozenset[str] = frozenset({"not_applicable", "not_testable"})


@dataclass(frozen=True)
class Verdict:
    """One run of one check: its outcome and a one-line reason."""

    outcome: Outcome
    detail: str = ""


def passed(detail: str = "") -> Verdict:
    return Verdict("pass", detail)


def failed(detail: str) -> Verdict:
    return Verdict("fail", detail)


def not_applicable(reason: str) -> Verdict:
    """The rule is not written for this server (its era, its transport); never counted either way."""
    return Verdict("not_applicable", reason)


def not_testable(reason: str) -> Verdict:
    """The rule applies but the server offers nothing to test it on (no prompts, no callable tool...)."""
    return Verdict("not_testable", f"not testable on this server: {reason}")


def verdict(ok: bool, detail_if_failed: str, detail_if_passed: str = "") -> Verdict:
    return passed(detail_if_passed) if ok else failed(detail_if_failed)


CheckFunction = Callable[["RunContext"], Awaitable[Verdict]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    spec: str  # where the rule is written, as a path in the spec repository plus anchor
    level: Level
    quote: str  # the spec sentence the check enforces, word for word (docs/conformance.md quotes it too)
    eras: tuple[Era, ...]
    http_only: bool
    scan: bool  # judges every exchange of the run, so it runs after all other checks
    function: CheckFunction
    binds: Subject = "server"  # whom the quoted sentence binds: only a "server" sentence can fail a server

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]


REGISTRY: dict[str, Check] = {}


def check(
    check_id: str,
    *,
    title: str,
    spec: str,
    quote: str,
    level: Level = "MUST",
    eras: tuple[Era, ...] = MODERN_ERAS,
    http_only: bool = False,
    scan: bool = False,
    binds: Subject = "server",
) -> Callable[[CheckFunction], CheckFunction]:
    """Register a check under `check_id`, which must be `family.name` with a known family.

    `level` must be a word the quoted sentence uses, so a check can never claim
    more than the spec says. `binds="sender"` marks a sentence whose subject is the
    request's sender, not the server: its failures are warnings at most.
    """
    family, _, name = check_id.partition(".")
    if family not in FAMILIES or not name:
        raise ValueError(f"check id {check_id!r} must be 'family.name' with family in {FAMILIES}")
    if check_id in REGISTRY:
        raise ValueError(f"check id {check_id!r} registered twice")
    if not any(word in quote.lower() for word in LEVEL_WORDS[level]):
        raise ValueError(f"check {check_id!r}: level {level} is not a word of the sentence it quotes")
    if not eras:
        raise ValueError(f"check {check_id!r} applies to no era")

    def register(function: CheckFunction) -> CheckFunction:
        REGISTRY[check_id] = Check(check_id, title, spec, level, " ".join(quote.split()), eras, http_only, scan, function, binds)
        return function

    return register


def all_checks() -> list[Check]:
    """Every registered check, in family order (the runner runs scans after the rest)."""
    import evalcore.conformance.checks  # noqa: F401  (registers the checks)

    order = {family: index for index, family in enumerate(FAMILIES)}
    return sorted(REGISTRY.values(), key=lambda c: (order[c.family], c.id))
