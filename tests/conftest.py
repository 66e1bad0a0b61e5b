"""Shared fixtures: real servers on 127.0.0.1, started once per session."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

# litellm reaches the network on import unless told otherwise; set before anything can import it.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


@pytest.fixture(scope="session")
def reference_url():
    from evalcore.mcp.reference import running_reference_server

    with running_reference_server() as url:
        yield url


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory):
    """A store holding the demo history (8 simulated nights: a description change and a model update), built once
    per test session: the first worker to ask builds it under a lock, and each worker gets a copy of its own."""
    from evalcore.behaviour.demo_history import DemoConfig, run_demo

    # Under xdist the workers' base folders share a parent that is this session's; without xdist, the base is.
    session = tmp_path_factory.getbasetemp()
    shared = (session.parent if os.environ.get("PYTEST_XDIST_WORKER") else session) / "demo-history"
    shared.mkdir(exist_ok=True)
    built = shared / "evals.duckdb"
    with (shared / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / ".built").exists():
            result = run_demo(DemoConfig(db_path=built, days=8, runs=5, today=date(2026, 11, 30)))
            assert len(result.run_ids) == 8 and result.attempts == 8 * 3 * 28 * 5
            assert len(result.layer2_run_ids) == 2 and len(result.multiturn_run_ids) == 1
            assert all(name.startswith("sim/") for name in result.models)
            (shared / ".built").touch()
    db = tmp_path_factory.mktemp("demo") / "evals.duckdb"
    shutil.copyfile(built, db)
    if built.with_name(built.name + ".wal").exists():  # what DuckDB had not checkpointed yet
        shutil.copyfile(built.with_name(built.name + ".wal"), db.with_name(db.name + ".wal"))
    return db, DemoConfig(db_path=db, days=8, runs=5, today=date(2026, 11, 30))


ECHO_AUTH_TOKEN = "mcp-PLANTED/token+value=77"  # '/', '+' and '=' make its encodings differ from it


@pytest.fixture(scope="session")
def echo_auth_server():
    """(url, token): an official-SDK server that refuses any request without `Authorization: Bearer <token>` and
    whose `whoami` tool echoes the Authorization header it got."""
    from evalcore.errors import TargetError
    from evalcore.mcp.local_server import LocalServerProcess

    process = LocalServerProcess("tests.sdk_servers.echo_auth_app", ["--expect", f"Bearer {ECHO_AUTH_TOKEN}"], label="echo-auth server", error=TargetError)
    try:
        yield process.url(timeout=300), ECHO_AUTH_TOKEN
    finally:
        process.stop()


TS_SDK_DIR = Path(__file__).parent / "ts_sdk_server"


@pytest.fixture(scope="session")
def node() -> str:
    """node, with the TypeScript SDK v2 server's modules installed by `npm ci` from its pinned lockfile (once per
    lockfile; a file lock keeps two test workers from installing at once)."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        pytest.skip("node/npm not installed: the TypeScript SDK v2 server cannot run here")
    with (TS_SDK_DIR / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = TS_SDK_DIR / "node_modules" / ".evalcore-lock"
        wanted = (TS_SDK_DIR / "package-lock.json").read_bytes()
        if not stamp.exists() or stamp.read_bytes() != wanted:
            result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=TS_SDK_DIR, capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                pytest.fail(f"npm ci in {TS_SDK_DIR} failed: {result.stderr.strip()[-500:]}")
            stamp.write_bytes(wanted)
    return node


HOSTS_DIR = Path(__file__).parent.parent / "hosts"


@pytest.fixture(scope="session")
def host_binaries() -> Path:
    """hosts/node_modules/.bin with the pinned Claude Code and Codex, installed by `npm ci` from hosts/package-lock.json
    when `make hosts` has not (once per lockfile; a file lock keeps two test workers from installing at once)."""
    if shutil.which("npm") is None:
        pytest.skip("npm not installed: the agent hosts cannot be installed here")
    with (HOSTS_DIR / ".npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = HOSTS_DIR / "node_modules" / ".installed"
        if not stamp.exists() or stamp.stat().st_mtime < (HOSTS_DIR / "package-lock.json").stat().st_mtime:
            result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HOSTS_DIR, capture_output=True, text=True, timeout=900)
            if result.returncode != 0:
                pytest.fail(f"npm ci in {HOSTS_DIR} failed: {result.stderr.strip()[-500:]}")
            stamp.touch()
    return HOSTS_DIR / "node_modules" / ".bin"
