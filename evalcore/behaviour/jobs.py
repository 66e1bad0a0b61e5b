"""I/O layer: ad-hoc behaviour runs launched in the background (for the dashboard's Run page).

A job is the same `python -m evalcore run` a user would type, started as its
own process session so it outlives the page that launched it. Its state lives
in files next to the store (`<db dir>/jobs/<run id>.json` and `.log`) and in
the store itself, so a page reload finds it again. What it runs is the user's, as on the command
line: a configured server, a URL or a stdio command, a golden file and any
litellm model strings (keys only from the environment); each is checked before
the run starts. A finished job is reaped at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalcore.errors import ConfigError, EvalcoreError
from evalcore.golden.demo_sets import DEMO_NIGHTS, demo_runs
from evalcore.models.preflight import model_problems
from evalcore.models.types import ModelSpec
from evalcore.paths import SOURCE_ROOT, bundled
from evalcore.processes import LIFELINE_FD_VARIABLE, OWNER_VARIABLE, process_exists
from evalcore.redaction import clip
from evalcore.store.behaviour import load_run, new_run_id

# Model strings offered when their provider's key is in the environment (never the key itself).
KEYED_MODELS = {
    "OPENAI_API_KEY": ("openai/gpt-4o-mini", "openai/gpt-4o"),
    "ANTHROPIC_API_KEY": ("anthropic/claude-3-5-haiku-20241022",),
    "GEMINI_API_KEY": ("gemini/gemini-1.5-flash",),
}
SIM_MODELS = ("sim/lexical",)
ACTIVE = ("starting", "running")  # a job's statuses while its process works


@dataclass(frozen=True)
class Job:
    run_id: str
    pid: int
    started_at: str
    golden: str
    server: str
    models: tuple[str, ...]
    runs: int
    db: str
    log: str
    kind: str = "run"  # "run": one behaviour run; "demo": the simulated demo history
    nights: int = 0  # demo only: how many nightly runs it builds


def offered_models(environ: dict[str, str] | None = None) -> list[str]:
    """sim models, plus real models whose provider key is present (the key is never read here)."""
    environ = dict(os.environ) if environ is None else environ
    models = list(SIM_MODELS)
    for variable, names in KEYED_MODELS.items():
        if environ.get(variable):
            models.extend(names)
    return models


def golden_sets(folder: Path | None = None) -> list[Path]:
    """The golden sets a page may launch, the `run` command's default (tasks.yaml) first, then by name."""
    folder = bundled("golden") if folder is None else folder
    return sorted(folder.glob("*.yaml"), key=lambda path: (path.name != "tasks.yaml", path.name))


def jobs_dir(db: Path) -> Path:
    return db.parent / "jobs"


def launch(*, db: Path, golden: Path, models: list[str], runs: int, server: str | None = None, url: str | None = None, stdio: str | None = None) -> Job:
    """Start a behaviour run in the background: the golden file, models and server the user gave, checked first.

    The server is a configured one (`server`), a Streamable HTTP URL, or a stdio command (the user's own, as on the
    command line: the dashboard listens on 127.0.0.1 only). A model is any litellm model string; its provider's key
    must be in the dashboard's environment (never typed into the page), which is checked before the run starts.
    """
    target = _target_arguments(server, url, stdio)
    golden = _golden_file(golden)
    if not models:
        raise ConfigError("choose at least one model")
    problems = [problem for model in models for problem in model_problems(ModelSpec(model))]
    if problems:
        raise ConfigError("; ".join(problems))
    if not 1 <= runs <= 20:
        raise ConfigError("runs per case must be between 1 and 20")
    server_text = target[1] if target[0] != "--stdio" else f"stdio: {target[1]}"
    db = db.resolve()  # the job runs in the package folder, whatever the page's working directory
    with _launch_lock(db):  # two clicks, or two browser tabs, at the same moment: one run
        same = [
            job for job in list_jobs(db)
            if job.kind == "run" and _alive(job.pid) and (Path(job.golden).resolve(), job.server, sorted(job.models), job.runs)
            == (golden.resolve(), server_text, sorted(models), runs)
        ]  # fmt: skip
        if same:
            raise ConfigError(f"an identical run is already running ({same[0].run_id}); wait for it or cancel it first")
        run_id = new_run_id()
        command = [
            "run", "--run-id", run_id, "--golden", str(golden), *target, "--models", ",".join(models), "--runs", str(runs), "--db", str(db),
        ]  # fmt: skip
        return _spawn(Job(run_id, 0, "", str(golden), server_text, tuple(models), runs, str(db), ""), command)


def _target_arguments(server: str | None, url: str | None, stdio: str | None) -> list[str]:
    """The `run` command's server arguments for exactly one of a configured server, a URL and a stdio command."""
    given = [(flag, value.strip()) for flag, value in (("--server", server), ("--url", url), ("--stdio", stdio)) if value and value.strip()]
    if len(given) != 1:
        raise ConfigError("give exactly one server: the bundled reference server, a URL, or a stdio command")
    flag, value = given[0]
    from evalcore.mcp.target import CONFIGURED_SERVERS  # here: the transports it imports are not needed to show a job

    if flag == "--server" and value not in CONFIGURED_SERVERS:
        raise ConfigError(f"unknown server {value!r}; configured: {', '.join(CONFIGURED_SERVERS)}")
    if flag == "--url" and not value.startswith(("http://", "https://")):
        raise ConfigError(f"the server URL must start with http:// or https://, got {value[:80]!r}")
    if flag == "--stdio":
        try:
            if not shlex.split(value):
                raise ValueError("empty")
        except ValueError as exc:
            raise ConfigError(f"the stdio command cannot be read as a command line ({exc}): {value[:80]!r}") from exc
    return [flag, value]


def _golden_file(golden: Path) -> Path:
    """`golden`, once it reads as a golden set (the loader's own one-line error otherwise)."""
    from evalcore.golden.loader import load_golden_set

    if not golden.is_file():
        raise ConfigError(f"{golden} is not a golden set: no such file")
    try:
        load_golden_set(golden)
    except EvalcoreError as exc:
        raise ConfigError(f"{golden} is not a golden set: {exc}") from exc
    return golden


@contextlib.contextmanager
def _launch_lock(db: Path) -> Iterator[None]:
    """An exclusive lock on the store's jobs folder while a launch checks for a twin and starts."""
    folder = jobs_dir(db)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".launch.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def launch_demo(db: Path, *, nights: int = DEMO_NIGHTS) -> Job:
    """Build the simulated demo history (`python -m evalcore demo`) into `db` in the background; it refuses a store holding runs."""
    from evalcore.behaviour.history import count_behaviour_runs

    db = db.resolve()
    if any(job.kind == "demo" and _alive(job.pid) for job in list_jobs(db)):
        raise ConfigError(f"the demo history for {db} is already being built")
    if count_behaviour_runs(db):
        raise ConfigError(f"{db} already holds behaviour runs; the demo only fills an empty store")
    job_id = f"demo-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    golden = bundled("golden/tasks.yaml")
    models = ("sim/script (assistant-pinned)", "sim/script (assistant-latest)", "sim/lexical")
    job = Job(job_id, 0, "", str(golden), "reference", models, 5, str(db), "", kind="demo", nights=nights)
    return _spawn(job, ["demo", "--db", str(db), "--golden", str(golden), "--days", str(nights)])


def _spawn(job: Job, arguments: list[str]) -> Job:
    """Start `python -m evalcore <arguments>` as its own process session and record the job next to the store."""
    folder = jobs_dir(Path(job.db))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{job.run_id}.log"
    started_at = datetime.now(UTC).isoformat()  # before the process exists, so every run it stores starts after it
    with log.open("w", encoding="utf-8") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "evalcore", *arguments],
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            cwd=SOURCE_ROOT,  # the folder holding this evalcore package, so `-m evalcore` is this one
            start_new_session=True,  # survives the page's process and reloads
            # Not a child tied to the page (no lifeline): a job outlives it on purpose. What the job starts dies with the job.
            env={name: value for name, value in os.environ.items() if name not in (LIFELINE_FD_VARIABLE, OWNER_VARIABLE)},
        )
    # Reaped the moment it exits, whether or not a page is watching: a finished job never lingers as <defunct>.
    threading.Thread(target=process.wait, name=f"reap-{job.run_id}", daemon=True).start()
    job = replace(job, pid=process.pid, started_at=started_at, log=str(log))
    (folder / f"{job.run_id}.json").write_text(json.dumps(asdict(job)), encoding="utf-8")
    return job


def list_jobs(db: Path) -> list[Job]:
    folder = jobs_dir(db)
    if not folder.exists():
        return []
    jobs = []
    for path in folder.glob("*.json"):
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        data["models"] = tuple(data["models"])
        jobs.append(Job(**data))
    return sorted(jobs, key=lambda job: (job.started_at, job.run_id), reverse=True)  # newest first, the demo among them by its time


def job_status(job: Job) -> dict[str, Any]:
    """running / complete / failed / cancelled / crashed, attempts done of total, and why it failed.

    For a demo job, `done` and `total` count its runs (the nights, then the Layer 2 sets) instead of attempts.
    """
    alive = _alive(job.pid)
    db = Path(job.db)
    if job.kind == "demo":
        return _demo_status(job, alive)
    try:
        run = load_run(db, job.run_id)
    except Exception:  # the run was never created (e.g. a golden-set error): the log says why
        run = None
    if run is None:
        status = "starting" if alive else "failed"
        return {"status": status, "done": 0, "total": None, "reason": None if alive else _last_line(Path(job.log))}
    from evalcore.store.behaviour import attempt_count

    done = attempt_count(db, job.run_id)
    total = _total_attempts(job)
    status = run["effective_status"]
    if status == "crashed" and not alive and _last_line(Path(job.log)):
        status = "failed"
    reason = run.get("error") or (_last_line(Path(job.log)) if status == "failed" else None)
    report = json.loads(run["report_json"]) if status == "complete" and run.get("report_json") else None
    gate = (report or {}).get("gate") or {}
    if gate:
        reason = f"run gate {str(gate.get('status', '')).upper().replace('_', ' ')}: {gate.get('reason', '')}"
    baseline = bool(run.get("passed")) or run.get("baseline_accepted_at") is not None
    return {"status": status, "done": done, "total": total, "reason": reason, "passed": run.get("passed"), "baseline": baseline, "scores": _scores(report)}


def _scores(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each model's pass rate and passed attempts, as the finished run's report states them (empty before it finishes)."""
    if not report:
        return []
    scores = []
    for model in report.get("models", []):
        cases = model.get("cases", [])
        scores.append(
            {
                "model": model["model"],
                "simulated": bool(model.get("simulated")),
                "pass_rate": (model.get("metrics") or {}).get("pass_rate"),
                "passes": sum(int(case.get("passes", 0)) for case in cases),
                "attempts": sum(int(case.get("runs", 0)) for case in cases),
            }
        )
    return scores


def _demo_status(job: Job, alive: bool) -> dict[str, Any]:
    from evalcore.behaviour.history import count_behaviour_runs

    total = demo_runs(job.nights)
    try:
        done = count_behaviour_runs(Path(job.db), pid=job.pid, since=datetime.fromisoformat(job.started_at))  # its own runs only
    except Exception:  # the demo is writing: count again on the next poll
        done = 0
    if alive:
        return {"status": "running", "done": done, "total": total, "reason": None}
    complete = done >= total
    reason = None if complete else _last_line(Path(job.log))
    return {"status": "complete" if complete else "failed", "done": done, "total": total, "reason": reason}


def _total_attempts(job: Job) -> int | None:
    from evalcore.golden.loader import load_golden_set

    try:
        return len(load_golden_set(Path(job.golden)).cases) * len(job.models) * job.runs
    except Exception:  # an unreadable golden set: progress shows without a total
        return None


def cancel(job: Job) -> None:
    """Interrupt the run; it stores what it finished and marks itself cancelled."""
    if _alive(job.pid):
        os.killpg(job.pid, signal.SIGINT)


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)  # reap our own finished child
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    return process_exists(pid)


def _last_line(log: Path) -> str | None:
    try:
        lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return None
    return clip(lines[-1], 300) if lines else None
