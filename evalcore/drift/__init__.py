"""Pure logic: drift detection over stored behaviour runs: persistent changes of a case's pass rate, and their cause (Layer 1).

`detect_changes` (evalcore.drift.detector) takes typed per-run points
(`RunPoint`: passes of attempts, with the run's fingerprints) and returns the
drops and recoveries it finds (`Change`), each with its change point, the
exact test's p-value, the night's Benjamini-Hochberg q-value, the cause and
its evidence. `docs/drift.md` explains the method for users.
"""

from __future__ import annotations

from evalcore.drift.attribution import SILENT, description_diff
from evalcore.drift.detector import detect_changes, group_histories
from evalcore.drift.types import Change, DriftSettings, Fingerprints, RunPoint

__all__ = ["SILENT", "Change", "DriftSettings", "Fingerprints", "RunPoint", "description_diff", "detect_changes", "group_histories"]
