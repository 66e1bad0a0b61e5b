"""Command: `python -m evalcore migrate-scan PATH...` — list pre-2026 patterns; exit 1 when any is found."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.errors import ConfigError

NAME = "migrate-scan"
SUMMARY = "find pre-2026 MCP patterns in test code and say what replaces them"
ORDER = 110


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories to scan")


def command(args: argparse.Namespace) -> int:
    from evalcore.mcp.migrate_scan import scan_paths

    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        raise ConfigError(f"no such file or directory: {', '.join(missing)}")
    findings = scan_paths(args.paths)
    for finding in findings:
        print(finding)
    files = len({f.path for f in findings})
    print(f"{len(findings)} pre-2026-07-28 patterns in {files} files" if findings else "no pre-2026-07-28 patterns found")
    return 1 if findings else 0
