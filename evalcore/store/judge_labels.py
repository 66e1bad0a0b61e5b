"""I/O layer: human labels of attempts (`judge_labels`), and the judge verdicts they sit beside.

A label says whether an attempt's final answer meets the rubric. It is stored with the rubric hash of the attempt's run
(its plan's `rubricSha256`: the rubric text the judge was given), so a label counts only for the rubric it was given
against. An attempt has one label: a new one replaces it. Every write is one transaction: a batch of labels is stored
whole or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from evalcore.errors import StoreError
from evalcore.records import HUMAN_LABELS, NO_RUBRIC, UNKNOWN_RUBRIC, JudgeLabel, LabelledVerdict
from evalcore.store.db import connect

AttemptKey = tuple[str, str, str, int]  # run_id, model, case_id, attempt
LABEL_COLUMNS = "run_id, model, case_id, attempt, label, labeller, note, labelled_at, rubric_hash"
# The rubric an attempt was judged against: its run plan's rubric hash (a run without a plan: unknown).
_RUBRIC_HASH = (
    f"coalesce(json_extract_string(r.plan_json, '$.golden.rubricSha256'), CASE WHEN r.plan_json IS NULL THEN '{UNKNOWN_RUBRIC}' ELSE '{NO_RUBRIC}' END)"
)


# One attempt and its `--cache` copies (which name the run that made it in `cached_from`).
_ORIGIN = "coalesce(a.cached_from, a.run_id), a.model, a.case_id, a.attempt"


def rubric_hashes(path: Path, keys: Sequence[AttemptKey]) -> dict[AttemptKey, str]:
    """The rubric hash of each of `keys` that is a stored attempt; a key that is none is absent from the answer."""
    if not keys or not path.exists():
        return {}
    wanted = sorted(set(keys))
    with connect(path, read_only=True) as connection:
        rows = connection.execute(
            f"SELECT a.run_id, a.model, a.case_id, a.attempt, {_RUBRIC_HASH} "
            "FROM attempts a JOIN behaviour_runs r ON r.run_id = a.run_id "
            "JOIN (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS model, unnest(?::VARCHAR[]) AS case_id, "
            "unnest(?::INTEGER[]) AS attempt) k "
            "ON k.run_id = a.run_id AND k.model = a.model AND k.case_id = a.case_id AND k.attempt = a.attempt",
            [[k[0] for k in wanted], [k[1] for k in wanted], [k[2] for k in wanted], [k[3] for k in wanted]],
        ).fetchall()
    return {(str(r[0]), str(r[1]), str(r[2]), int(r[3])): str(r[4]) for r in rows}


def write_labels(path: Path, labels: Sequence[JudgeLabel]) -> None:
    """Store `labels` in one transaction, each replacing the attempt's earlier label; their time is now."""
    if not labels:
        return
    now = datetime.now(UTC)
    with connect(path) as connection:
        try:
            connection.execute("BEGIN TRANSACTION")
            for label in labels:
                connection.execute(
                    "DELETE FROM judge_labels WHERE run_id = ? AND model = ? AND case_id = ? AND attempt = ?",
                    [label.run_id, label.model, label.case_id, label.attempt],
                )
                connection.execute(
                    f"INSERT INTO judge_labels ({LABEL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [label.run_id, label.model, label.case_id, label.attempt, label.label, label.labeller, label.note, now, label.rubric_hash],
                )
            connection.execute("COMMIT")
        except duckdb.Error as exc:
            connection.execute("ROLLBACK")
            raise StoreError(f"cannot store {len(labels)} label(s) in {path}: {exc}") from exc


def load_labels(path: Path, *, run_id: str | None = None, model: str | None = None, case_id: str | None = None) -> list[JudgeLabel]:
    """Every stored label (or those of one run, model and case), by run, model, case and attempt; [] without a store or
    on one no writer has migrated yet."""
    if not path.exists():
        return []
    where = "WHERE run_id = ? AND model = ? AND case_id = ? " if run_id is not None else ""
    parameters = [run_id, model, case_id] if run_id is not None else []
    with connect(path, read_only=True) as connection:
        try:
            rows = connection.execute(f"SELECT {LABEL_COLUMNS} FROM judge_labels {where}ORDER BY run_id, model, case_id, attempt", parameters).fetchall()
        except duckdb.CatalogException:
            return []
    return [
        JudgeLabel(
            run_id=str(r[0]),
            model=str(r[1]),
            case_id=str(r[2]),
            attempt=int(r[3]),
            label=r[4],
            labeller=str(r[5]),
            note=str(r[6]),
            labelled_at=r[7].isoformat() if isinstance(r[7], datetime) else str(r[7]),
            rubric_hash=str(r[8]),
        )
        for r in rows
    ]


def labelled_verdicts(path: Path) -> list[LabelledVerdict]:
    """Each labelled attempt that has a judge's verdict, the verdict beside the label, grouped under the label's rubric.

    An attempt reused by `--cache` is a copy of the one its run made (`cached_from`): the same answer and verdict. The
    copies and the original count once, with the newest of their labels."""
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        try:
            rows = connection.execute(
                "SELECT a.run_id, a.model, a.case_id, a.attempt, json_extract_string(a.judge_json, '$.judge_model'), l.rubric_hash, "
                "json_extract(a.judge_json, '$.passed')::BOOLEAN, l.label = 'pass' "
                "FROM judge_labels l JOIN attempts a "
                "ON a.run_id = l.run_id AND a.model = l.model AND a.case_id = l.case_id AND a.attempt = l.attempt "
                f"WHERE a.judge_json IS NOT NULL QUALIFY row_number() OVER (PARTITION BY {_ORIGIN} ORDER BY l.labelled_at DESC, a.run_id DESC) = 1 "
                "ORDER BY a.run_id, a.model, a.case_id, a.attempt"
            ).fetchall()
        except duckdb.CatalogException:
            return []
    return [LabelledVerdict(str(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]), bool(r[6]), bool(r[7])) for r in rows]


def judged_attempts(path: Path, *, judge_model: str, rubric_hash: str) -> list[tuple[AttemptKey, bool, bool]]:
    """Every attempt this judge gave a verdict on under this rubric, with its verdict and whether a human labelled it
    (the labelling queue's population), by run, model, case and attempt. An attempt and its `--cache` copies are one
    (the original's run when it is stored), labelled when any of them is."""
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        try:
            rows = connection.execute(
                "SELECT first(a.run_id ORDER BY a.cached_from IS NOT NULL, a.run_id), a.model, a.case_id, a.attempt, "
                "bool_or(json_extract(a.judge_json, '$.passed')::BOOLEAN), bool_or(l.label IS NOT NULL) "
                "FROM attempts a JOIN behaviour_runs r ON r.run_id = a.run_id "
                "LEFT JOIN judge_labels l ON a.run_id = l.run_id AND a.model = l.model AND a.case_id = l.case_id AND a.attempt = l.attempt "
                f"WHERE a.judge_json IS NOT NULL AND json_extract_string(a.judge_json, '$.judge_model') = ? AND {_RUBRIC_HASH} = ? "
                f"GROUP BY {_ORIGIN} ORDER BY 1, 2, 3, 4",
                [judge_model, rubric_hash],
            ).fetchall()
        except duckdb.CatalogException:
            return []
    return [((str(r[0]), str(r[1]), str(r[2]), int(r[3])), bool(r[4]), bool(r[5])) for r in rows]


def judges(path: Path) -> list[tuple[str, str]]:
    """Every (judge model, rubric hash) some stored attempt was judged under, sorted."""
    if not path.exists():
        return []
    with connect(path, read_only=True) as connection:
        rows = connection.execute(
            f"SELECT DISTINCT json_extract_string(a.judge_json, '$.judge_model'), {_RUBRIC_HASH} "
            "FROM attempts a JOIN behaviour_runs r ON r.run_id = a.run_id WHERE a.judge_json IS NOT NULL ORDER BY 1, 2"
        ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def label_attempt(path: Path, key: AttemptKey, label: str, *, labeller: str, note: str = "") -> JudgeLabel:
    """Label one stored attempt (replacing its label), against the rubric its run graded with; the label as stored.
    StoreError when there is no such attempt."""
    rubric = rubric_hashes(path, [key]).get(key)
    if rubric is None:
        run_id, model, case_id, attempt = key
        raise StoreError(f"no attempt {attempt} of {model} on case {case_id} in run {run_id} in {path}")
    if label not in HUMAN_LABELS:
        raise StoreError(f"a label is pass or fail, not {label!r}")
    stored = JudgeLabel(*key, label=label, labeller=labeller, note=note, rubric_hash=rubric)
    write_labels(path, [stored])
    return stored


def attempt_labels(path: Path, run_id: str, model: str, case_id: str) -> dict[int, JudgeLabel]:
    """The labels of one model's attempts at one case in one run, by attempt."""
    return {label.attempt: label for label in load_labels(path, run_id=run_id, model=model, case_id=case_id)}
