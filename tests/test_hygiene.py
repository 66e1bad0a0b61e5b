"""The test suite's own rules, read from its source: test modules never import one another, never sleep and never read
the clock (so no test can hang on a guess or fail on a slow machine)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEST_MODULES = sorted(TESTS.glob("test_*.py"))
# Sleeping and reading the clock belong in tests/waiting.py (events, or bounded polls with generous deadlines).
CLOCK_AND_SLEEP = {"time": {"sleep", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns"}, "asyncio": {"sleep"}}


def imported_test_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import in `tree` that names a test module (`tests.test_x`, `.test_x`, `test_x`)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [base] if base and _names_test_module(base) else [f"{base}.{alias.name}".lstrip(".") for alias in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in names if _names_test_module(name)]
    return sorted(found)


def _names_test_module(dotted: str) -> bool:
    return any(part.startswith("test_") for part in dotted.split("."))


def test_the_rule_sees_every_spelling_of_a_test_module_import():
    """The checker itself can fail: each of these spellings is caught, and a support module is not."""
    source = "\n".join(
        [
            "import tests.test_a",
            "from tests.test_b import X",
            "from .test_c import Y",
            "from . import test_d",
            "import test_e",
            "from tests import test_f",
            "from tests.builders import GOLDEN",
        ]
    )
    found = [name for _, name in imported_test_modules(ast.parse(source))]
    assert found == ["tests.test_a", "tests.test_b", "test_c", "test_d", "test_e", "tests.test_f"]


@pytest.mark.parametrize("module", TEST_MODULES, ids=lambda path: path.name)
def test_no_test_module_imports_another(module: Path):
    """Shared inputs live in tests/builders.py or tests/conftest.py, so each test module runs alone and in any order."""
    imports = imported_test_modules(ast.parse(module.read_text(), filename=str(module)))
    assert not imports, "; ".join(
        f"{module.name}:{line}: imports test module {name}; move what it shares to tests/builders.py or a conftest fixture" for line, name in imports
    )


def clock_and_sleep_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every `time.sleep`, `asyncio.sleep`, `time.perf_counter`, `time.monotonic`, `time.time` (or
    `from time import ...` of them) in `tree`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in CLOCK_AND_SLEEP.get(node.value.id, ()):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module in CLOCK_AND_SLEEP:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names if alias.name in CLOCK_AND_SLEEP[node.module]]
    return sorted(found)


def test_the_clock_rule_sees_sleeps_and_clock_reads():
    """The checker itself can fail: each of these is caught; an injected fake clock and other modules' names are not."""
    source = "\n".join(
        [
            "time.sleep(0.1)",
            "await asyncio.sleep(1)",
            "started = time.perf_counter()",
            "assert time.monotonic() - started < 3",
            "from time import sleep",
            "SimpleNamespace(sleep=waits.append)",
            "asyncio.Event().wait()",
            "datetime.time(12)",
        ]
    )
    found = [name for _, name in clock_and_sleep_uses(ast.parse(source))]
    assert found == ["time.sleep", "asyncio.sleep", "time.perf_counter", "time.monotonic", "time.sleep"]


@pytest.mark.parametrize("module", TEST_MODULES, ids=lambda path: path.name)
def test_no_test_module_sleeps_or_reads_the_clock(module: Path):
    """A sleep guesses how long something takes and a wall-clock bound fails on a busy machine: tests wait on events
    (tests/waiting.py) and assert the mechanism (the retry count, the limit named in the reason), never the time."""
    uses = clock_and_sleep_uses(ast.parse(module.read_text(), filename=str(module)))
    assert not uses, "; ".join(f"{module.name}:{line}: {name}; wait with tests/waiting.py, assert the mechanism instead of the time" for line, name in uses)
