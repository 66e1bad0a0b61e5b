"""Command: `evalcore review FILE` — go through a golden file's draft cases: accept, edit, reject or skip each."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

from evalcore.errors import ConfigError

NAME = "review"
SUMMARY = "review a golden file's draft cases one by one: accept, edit in $EDITOR, reject or skip"
ORDER = 15
CHOICES = "[a]ccept, [e]dit, [r]eject, [s]kip, [q]uit"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="the golden file (e.g. one `evalcore draft` wrote); it is rewritten in place")
    parser.add_argument("--by", default="human", help="who accepts, written into review: {by: ...} (default human)")


def command(args: argparse.Namespace) -> int:
    from evalcore.golden.loader import load_golden_set
    from evalcore.golden.review_edit import accept_case, block_text, remove_case, replace_case, save_if_it_loads

    path: Path = args.file
    golden = load_golden_set(path)
    pending = [case.id for case in golden.cases if case.is_draft]
    if not pending:
        print(f"{path}: no draft case to review")
        return 0
    counts = {"accepted": 0, "edited": 0, "rejected": 0, "skipped": 0}
    for number, case_id in enumerate(pending, start=1):
        golden = load_golden_set(path)  # the file as the last decision left it (its lines moved)
        case = golden.case(case_id)
        text = path.read_text(encoding="utf-8")
        print(f"\n[{number}/{len(pending)}] {case.id}")
        print(block_text(text, golden.cases, case).rstrip("\n"))
        answer = _ask()
        if answer == "q":
            break
        if answer == "s":
            counts["skipped"] += 1
            continue
        if answer == "r":
            new_text = remove_case(text, golden.cases, case)
            counts["rejected"] += 1
        elif answer == "a":
            new_text = accept_case(text, golden.cases, case, by=args.by, at=date.today().isoformat())
            counts["accepted"] += 1
        else:
            edited = _edit(block_text(text, golden.cases, case))
            new_text = replace_case(text, golden.cases, case, edited)
            counts["edited"] += 1
        if problem := save_if_it_loads(path, new_text):
            print(f"not saved, the file would not load: {problem}", file=sys.stderr)
            counts["edited" if answer == "e" else "accepted" if answer == "a" else "rejected"] -= 1
    print("\n" + ", ".join(f"{count} {what}" for what, count in counts.items()) + f" ({path})")
    return 0


def _ask() -> str:
    while True:
        print(f"{CHOICES}? ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return "q"  # the end of the input: stop, keeping what was decided
        choice = line.strip().lower()[:1]
        if choice in ("a", "e", "r", "s", "q"):
            return choice


def _edit(block: str) -> str:
    """The block as the user left it in $EDITOR (VISUAL, then EDITOR, then vi)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, encoding="utf-8") as handle:
        handle.write(block)
        name = handle.name
    try:
        done = subprocess.run([*shlex.split(editor), name], check=False)
        if done.returncode != 0:
            raise ConfigError(f"the editor {editor!r} exited with {done.returncode}; nothing was changed")
        return Path(name).read_text(encoding="utf-8")
    finally:
        Path(name).unlink(missing_ok=True)
