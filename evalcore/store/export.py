"""I/O layer: a query's rows written as CSV or Parquet bytes by DuckDB itself (fast on millions of rows, no pyarrow)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import duckdb

from evalcore.errors import StoreError
from evalcore.store.db import connect

FileFormat = Literal["csv", "parquet"]


def export_query(path: Path, sql: str, parameters: Sequence[Any], file_format: FileFormat, name: str) -> bytes:
    """The rows of `sql` on the store at `path` as a file's bytes; b"" without a store, or on a store older than the table."""
    if not path.is_file() or path.stat().st_size == 0:
        return b""
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / f"{name}.{file_format}"
        with connect(path, read_only=True) as connection:
            try:
                relation = connection.sql(sql, params=list(parameters))
                if file_format == "parquet":
                    relation.write_parquet(str(target))
                else:
                    relation.write_csv(str(target), header=True)
            except duckdb.CatalogException:  # a store older than the table
                return b""
            except duckdb.Error as exc:
                raise StoreError(f"cannot export {name} from {path}: {exc}") from exc
        return target.read_bytes()
