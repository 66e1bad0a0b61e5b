"""Pure logic (plus a file walker): find pre-2026 MCP patterns in test code and name their 2026-07-28 replacement."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from evalcore.redaction import clip

SKIP_DIRS = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", "dist", "build"}
MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Rule:
    pattern_name: str
    regex: re.Pattern[str]
    replacement: str


RULES: tuple[Rule, ...] = (
    Rule(
        "initialize",
        re.compile(r"""["']initialize["']|\.initialize\s*\("""),
        "no handshake in 2026-07-28: send _meta (protocolVersion, clientCapabilities) on every request, or call server/discover",
    ),
    Rule("notifications/initialized", re.compile(r"notifications/initialized"), "remove it: there is no handshake to complete"),
    Rule(
        "Mcp-Session-Id",
        re.compile(r"mcp-session-id", re.IGNORECASE),
        "drop the session header: requests are stateless, servers must not mint or echo session ids",
    ),
    Rule("-32001", re.compile(r"(?<![\w.])-32001(?!\d)"), "-32020 (HeaderMismatch)"),
    Rule("-32002", re.compile(r"(?<![\w.])-32002(?!\d)"), "-32602 (invalid params) for a missing resource; -32002 is retired"),
    Rule("-32003", re.compile(r"(?<![\w.])-32003(?!\d)"), "-32021 (MissingRequiredClientCapability, data.requiredCapabilities)"),
    Rule("-32004", re.compile(r"(?<![\w.])-32004(?!\d)"), "-32022 (UnsupportedProtocolVersion, data.supported)"),
    Rule("-32042", re.compile(r"(?<![\w.])-32042(?!\d)"), "retired: URL elicitation is an input request of an input_required result"),
    Rule("ping", re.compile(r"""["']ping["']"""), "removed: a liveness probe is any cheap request, e.g. server/discover"),
    Rule("logging/setLevel", re.compile(r"logging/setLevel"), "removed: send io.modelcontextprotocol/logLevel in _meta (deprecated) per request"),
    Rule("resources/subscribe", re.compile(r"resources/(?:un)?subscribe"), "subscriptions/listen (a long-lived SSE response stream)"),
    Rule("Last-Event-ID", re.compile(r"last-event-id", re.IGNORECASE), "no resumability: re-issue a request whose stream broke with a NEW request id"),
    Rule("notifications/roots/list_changed", re.compile(r"notifications/roots/list_changed"), "removed: roots travel as input requests (MRTR)"),
)


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    pattern_name: str
    replacement: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.pattern_name} -> {self.replacement}\n    {clip(self.text.strip(), 120)}"


def scan_text(text: str, path: Path) -> list[Finding]:
    """Each rule that matches on each line of `text`."""
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        for rule in RULES:
            if rule.regex.search(line):
                findings.append(Finding(path, number, rule.pattern_name, rule.replacement, line))
    return findings


def iter_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_file():
            yield path
        elif path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and not SKIP_DIRS.intersection(child.relative_to(path).parts[:-1]):
                    yield child


def scan_paths(paths: Iterable[Path]) -> list[Finding]:
    """Scan every text file under `paths` (binary and very large files are skipped)."""
    findings: list[Finding] = []
    for file in iter_files(paths):
        try:
            if file.stat().st_size > MAX_FILE_BYTES:
                continue
            raw = file.read_bytes()
        except OSError:
            continue
        if b"\0" in raw[:4096]:
            continue
        findings.extend(scan_text(raw.decode("utf-8", "replace"), file))
    return findings
