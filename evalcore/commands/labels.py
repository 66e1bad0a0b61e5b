"""Command: `python -m evalcore labels import FILE.csv | export` — human labels of attempts, to measure the judge against.

A label says whether an attempt's final answer meets the rubric (`pass`) or not (`fail`). An import file is CSV with a
header: `run_id,model,case_id,attempt,label` and optionally `labeller`, `note` (and `rubric_hash`, `labelled_at`, as an
export writes them: a `rubric_hash` must be the one the attempt was judged against). Every line is checked first; with
any bad line nothing is stored and each is named as `FILE:LINE: reason` (exit 2).
"""

from __future__ import annotations

import argparse
import csv
import getpass
import io
import sys
from collections.abc import Mapping
from pathlib import Path

from evalcore.commands.options import Parser, db_option
from evalcore.records import HUMAN_LABELS, JudgeLabel

NAME = "labels"
SUMMARY = "import or export human labels of attempts (does the answer meet the rubric?), to measure the judge against"
ORDER = 56

REQUIRED_COLUMNS = ("run_id", "model", "case_id", "attempt", "label")
OPTIONAL_COLUMNS = ("labeller", "note", "rubric_hash", "labelled_at")
EXPORT_COLUMNS = (*REQUIRED_COLUMNS, "labeller", "note", "rubric_hash", "labelled_at")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, parser_class=Parser)
    importing = actions.add_parser(
        "import", help="store the labels of a CSV file (all or none)", description="Store the labels of a CSV file: every line, or none when any is bad."
    )
    importing.add_argument("file", type=Path, metavar="FILE.csv", help=f"CSV with a header: {','.join(REQUIRED_COLUMNS)}[,labeller,note]")
    importing.add_argument("--labeller", default=None, help="who labelled, for lines without a labeller (default: your user name)")
    db_option(importing, "DuckDB store")
    exporting = actions.add_parser("export", help="write every stored label as CSV", description="Write every stored label as CSV (importable again).")
    exporting.add_argument("--out", type=Path, default=None, metavar="FILE.csv", help="write here instead of standard output")
    db_option(exporting, "DuckDB store")


def command(args: argparse.Namespace) -> int:
    from evalcore.store.db import upgrade

    upgrade(args.db)
    if args.action == "import":
        return _import(args)
    return _export(args)


def _import(args: argparse.Namespace) -> int:
    from evalcore.errors import ConfigError
    from evalcore.store.judge_labels import write_labels

    path: Path = args.file
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    labels, problems = parse_labels(text, str(path), args.db, args.labeller or _user())
    if problems:
        raise ConfigError("\n".join([*problems, f"{path}: nothing stored ({len(problems)} bad line(s)); fix them and import again"]))
    write_labels(args.db, labels)
    print(f"stored {len(labels)} label(s) from {path} in {args.db}")
    return 0


def parse_labels(text: str, source: str, db: Path, labeller: str) -> tuple[list[JudgeLabel], list[str]]:
    """The labels of a CSV text, and a `source:line: reason` for each bad line (the labels count only when there is none)."""
    from evalcore.store.judge_labels import rubric_hashes

    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    unknown = [name for name in header if name not in (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)]
    if not header:
        return [], [f"{source}:1: empty file; the first line names the columns: {','.join(REQUIRED_COLUMNS)}[,labeller,note]"]
    if missing or unknown:
        parts = ([f"missing column(s) {', '.join(missing)}"] if missing else []) + ([f"unknown column(s) {', '.join(unknown)}"] if unknown else [])
        return [], [f"{source}:1: {'; '.join(parts)}; the columns are {','.join(REQUIRED_COLUMNS)}[,labeller,note]"]
    reader.fieldnames = header
    parsed: list[tuple[int, Mapping[str, str]]] = []
    problems: list[tuple[int, str]] = []
    seen: dict[tuple[str, str, str, int], int] = {}
    keys: list[tuple[str, str, str, int]] = []
    for row in reader:
        line = reader.line_num
        values = {name: (row.get(name) or "").strip() for name in header}
        if None in row:
            problems.append((line, f"more values than columns ({len(header)})"))
            continue
        empty = [name for name in REQUIRED_COLUMNS if not values[name]]
        if empty:
            problems.append((line, f"empty {', '.join(empty)}"))
            continue
        if values["label"] not in HUMAN_LABELS:
            problems.append((line, f"label {values['label']!r} is not pass or fail (does the final answer meet the rubric?)"))
            continue
        try:
            attempt = int(values["attempt"])
        except ValueError:
            attempt = 0
        if attempt < 1:
            problems.append((line, f"attempt {values['attempt']!r} is not an attempt number (1, 2, ...)"))
            continue
        key = (values["run_id"], values["model"], values["case_id"], attempt)
        if key in seen:
            problems.append((line, f"the same attempt as line {seen[key]}; an attempt takes one label"))
            continue
        seen[key] = line
        keys.append(key)
        parsed.append((line, values))
    hashes = rubric_hashes(db, keys)
    labels: list[JudgeLabel] = []
    for (line, fields), key in zip(parsed, keys, strict=True):
        rubric = hashes.get(key)
        if rubric is None:
            problems.append((line, f"no attempt {key[3]} of {key[1]} on case {key[2]} in run {key[0]} in {db} (`evalcore runs` lists the runs)"))
            continue
        given = fields.get("rubric_hash") or ""
        if given and given != rubric:
            problems.append((line, f"labelled against rubric {given[:12]}, but the attempt was judged against rubric {rubric[:12]}"))
            continue
        labels.append(
            JudgeLabel(*key, label=fields["label"], labeller=fields.get("labeller") or labeller, note=fields.get("note") or "", rubric_hash=rubric)  # type: ignore[arg-type]
        )
    return labels, [f"{source}:{line}: {reason}" for line, reason in sorted(problems, key=lambda problem: problem[0])]


def _export(args: argparse.Namespace) -> int:
    from evalcore.store.judge_labels import load_labels

    labels = load_labels(args.db)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(EXPORT_COLUMNS)
    for label in labels:
        row = label.to_json()
        writer.writerow([row[name] for name in EXPORT_COLUMNS])
    if args.out is not None:
        args.out.write_text(out.getvalue(), encoding="utf-8")
        print(f"wrote {len(labels)} label(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(out.getvalue())
    return 0


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
