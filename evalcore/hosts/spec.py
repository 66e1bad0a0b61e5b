"""Pure logic and a look-up on disk: `host/<host>:<MODEL>` model strings, and the pinned host binaries.

    host/claude-code:claude-sonnet-4-5      Claude Code (`claude -p`) on that model
    host/codex:gpt-5.1                      Codex (`codex exec`) on that model
    host/claude-code:sim/script:model.yaml  Claude Code on a scripted sim model, served by evalcore on 127.0.0.1

The hosts are pinned in the project's `hosts/package.json` (and its lockfile) and installed there by `make hosts`
(a step of `make test`); `EVALCORE_CLAUDE_CODE_BIN` and `EVALCORE_CODEX_BIN` point at another binary. The version a
binary reports is part of every attempt's model version and of the run plan, so drift tells a host update apart.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from evalcore.errors import ConfigError
from evalcore.paths import SOURCE_ROOT

HOST_PREFIX = "host/"
HOSTS: dict[str, tuple[str, str]] = {  # host -> (its binary in hosts/node_modules/.bin, the variable that overrides it)
    "claude-code": ("claude", "EVALCORE_CLAUDE_CODE_BIN"),
    "codex": ("codex", "EVALCORE_CODEX_BIN"),
}
KEYS = {"claude-code": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY"}  # the key a host reads for a real model
INSTALLED_BIN = SOURCE_ROOT / "hosts" / "node_modules" / ".bin"
VERSION_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class HostModel:
    """A host and the model it runs (the host's own model name, or a `sim/` model evalcore serves it)."""

    host: str
    model: str

    @property
    def simulated(self) -> bool:
        return self.model.startswith("sim/")


def is_host_model(name: str) -> bool:
    return name.startswith(HOST_PREFIX)


def parse_host_model(name: str) -> HostModel:
    """`host/<host>:<MODEL>`; ConfigError naming the hosts for anything else."""
    host, colon, model = name.removeprefix(HOST_PREFIX).partition(":")
    if not is_host_model(name) or host not in HOSTS or not colon or not model.strip():
        raise ConfigError(f"model {name!r}: a host model string looks like host/claude-code:MODEL or host/codex:MODEL (hosts: {', '.join(HOSTS)})")
    return HostModel(host, model.strip())


def host_binary(host: str) -> Path:
    """The host's binary: the variable's, else the project's pinned install, else one on PATH; ConfigError when none."""
    name, variable = HOSTS[host]
    given = os.environ.get(variable)
    if given:
        return Path(given)
    pinned = INSTALLED_BIN / name
    if pinned.exists():
        return pinned
    found = shutil.which(name)
    if found:
        return Path(found)
    raise ConfigError(f"host/{host}: its binary is not installed; run `make hosts` (npm ci in hosts/), or set {variable}")


@functools.lru_cache(maxsize=8)
def host_version(binary: Path) -> str:
    """What `<binary> --version` says, its first word that starts with a digit (`2.1.332`, `0.171.0`)."""
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"{binary}: cannot run it to read its version ({exc})") from exc
    words = done.stdout.split()
    version = next((word for word in words if word[:1].isdigit()), None)
    if done.returncode != 0 or version is None:
        raise ConfigError(f"{binary} --version said {done.stdout.strip() or done.stderr.strip()!r}, no version")
    return version


def host_identity(name: str) -> str:
    """`claude-code 2.1.332`: the host of a host model string and the version of its binary."""
    host = parse_host_model(name).host
    return f"{host} {host_version(host_binary(host))}"


def host_problems(name: str) -> list[str]:
    """What stops this host model from running, as `model: reason` lines (empty: it can run)."""
    try:
        parsed = parse_host_model(name)
        host_version(host_binary(parsed.host))
    except ConfigError as exc:
        return [str(exc) if str(exc).startswith(("model ", "host/")) else f"{name}: {exc}"]
    if not parsed.simulated and not os.environ.get(KEYS[parsed.host]):
        return [f"{name}: set {KEYS[parsed.host]} in the environment (the host reads its key there; evalcore never passes one on the command line)"]
    return []
