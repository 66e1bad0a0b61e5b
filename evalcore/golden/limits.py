"""Pure data: the size limits a golden-set file must keep, so a hostile file is refused before anything runs.

A golden file is input a user may not have written (a shared repo, a pull
request), and YAML can describe far more than it spells out: nine aliases of
nine aliases stand for a billion nodes. The loader checks each limit while it
reads, and refuses the file at the line where the limit is passed. Override a
limit with `evalcore run --golden-limit NAME=VALUE` (repeatable) or by passing
`GoldenLimits(...)` to `load_golden_set`. Documented in docs/golden.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Final

from evalcore.errors import ConfigError


@dataclass(frozen=True)
class GoldenLimits:
    file_bytes: int = 16 * 1024 * 1024  # the file's size, checked before it is read
    nodes: int = 200_000  # YAML nodes (scalars, mappings, lists) as written
    alias_nodes: int = 10_000  # nodes repeated through `*alias`, in total: an alias stands for every node it names
    depth: int = 32  # nesting of mappings and lists, aliases expanded
    prompt_chars: int = 100_000  # longest text a model or judge is sent: prompt, system, rubric, injected text
    cases: int = 2_000  # cases in one file

    def with_overrides(self, assignments: Iterable[str]) -> GoldenLimits:
        """These limits with `NAME=VALUE` assignments applied (the `--golden-limit` flag); a bad one is a `ConfigError`."""
        changes: dict[str, int] = {}
        for assignment in assignments:
            name, equals, value = assignment.partition("=")
            name = name.strip()
            if not equals or name not in LIMIT_NAMES:
                raise ConfigError(f"--golden-limit takes NAME=VALUE with NAME one of {', '.join(LIMIT_NAMES)}; got {assignment!r}")
            try:
                number = int(value.strip().replace("_", ""))
            except ValueError:
                number = 0
            if number < 1:
                raise ConfigError(f"--golden-limit {name} must be a whole number of at least 1, got {value.strip()!r}")
            changes[name] = number
        return replace(self, **changes)


LIMIT_NAMES: Final = tuple(field.name for field in fields(GoldenLimits))
DEFAULT_LIMITS: Final = GoldenLimits()


def raise_hint(name: str) -> str:
    """How a user raises one limit, for the end of a refusal message."""
    return f"raise it with --golden-limit {name}=N if the file is trusted"
