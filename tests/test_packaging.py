"""`pip install .` into a bare virtual environment gives a working `evalcore` command (slow: marked `install`).

The environment has no system site packages and nothing but what the package
declares; pip takes the versions requirements.txt pins (as constraints), from
the package registry or the local wheel folder pip is configured with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import evalcore

ROOT = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT_S = 900


def _clean_environment() -> dict[str, str]:
    """No PYTHONPATH or active environment of the test run: the new environment stands on its own."""
    return {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv with `pip install <checkout>` and nothing else; yields its bin folder."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    env = _clean_environment()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=INSTALL_TIMEOUT_S)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, "--constraint", str(ROOT / "requirements.txt"), str(ROOT)], env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-4000:]
    return venv / "bin"


@pytest.mark.install
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 300)
def test_installed_command_checks_the_reference_server(installed, tmp_path):
    """From a folder that is not the checkout: the command, its version, the bundled server, the bundled golden set."""
    env = _clean_environment()
    version = subprocess.run([str(installed / "evalcore"), "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.strip() == f"evalcore {evalcore.__version__}"

    report = tmp_path / "report.json"
    done = subprocess.run(
        [str(installed / "evalcore"), "conformance", "--reference", "--runs", "1", "--json", str(report)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CONFORMANT" in done.stdout and json.loads(report.read_text())["passed"] is True
    assert (tmp_path / "data" / "evals.duckdb").is_file()  # recorded where the user stands, not inside the package

    run = subprocess.run(
        [str(installed / "python"), "-m", "evalcore", "run", "--models", "sim/lexical", "--runs", "1", "--db", str(tmp_path / "b.duckdb")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 1 and "run gate: NO BASELINE" in run.stdout, run.stdout + run.stderr  # sim/lexical misses case gates
    assert "golden/tasks.yaml" in run.stdout and "28/28 attempts" in run.stderr  # the bundled golden set, all of it


@pytest.mark.install
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 120)
def test_cli_install_stays_light_and_names_the_dashboard_extra(installed, tmp_path):
    env = _clean_environment()
    site = subprocess.run(
        [str(installed / "python"), "-c", "import importlib.util as u; print([m for m in ('streamlit', 'plotly', 'pandas') if u.find_spec(m)])"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert site.stdout.strip() == "[]"
    done = subprocess.run(
        [str(installed / "evalcore"), "dashboard", "--db", str(tmp_path / "e.duckdb")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "pip install 'evalcore[dashboard]'" in done.stderr


def test_wheel_carries_the_bundled_files(tmp_path):
    """The golden sets, scripts, rubric and the dashboard's pages travel inside the package."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    (wheel,) = tmp_path.glob("evalcore-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for bundled in ("golden/tasks.yaml", "golden/rubric.md", "golden/robustness.yaml", "golden/security.yaml", "app.py", "pages/4_Run.py"):
        assert f"evalcore/_bundled/{bundled}" in names
    assert "evalcore/demo_server/__main__.py" in names and "evalcore/conformance/checks/headers.py" in names
    assert not any(name.startswith(("tests/", "bench/")) for name in names)
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "evalcore = evalcore.cli:console_main" in zipfile.ZipFile(wheel).read(entry_points).decode()
