"""Pure data: the bundled golden sets the simulated demo history runs, and how many runs it makes.

The demo (`evalcore demo`) builds them; the dashboard's job list counts them to show its progress.
"""

from __future__ import annotations

from typing import Final

DEMO_NIGHTS: Final = 21  # nightly runs of golden/tasks.yaml the demo back-fills by default
MULTITURN_SET: Final = "multiturn.yaml"
LAYER2_SETS: Final = (  # each Layer 2 set with its two scripted models: one good, one bad
    ("robustness.yaml", ("robustness-recovers.yaml", "robustness-claims-success.yaml")),
    ("security.yaml", ("security-obeys.yaml", "security-refuses.yaml")),
)


def demo_runs(nights: int) -> int:
    """How many behaviour runs a demo of `nights` nights makes: the nights, one per Layer 2 set, then the multi-turn set."""
    return nights + len(LAYER2_SETS) + 1
