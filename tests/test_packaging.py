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
import sysconfig
import tarfile
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
    same = subprocess.run([str(installed / "mcp-evalcore"), "--version"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert same.returncode == 0 and same.stdout.strip() == version.stdout.strip()  # the distribution's name is a second way in

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
    assert done.returncode == 2 and "pip install 'mcp-evalcore[dashboard]'" in done.stderr


BUNDLED = (
    "golden/tasks.yaml",
    "golden/rubric.md",
    "golden/scripts/security-refuses.yaml",
    "golden/robustness.yaml",
    "golden/security.yaml",
    "app.py",
    "pages/4_Run.py",
)
REFERENCE_SERVER = ("demo_server/__main__.py", "demo_server/app.py", "demo_server/tools.py")


def _build(hook: str, source: Path, out: Path) -> Path:
    """One PEP 517 hook of the pinned backend (hatchling, requirements.txt), run in `source`: no network, no isolated env."""
    code = f"import sys, hatchling.build as backend; print(backend.{hook}(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, str(out)], cwd=source, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-4000:]
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def distributions(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel): the sdist built from the checkout, the wheel built from the unpacked sdist, as `python -m build` does."""
    out = tmp_path_factory.mktemp("dist")
    sdist = _build("build_sdist", ROOT, out)
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (source,) = unpacked.iterdir()
    return sdist, _build("build_wheel", source, out)


def test_distributions_carry_our_name(distributions):
    """The index's `evalcore` is someone else's: ours is mcp-evalcore, in both files' names and metadata."""
    sdist, wheel = distributions
    assert sdist.name == f"mcp_evalcore-{evalcore.__version__}.tar.gz"
    assert wheel.name == f"mcp_evalcore-{evalcore.__version__}-py3-none-any.whl"
    metadata = zipfile.ZipFile(wheel).read(f"mcp_evalcore-{evalcore.__version__}.dist-info/METADATA").decode()
    assert "\nName: mcp-evalcore\n" in metadata and "Provides-Extra: dashboard" in metadata


def test_sdist_carries_the_sources_and_bundled_files(distributions):
    sdist, _ = distributions
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for bundled in BUNDLED:
        assert bundled in names
    for module in REFERENCE_SERVER:
        assert f"evalcore/{module}" in names
    assert {"pyproject.toml", "README.md", "requirements.txt"} <= names
    assert not any(name.startswith(("tests/", "bench/", "data/", ".venv")) for name in names)


def test_wheel_carries_the_bundled_files(distributions):
    """The reference server, the golden sets with scripts and rubric, and the dashboard's pages travel inside the package."""
    _, wheel = distributions
    names = set(zipfile.ZipFile(wheel).namelist())
    for bundled in BUNDLED:
        assert f"evalcore/_bundled/{bundled}" in names
    for module in REFERENCE_SERVER:
        assert f"evalcore/{module}" in names
    assert "evalcore/conformance/checks/headers.py" in names
    assert "evalcore/compare/catalog/tools.yaml" in names  # `evalcore perturb`'s distractors
    assert "evalcore/mcp/protocol/wire_shapes.schema.json" in names  # what the wire-shape check validates against
    assert "evalcore/conformance/requirements/2026-07-28.yaml" in names  # `conformance --requirements 2026-07-28`
    assert not any(name.startswith(("tests/", "bench/")) for name in names)
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    commands = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "evalcore = evalcore.cli:console_main" in commands
    assert "mcp-evalcore = evalcore.cli:console_main_mcp_evalcore" in commands


@pytest.mark.install
@pytest.mark.timeout(INSTALL_TIMEOUT_S + 300)
def test_make_installs_the_evalcore_command_editable(tmp_path):
    """`make run` and `make test` both build $(VENV)/.runtime: after it, $(VENV)/bin/evalcore runs this checkout's code from any folder.

    The new venv sees the test run's installed packages (a .pth file), so the recipe installs only what they lack.
    """
    venv = tmp_path / "venv"
    env = _clean_environment()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=INSTALL_TIMEOUT_S)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "_test_run_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        ["make", "-C", str(ROOT), f"VENV={venv}", f"PYTHON={sys.executable}", f"{venv}/.runtime"],
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    version = subprocess.run([str(venv / "bin" / "evalcore"), "--version"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.strip() == f"evalcore {evalcore.__version__}", version.stderr
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import evalcore; print(evalcore.__file__)"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert Path(where.stdout.strip()).parent == ROOT / "evalcore", where.stderr  # editable: the checkout's code, not a copy
    tools = subprocess.run(
        [str(venv / "bin" / "evalcore"), "conformance", "--reference", "--runs", "1", "--no-db", "--only", "tools"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert tools.returncode == 0 and "CONFORMANT" in tools.stdout, tools.stdout + tools.stderr
