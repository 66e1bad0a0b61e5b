"""A local emulation of a GitHub Actions runner running the composite action (action.yml) as one step of a job.

What it does as GitHub does:
- the action's steps run in order; `if:` conditions (default `success()`), and a failed step skips the rest
  unless their condition says `always()` / `failure()`;
- expressions `${{ ... }}` over `inputs`, `steps.<id>.outputs` / `.outcome`, `github`, `runner` and `env`, with
  `==`, `!=`, `&&`, `||`, `!`, parentheses, string literals, `always()`, `success()`, `failure()`, `hashFiles` not;
- `run:` steps are bash scripts in a file (`bash --noprofile --norc -eo pipefail FILE`) with the job's environment,
  the step's `env:`, and fresh GITHUB_OUTPUT / GITHUB_ENV / GITHUB_PATH files, GITHUB_STEP_SUMMARY shared;
  GITHUB_ENV and GITHUB_PATH last for the rest of the job (so an action's changes reach the user's later steps);
- workflow commands on stdout or stderr: `::error ...::`, `::warning`, `::notice` become annotations,
  `::add-mask::` masks a value in the log from then on; secrets are masked from the start;
- `uses:` steps are stood in by small Python functions (the `STAND_INS` of a test), keyed by the action's name.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
JOB_SITE = sysconfig.get_paths()["purelib"]  # the test machine's packages: what offline installs draw on
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)


@dataclass
class Annotation:
    level: str
    message: str
    title: str | None = None


@dataclass
class StepResult:
    name: str
    outcome: str  # success, failure or skipped
    outputs: dict[str, str] = field(default_factory=dict)
    returncode: int | None = None


@dataclass
class ActionResult:
    failed: bool
    steps: list[StepResult]
    outputs: dict[str, str]
    annotations: list[Annotation]
    log: str  # masked, as GitHub shows it
    raw: str  # unmasked: what the processes printed

    def step(self, name_or_id: str) -> StepResult:
        return next(step for step in self.steps if step.name == name_or_id)

    def errors(self) -> list[Annotation]:
        return [a for a in self.annotations if a.level == "error"]


StandIn = Callable[["EmulatedRunner", dict[str, str]], dict[str, str]]


class EmulatedRunner:
    """A job on a runner: a workspace, RUNNER_TEMP, the tool cache, the actions cache, artifacts and the job's env."""

    def __init__(
        self, root: Path, *, job_env: Mapping[str, str], event: Mapping[str, Any] | None = None, event_name: str = "push", action_path: Path = ROOT
    ) -> None:
        import json

        self.root = root
        self.workspace = root / "workspace"
        self.temp = root / "runner_temp"
        self.tool_cache = root / "toolcache"
        self.cache = root / "actions_cache"
        self.artifacts = root / "artifacts"
        for folder in (self.workspace, self.temp, self.tool_cache, self.cache, self.artifacts):
            folder.mkdir(parents=True, exist_ok=True)
        self.summary = root / "step_summary.md"
        self.summary.touch()
        self.event_path = root / "event.json"
        self.event_path.write_text(json.dumps(dict(event or {})), encoding="utf-8")
        self.event_name = event_name
        self.action_path = action_path
        self.env: dict[str, str] = dict(job_env)
        self.secrets: list[str] = []
        self.masks: list[str] = []
        self.run_number = 0

    # --- what a step may change for the rest of the job ---

    def add_path(self, entry: str) -> None:
        self.env["PATH"] = f"{entry}{os.pathsep}{self.env['PATH']}"

    def set_env(self, name: str, value: str) -> None:
        self.env[name] = value

    # --- the job's own steps ---

    def job_step(self, script: str) -> subprocess.CompletedProcess[str]:
        """A later `run:` step of the user's job, with the job's environment as the action left it."""
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=self.workspace,
            env=self._runner_env(),
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )

    def _runner_env(self) -> dict[str, str]:
        return {
            **self.env,
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_PATH": str(self.event_path),
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
            "GITHUB_RUN_ID": str(1000 + self.run_number),
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_ACTION_PATH": str(self.action_path),
            "RUNNER_TEMP": str(self.temp),
            "RUNNER_TOOL_CACHE": str(self.tool_cache),
            "RUNNER_OS": "Linux",
        }

    # --- the action ---

    def run_action(self, inputs: Mapping[str, str], stand_ins: Mapping[str, StandIn], *, step_env: Mapping[str, str] | None = None) -> ActionResult:
        """`uses: <this action>` with `with: inputs` and `env: step_env`, as one step of the job."""
        self.run_number += 1
        action = yaml.safe_load((self.action_path / "action.yml").read_text(encoding="utf-8"))
        unknown = set(inputs) - set(action["inputs"])
        assert not unknown, f"not inputs of the action: {unknown}"  # GitHub only warns; a test means a real input
        values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()} | dict(inputs)
        steps: dict[str, StepResult] = {}
        results: list[StepResult] = []
        annotations: list[Annotation] = []
        log: list[str] = []
        raw: list[str] = []
        failed = False
        outer_env = dict(step_env or {})
        for index, step in enumerate(action["runs"]["steps"]):
            step_id = step.get("id") or f"__step{index}"
            name = step.get("name") or step.get("id") or step.get("uses") or step_id
            context = self._context(values, steps, failed, outer_env)
            condition = str(step.get("if", "success()"))
            if not _truthy(evaluate(condition if "${{" not in condition else _strip(condition), context)):
                result = StepResult(name, "skipped")
            elif "uses" in step:
                used = step["uses"].split("@")[0]
                with_values = {key: interpolate(_as_string(value), context) for key, value in (step.get("with") or {}).items()}
                outputs = stand_ins[used](self, with_values)
                result = StepResult(name, "success", outputs)
            else:
                env = {key: interpolate(_as_string(value), context) for key, value in (step.get("env") or {}).items()}
                result, text = self._run(name, step["run"], {**outer_env, **env})
                raw.append(text)
                annotations += self._commands(text)
                log.append(self._mask(text))
            steps[step_id] = result
            results.append(result)
            failed = failed or result.outcome == "failure"
        context = self._context(values, steps, failed, outer_env)
        outputs = {name: interpolate(str(spec["value"]), context) for name, spec in (action.get("outputs") or {}).items()}
        return ActionResult(failed, results, outputs, annotations, "\n".join(log), "\n".join(raw))

    def _context(self, inputs: dict[str, str], steps: dict[str, StepResult], failed: bool, outer_env: Mapping[str, str]) -> dict[str, Any]:
        return {
            "inputs": inputs,
            "steps": {key: {"outputs": step.outputs, "outcome": step.outcome, "conclusion": step.outcome} for key, step in steps.items()},
            "github": {
                "action_path": str(self.action_path),
                "run_id": str(1000 + self.run_number),
                "run_attempt": "1",
                "event_name": self.event_name,
                "workspace": str(self.workspace),
            },
            "runner": {"temp": str(self.temp), "os": "Linux", "tool_cache": str(self.tool_cache)},
            "env": {**self.env, **outer_env},
            "__failed": failed,
        }

    def _run(self, name: str, script: str, step_env: Mapping[str, str]) -> tuple[StepResult, str]:
        files = {kind: self.temp / f"_runner_file_{kind}_{uuid.uuid4().hex}" for kind in ("output", "env", "path")}
        for path in files.values():
            path.touch()
        script_file = self.temp / f"_step_{uuid.uuid4().hex}.sh"
        script_file.write_text(script, encoding="utf-8")
        env = {**self._runner_env(), **step_env, "GITHUB_OUTPUT": str(files["output"]), "GITHUB_ENV": str(files["env"]), "GITHUB_PATH": str(files["path"])}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
            cwd=self.workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
        outputs = read_key_values(files["output"])
        for key, value in read_key_values(files["env"]).items():
            self.set_env(key, value)
        for line in files["path"].read_text(encoding="utf-8").splitlines():
            if line.strip():
                self.add_path(line.strip())
        text = f"##[group]Run {name}\n{done.stdout}"
        return StepResult(name, "success" if done.returncode == 0 else "failure", outputs, done.returncode), text

    def _commands(self, text: str) -> list[Annotation]:
        found: list[Annotation] = []
        for line in text.splitlines():
            match = re.match(r"^::(error|warning|notice|add-mask)( [^:]*)?::(.*)$", line)
            if not match:
                continue
            kind, properties, data = match.group(1), (match.group(2) or "").strip(), _unescape(match.group(3))
            if kind == "add-mask":
                self.masks.append(data)
                continue
            title = None
            for prop in properties.split(","):
                key, _, value = prop.partition("=")
                if key.strip() == "title":
                    title = _unescape(value, property_value=True)
            found.append(Annotation(kind, self._mask(data), self._mask(title) if title else None))
        return found

    def _mask(self, text: str) -> str:
        for secret in sorted({*self.secrets, *self.masks}, key=len, reverse=True):
            if secret:
                text = text.replace(secret, "***")
        return text


def read_key_values(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV as the runner reads them: `name=value` lines and `name<<DELIMITER` blocks."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, index + 1)
            values[name] = "\n".join(lines[index + 1 : end])
            index = end + 1
        elif line:
            name, value = line.split("=", 1)
            values[name] = value
            index += 1
        else:
            index += 1
    return values


def _unescape(text: str, *, property_value: bool = False) -> str:
    text = text.replace("%0D", "\r").replace("%0A", "\n")
    if property_value:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%25", "%")


def action_checkout(target: Path) -> Path:
    """The action as GitHub fetches it (the repository's files at a commit, no .git, no untracked files): here the
    tracked files of this checkout, as they are on disk (so a test sees edits not yet committed)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=120).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


# --- expressions -------------------------------------------------------------------------------------------

_NAME = r"[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*"
_TOKEN = re.compile(rf"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\)|,)|(?P<num>-?\d+(?:\.\d+)?)|(?P<name>{_NAME}))")


def _strip(expression: str) -> str:
    return expression.strip().removeprefix("${{").removesuffix("}}")


def interpolate(text: str, context: Mapping[str, Any]) -> str:
    """`${{ expr }}` inside a string replaced by the expression's value as a string."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _as_string(evaluate(m.group(1), context)), text)


def _as_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _truthy(value: Any) -> bool:
    return value not in (None, "", False, 0)


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    tokens: list[tuple[str, str]] = []
    position = 0
    expression = expression.strip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        assert match and match.end() > position, f"the emulator cannot read {expression!r} at {expression[position:]!r}"
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    parser = _Parser(tokens, context)
    value = parser.or_()
    assert parser.index == len(tokens), f"the emulator cannot read {expression!r}"
    return value


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], context: Mapping[str, Any]) -> None:
        self.tokens, self.context, self.index = tokens, context, 0

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self, op: str) -> bool:
        if self._peek() == ("op", op):
            self.index += 1
            return True
        return False

    def or_(self) -> Any:
        value = self.and_()
        while self._take("||"):
            other = self.and_()
            value = value if _truthy(value) else other
        return value

    def and_(self) -> Any:
        value = self.compare()
        while self._take("&&"):
            other = self.compare()
            value = other if _truthy(value) else value
        return value

    def compare(self) -> Any:
        value = self.unary()
        while True:
            if self._take("=="):
                value = _equal(value, self.unary())
            elif self._take("!="):
                value = not _equal(value, self.unary())
            else:
                return value

    def unary(self) -> Any:
        if self._take("!"):
            return not _truthy(self.unary())
        if self._take("("):
            value = self.or_()
            assert self._take(")")
            return value
        kind, text = self.tokens[self.index]
        self.index += 1
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if self._take("("):
            assert self._take(")"), "the emulator knows only functions without arguments"
            failed = bool(self.context["__failed"])
            return {"always": True, "success": not failed, "failure": failed, "cancelled": False}[text]
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        value: Any = self.context
        for part in text.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return value


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if left is None:
        left = ""
    if right is None:
        right = ""
    return _as_string(left).lower() == _as_string(right).lower()


# --- stand-ins for the `uses:` steps ----------------------------------------------------------------------------


@functools.cache
def _seed_venv() -> Path:
    """A venv that `python -m venv` made with `ensurepip` (once per test process): what a new venv gets copied from."""
    seed = Path(tempfile.mkdtemp(prefix="evalcore-seed-venv-")) / "venv"
    atexit.register(shutil.rmtree, seed.parent, ignore_errors=True)
    subprocess.run([BASE_PYTHON, "-m", "venv", str(seed)], check=True, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)
    return seed


def setup_python(runner: EmulatedRunner, given: dict[str, str]) -> dict[str, str]:
    """actions/setup-python: a Python in the tool cache, put first on PATH unless `update-environment: false`.

    Its venvs see this machine's packages (a .pth), and `pip` installs offline (PIP_NO_INDEX in the job's env),
    so the action's own install of its source needs no network. It refuses `pip install` into itself, which
    is what an action that puts it on PATH and then runs `python -m pip install` would do to the tool cache.
    A venv it makes gets what `ensurepip` would put in it (pip, and setuptools on 3.11) copied from one venv that
    `ensurepip` seeded for this test process (`_seed_venv`): the same files, without ~5 s of `ensurepip` per venv.
    """
    seed = _seed_venv()
    version = given.get("python-version") or "3.11"
    home = runner.tool_cache / "Python" / version / "x64"
    bin_dir = home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    python = bin_dir / "python"
    python.write_text(
        "#!/bin/sh\n"
        'case "$*" in *"pip install"*) echo "the tool cache python refuses installs into itself" >&2; exit 1;; esac\n'
        'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then\n'
        f'  {BASE_PYTHON} "$@" --without-pip || exit $?\n'
        "  for target; do :; done\n"
        '  target=$(cd "$target" && pwd) || exit 1\n'
        f'  for site in "$target"/lib/python*/site-packages; do cp -a {seed}/lib/python*/site-packages/. "$site"/ || exit 1; done\n'
        f"  for script in {seed}/bin/pip*; do\n"
        f'    sed "1s|{seed}/|$target/|" "$script" > "$target/bin/${{script##*/}}" && chmod 755 "$target/bin/${{script##*/}}" || exit 1\n'
        "  done\n"
        f'  for site in "$target"/lib/python*/site-packages; do echo {JOB_SITE} > "$site/zz_runner_site.pth"; done\n'
        "  exit 0\n"
        "fi\n"
        f'exec {BASE_PYTHON} "$@"\n',
        encoding="utf-8",
    )
    python.chmod(0o755)
    for alias in ("python3", f"python{version}"):
        if not (bin_dir / alias).exists():
            (bin_dir / alias).symlink_to("python")
    if given.get("update-environment", "true") != "false":
        runner.add_path(str(bin_dir))
        runner.set_env("pythonLocation", str(home))
    return {"python-version": version, "python-path": str(python), "cache-hit": "false"}


def cache_restore(runner: EmulatedRunner, given: dict[str, str]) -> dict[str, str]:
    """actions/cache/restore: the newest entry whose key is the key or starts with a restore key, copied to `path`."""
    target = runner.workspace / given["path"]
    prefixes = [given["key"], *(line.strip() for line in given.get("restore-keys", "").splitlines() if line.strip())]
    for prefix in prefixes:
        entries = sorted((entry for entry in runner.cache.iterdir() if entry.name.startswith(prefix)), key=lambda e: e.stat().st_mtime_ns, reverse=True)
        if entries:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(entries[0] / "file", target)
            return {"cache-hit": str(entries[0].name == given["key"]).lower(), "cache-matched-key": entries[0].name}
    return {"cache-hit": "false"}


def cache_save(runner: EmulatedRunner, given: dict[str, str]) -> dict[str, str]:
    source = runner.workspace / given["path"]
    entry = runner.cache / given["key"]
    if source.is_file() and not entry.exists():
        entry.mkdir()
        shutil.copyfile(source, entry / "file")
    return {}


def upload_artifact(runner: EmulatedRunner, given: dict[str, str]) -> dict[str, str]:
    """actions/upload-artifact: the files under each path, kept under artifacts/<run>/<name>; hidden files left out."""
    target = runner.artifacts / str(runner.run_number) / given["name"]
    for line in given["path"].splitlines():
        source = runner.workspace / line.strip()
        if line.strip() and source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*"))
        elif line.strip() and source.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / source.name)
    return {"artifact-id": "1"} if target.exists() else {}


STAND_INS: dict[str, StandIn] = {
    "actions/setup-python": setup_python,
    "actions/cache/restore": cache_restore,
    "actions/cache/save": cache_save,
    "actions/upload-artifact": upload_artifact,
}
