"""I/O layer: the files a GitHub Actions runner hands a step, through the environment it sets.

    GITHUB_STEP_SUMMARY   Markdown appended here shows on the run's summary page
    GITHUB_OUTPUT         `name=value` lines appended here become the step's outputs
    GITHUB_EVENT_PATH     the JSON of the event that started the workflow (a pull request's number, its head commit)
    GITHUB_SHA            the commit the workflow runs on
    GITHUB_ACTIONS        "true" on a runner: annotations (`::error title=...::message` lines) are written then

Outside a runner (none of them set) the summary goes to the given fallback stream, and outputs and annotations are dropped.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from evalcore.errors import ConfigError


@dataclass(frozen=True)
class Runner:
    """What the runner set for this step; every path None outside GitHub Actions."""

    summary_path: Path | None
    output_path: Path | None
    event_path: Path | None
    sha: str | None
    annotations: bool = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Runner:
        env = os.environ if environ is None else environ

        def path(name: str) -> Path | None:
            return Path(env[name]) if env.get(name) else None

        return cls(
            path("GITHUB_STEP_SUMMARY"),
            path("GITHUB_OUTPUT"),
            path("GITHUB_EVENT_PATH"),
            env.get("GITHUB_SHA") or None,
            annotations=env.get("GITHUB_ACTIONS") == "true",
        )

    def annotate(self, stream: TextIO, message: str, *, title: str | None = None, level: str = "error") -> None:
        """One annotation (`error`, `warning`, `notice`) GitHub shows on the run; nothing outside a runner."""
        if self.annotations:
            stream.write(workflow_command(level, message, title=title) + "\n")

    def write_summary(self, markdown: str, fallback: TextIO) -> None:
        """Append to the step summary (several steps may write to it), or print where no runner listens."""
        if self.summary_path is None:
            fallback.write(markdown)
            return
        with self.summary_path.open("a", encoding="utf-8") as summary:
            summary.write(markdown + "\n")

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        """Step outputs, each in the runner's multi-line form (`name<<DELIMITER`), so no value can forge another."""
        if self.output_path is None:
            return
        with self.output_path.open("a", encoding="utf-8") as output:
            for name, value in outputs.items():
                delimiter = f"EVALCORE_{uuid.uuid4().hex}"
                output.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")

    def event(self) -> dict[str, Any]:
        """The triggering event's payload ({} outside a runner); a ConfigError names a file that is not JSON."""
        if self.event_path is None:
            return {}
        try:
            payload = json.loads(self.event_path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"GITHUB_EVENT_PATH {self.event_path}: cannot read it ({exc.strerror})") from exc
        except ValueError as exc:
            raise ConfigError(f"GITHUB_EVENT_PATH {self.event_path}: not JSON ({exc})") from exc
        return payload if isinstance(payload, dict) else {}

    def revision(self) -> str | None:
        """The commit under evaluation: a pull request's head (GITHUB_SHA is the merge commit there), else GITHUB_SHA."""
        head = (self.event().get("pull_request") or {}).get("head") or {}
        sha = head.get("sha") if isinstance(head, Mapping) else None
        return sha if isinstance(sha, str) and sha else self.sha

    def pull_request(self) -> int | None:
        number = (self.event().get("pull_request") or {}).get("number")
        return number if isinstance(number, int) else None


def workflow_command(command: str, message: str, *, title: str | None = None) -> str:
    """A workflow command line: `::error title=T::message`, escaped so that untrusted text stays one command."""
    properties = f" title={_escape(title, property_value=True)}" if title else ""
    return f"::{command}{properties}::{_escape(message)}"


def _escape(text: str, *, property_value: bool = False) -> str:
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return escaped.replace(":", "%3A").replace(",", "%2C") if property_value else escaped
