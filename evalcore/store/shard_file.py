"""I/O layer: one shard of a behaviour run as an immutable Parquet file, written and read back (through DuckDB).

The file is a table of rows of two kinds: one `plan` row whose `plan_json` holds
the shard's identity (its plan, its index, how many attempts it holds, and what
the merged run records about the server and the golden set), then one `attempt`
row per attempt: the attempt's stored columns (`AttemptRecord.to_row`, so its
transcript), its scores (`scores_json`) and its Layer 2 verdicts. Every value is
the records' published serialisation, so no secret reaches the file.

A file is written under a temporary name in its folder and then linked to its
final name, which fails when that name exists: a shard file, once there, is
never replaced, and a reader never sees half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from evalcore.errors import StoreError
from evalcore.records import AttemptRecord, Score, published
from evalcore.store.behaviour import record_from_row

# (column, type); the attempt columns are `AttemptRecord.to_row`'s, then its scores and Layer 2 verdicts.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "VARCHAR NOT NULL"),  # plan | attempt
    ("plan_json", "VARCHAR"),
    ("model", "VARCHAR"),
    ("case_id", "VARCHAR"),
    ("attempt", "INTEGER"),
    ("case_hash", "VARCHAR"),
    ("case_kind", "VARCHAR"),
    ("simulated", "BOOLEAN"),
    ("model_version", "VARCHAR"),
    ("passed", "BOOLEAN"),
    ("reasons_json", "VARCHAR"),
    ("tool_calls_json", "VARCHAR"),
    ("final_text", "VARCHAR"),
    ("stop_reason", "VARCHAR"),
    ("error", "VARCHAR"),
    ("latency_ms", "DOUBLE"),
    ("input_tokens", "INTEGER"),
    ("output_tokens", "INTEGER"),
    ("cost_usd", "DOUBLE"),
    ("retries", "INTEGER"),
    ("transcript_json", "VARCHAR"),
    ("judge_json", "VARCHAR"),
    ("cached_from", "VARCHAR"),
    ("fault", "VARCHAR"),
    ("error_kind", "VARCHAR"),
    ("scores_json", "VARCHAR"),  # [[scorer, value, applies, reason, label], ...] in scorer order
    ("robustness_outcome", "VARCHAR"),
    ("attack_attempted", "BOOLEAN"),
    ("refused", "BOOLEAN"),
    ("robustness_passed", "BOOLEAN"),
)
_NAMES = tuple(name for name, _ in COLUMNS)


def write_shard_file(path: Path, identity: Mapping[str, Any], records: Sequence[AttemptRecord]) -> None:
    """Write the shard at `path` (a new name): its identity and its attempts, published; refuse to replace a file."""
    if path.exists():
        raise StoreError(f"{path} exists: a shard file is never replaced; remove it to run this shard again")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    rows = [_plan_row(identity), *(_attempt_row(record) for record in records)]
    try:
        with contextlib.closing(duckdb.connect()) as connection:
            connection.execute(f"CREATE TABLE shard ({', '.join(f'{name} {kind}' for name, kind in COLUMNS)})")
            placeholders = "(" + ", ".join("?" for _ in COLUMNS) + ")"
            for start in range(0, len(rows), 100):
                chunk = rows[start : start + 100]
                connection.execute(f"INSERT INTO shard VALUES {', '.join(placeholders for _ in chunk)}", [value for row in chunk for value in row])
            connection.table("shard").write_parquet(str(temporary))
        _sync(temporary)
        os.link(temporary, path)  # fails if the name exists: never a replaced or half-written shard
    except FileExistsError as exc:
        raise StoreError(f"{path} exists: a shard file is never replaced; remove it to run this shard again") from exc
    except (OSError, duckdb.Error) as exc:
        raise StoreError(f"cannot write the shard file {path}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def read_shard_file(path: Path) -> tuple[dict[str, Any], list[AttemptRecord]]:
    """A shard file's identity (its `plan_json`) and its attempts as records; a StoreError naming the file when it is
    missing, truncated, not a shard file, or holds another count of attempts than its identity says."""
    if not path.is_file():
        raise StoreError(f"{path}: no such shard file")
    try:
        with contextlib.closing(duckdb.connect()) as connection:
            cursor = connection.execute("SELECT * FROM read_parquet(?)", [str(path)])
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    except duckdb.Error as exc:
        raise StoreError(f"{path}: not a readable shard file (truncated or corrupt?): {str(exc).splitlines()[0]}") from exc
    if tuple(names) != _NAMES:
        raise StoreError(f"{path}: not an evalcore shard file (its columns are not a shard's)")
    plans = [row for row in rows if row["kind"] == "plan"]
    if len(plans) != 1:
        raise StoreError(f"{path}: not an evalcore shard file ({len(plans)} plan rows, one expected)")
    try:
        identity = json.loads(plans[0]["plan_json"])
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{path}: its plan is not JSON ({exc})") from exc
    attempts = [row for row in rows if row["kind"] == "attempt"]
    if not isinstance(identity, dict) or identity.get("attempts") != len(attempts):
        declared = identity.get("attempts") if isinstance(identity, dict) else None
        raise StoreError(f"{path}: holds {len(attempts)} attempts where its plan says {declared}; the file is damaged")
    try:
        records = [_record(row) for row in attempts]
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{path}: an attempt row cannot be read ({exc})") from exc
    return identity, records


def _plan_row(identity: Mapping[str, Any]) -> list[Any]:
    values: dict[str, Any] = {"kind": "plan", "plan_json": json.dumps(published(dict(identity)))}
    return [values.get(name) for name in _NAMES]


def _attempt_row(record: AttemptRecord) -> list[Any]:
    robustness = record.robustness
    values: dict[str, Any] = {
        **record.to_row(),  # published: the transcript and every text without a secret evalcore knows
        "kind": "attempt",
        "scores_json": json.dumps(record.score_rows()),
        "robustness_outcome": robustness.outcome if robustness is not None else None,
        "attack_attempted": robustness.attack_attempted if robustness is not None else None,
        "refused": robustness.refused if robustness is not None else None,
        "robustness_passed": robustness.passed if robustness is not None else None,
    }
    return [values.get(name) for name in _NAMES]


def _record(row: dict[str, Any]) -> AttemptRecord:
    """The attempt as the store reads one back (`record_from_row`), its scores from `scores_json`."""
    scores = tuple(
        Score(scorer, value, bool(applies), (reason,) if reason else (), label) for scorer, value, applies, reason, label in json.loads(row["scores_json"])
    )
    return record_from_row({**row, "scores": scores})


def _sync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
