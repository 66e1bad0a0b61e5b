"""I/O layer: one shard of a behaviour run as an immutable Parquet file, written and read back (through DuckDB).

The file is a table of rows of three kinds: one `plan` row whose `plan_json`
holds the shard's identity (its format and version, its plan, its index, how
many attempts and exchanges it holds, and what the merged run records about the
server and the golden set); one `attempt` row per attempt; and one `exchange`
row per MCP exchange the shard recorded (`evalcore.mcp.recording`: the
recording a replay of the merged run serves).

An attempt row holds the whole `AttemptRecord`, errored or not, and reads back
equal to it: the attempt's stored columns (`AttemptRecord.to_row`, so its
transcript), with its tool calls whole (`raw_arguments` too), each score with
its reasons (`scores_json`; an errored attempt has none), and its Layer 2
verdicts with their reasons. An exchange row holds `RecordedExchange.to_rows`'
columns. Every value is the records' published serialisation, so no secret
reaches the file.

A file is written under a temporary name in its folder and then linked to its
final name, which fails when that name exists: a shard file, once there, is
never replaced, and a reader never sees half of one. A reader names the format
and version it reads; a file of another version is refused before its columns
are read (the columns are what versions change).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from evalcore.errors import StoreError
from evalcore.records import AttemptRecord, AttemptScore, RecordedExchange, RobustnessScore, Score, ToolCall, published
from evalcore.store.behaviour import record_from_row
from evalcore.store.exchanges import exchange_from_row

# (column, type); the attempt columns are `AttemptRecord.to_row`'s, then its scores and Layer 2 verdicts; then an exchange's.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "VARCHAR NOT NULL"),  # plan | attempt | exchange
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
    ("tool_calls_json", "VARCHAR"),  # [{id, name, arguments, raw_arguments, arguments_valid_json}, ...]
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
    ("scores_json", "VARCHAR"),  # [{scorer, value, applies, reasons, label}, ...] in scorer order
    ("robustness_outcome", "VARCHAR"),
    ("attack_attempted", "BOOLEAN"),
    ("refused", "BOOLEAN"),
    ("robustness_passed", "BOOLEAN"),
    ("robustness_reasons_json", "VARCHAR"),
    ("sequence", "INTEGER"),  # an exchange's: RecordedExchange.to_rows
    ("method", "VARCHAR"),
    ("params_json", "VARCHAR"),
    ("answer_json", "VARCHAR"),
    ("failure", "VARCHAR"),
    ("conversation", "VARCHAR"),
)
_NAMES = tuple(name for name, _ in COLUMNS)
_EXCHANGE_NAMES = ("sequence", "method", "params_json", "answer_json", "failure", "conversation")


@dataclass(frozen=True)
class ShardContents:
    """What a shard file holds: its identity (the plan row), its attempts, and the MCP exchanges it recorded, in order."""

    identity: dict[str, Any]
    records: tuple[AttemptRecord, ...]
    exchanges: tuple[RecordedExchange, ...]


def write_shard_file(path: Path, identity: Mapping[str, Any], records: Sequence[AttemptRecord], exchanges: Sequence[RecordedExchange] = ()) -> None:
    """Write the shard at `path` (a new name): its identity, its attempts and its exchanges, published; refuse to replace a file."""
    if path.exists():
        raise StoreError(f"{path} exists: a shard file is never replaced; remove it to run this shard again")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    rows = [_plan_row(identity), *(_attempt_row(record) for record in records), *(_exchange_row(row) for row in RecordedExchange.to_rows(exchanges))]
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


def read_shard_file(path: Path, *, file_format: str, version: int) -> ShardContents:
    """A shard file's identity (its `plan_json`), attempts and exchanges; a StoreError naming the file when it is missing,
    truncated, not a shard file, of another version than `version`, or holds other counts than its identity says."""
    if not path.is_file():
        raise StoreError(f"{path}: no such shard file")
    try:
        with contextlib.closing(duckdb.connect()) as connection:
            cursor = connection.execute("SELECT * FROM read_parquet(?)", [str(path)])
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    except duckdb.Error as exc:
        raise StoreError(f"{path}: not a readable shard file (truncated or corrupt?): {str(exc).splitlines()[0]}") from exc
    identity = _identity(path, names, rows, file_format, version)
    if tuple(names) != _NAMES:
        raise StoreError(f"{path}: not an evalcore shard file of version {version} (its columns are not a shard's)")
    attempts = [row for row in rows if row["kind"] == "attempt"]
    exchanges = [row for row in rows if row["kind"] == "exchange"]
    if identity.get("attempts") != len(attempts) or identity.get("exchanges") != len(exchanges):
        raise StoreError(
            f"{path}: holds {len(attempts)} attempts and {len(exchanges)} exchanges where its plan says {identity.get('attempts')} and "
            f"{identity.get('exchanges')}; the file is damaged"
        )
    try:
        records = tuple(_record(row) for row in attempts)
        recorded = tuple(sorted((exchange_from_row([row[name] for name in _EXCHANGE_NAMES]) for row in exchanges), key=lambda e: e.sequence))
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{path}: an attempt or exchange row cannot be read ({exc}); the file is damaged") from exc
    return ShardContents(identity, records, recorded)


def _identity(path: Path, names: Sequence[str], rows: Sequence[Mapping[str, Any]], file_format: str, version: int) -> dict[str, Any]:
    """The plan row's identity, of this format and version: read before the columns, which another version lays out otherwise."""
    plans = [row for row in rows if row.get("kind") == "plan"] if {"kind", "plan_json"} <= set(names) else None
    if plans is None or len(plans) != 1:
        found = "no plan column" if plans is None else f"{len(plans)} plan rows, one expected"
        raise StoreError(f"{path}: not an evalcore shard file ({found})")
    try:
        identity = json.loads(plans[0]["plan_json"])
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{path}: its plan is not JSON ({exc})") from exc
    if not isinstance(identity, dict) or identity.get("format") != file_format:
        raise StoreError(f"{path}: not an evalcore shard file (its plan row is not of format {file_format!r})")
    if identity.get("version") != version:
        plan = identity.get("plan")
        writer = plan.get("evalcore_version") if isinstance(plan, dict) else None
        raise StoreError(
            f"{path}: a shard file of version {identity.get('version')!r} (written by evalcore {writer or 'unknown'}), and this evalcore reads "
            f"version {version}; run every shard of the plan again with this evalcore, then merge"
        )
    return identity


def _plan_row(identity: Mapping[str, Any]) -> list[Any]:
    values: dict[str, Any] = {"kind": "plan", "plan_json": json.dumps(published(dict(identity)))}
    return [values.get(name) for name in _NAMES]


def _attempt_row(record: AttemptRecord) -> list[Any]:
    robustness = record.robustness
    whole = {  # what the store's columns leave out: a call's raw arguments, each reason of a score and of Layer 2
        "tool_calls_json": json.dumps(
            [
                {"id": c.id, "name": c.name, "arguments": dict(c.arguments), "raw_arguments": c.raw_arguments, "arguments_valid_json": c.arguments_valid_json}
                for c in record.tool_calls
            ]
        ),
        "scores_json": json.dumps(
            [{"scorer": s.scorer, "value": s.value, "applies": s.applies, "reasons": list(s.reasons), "label": s.label} for s in record.score.scores]
        ),
        "robustness_reasons_json": json.dumps(list(robustness.reasons)) if robustness is not None else None,
    }
    values: dict[str, Any] = {
        **record.to_row(),  # published: the transcript and every text without a secret evalcore knows
        **published(whole),
        "kind": "attempt",
        "robustness_outcome": robustness.outcome if robustness is not None else None,
        "attack_attempted": robustness.attack_attempted if robustness is not None else None,
        "refused": robustness.refused if robustness is not None else None,
        "robustness_passed": robustness.passed if robustness is not None else None,
    }
    return [values.get(name) for name in _NAMES]


def _exchange_row(stored: Sequence[Any]) -> list[Any]:
    """An exchange's row: `RecordedExchange.to_rows`' columns (published), the attempt columns empty."""
    values: dict[str, Any] = {"kind": "exchange", **dict(zip(_EXCHANGE_NAMES, stored, strict=True))}
    return [values.get(name) for name in _NAMES]


def _record(row: Mapping[str, Any]) -> AttemptRecord:
    """The attempt as it was written: every field of the record, an errored attempt's (no scores) as any other's."""
    score = AttemptScore(
        tuple(Score(s["scorer"], s["value"], bool(s["applies"]), tuple(s["reasons"]), s["label"]) for s in json.loads(row["scores_json"])),
        bool(row["passed"]),
        tuple(json.loads(row["reasons_json"])),
    )
    robustness = None
    if row["fault"] is not None:
        reasons = tuple(json.loads(row["robustness_reasons_json"]))
        robustness = RobustnessScore(row["fault"], row["robustness_outcome"], row["attack_attempted"], row["refused"], bool(row["robustness_passed"]), reasons)
    calls = tuple(ToolCall(c["id"], c["name"], c["arguments"], c["raw_arguments"], bool(c["arguments_valid_json"])) for c in json.loads(row["tool_calls_json"]))
    return record_from_row(row, score=score, calls=calls, robustness=robustness)


def _sync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
