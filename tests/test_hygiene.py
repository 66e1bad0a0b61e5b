"""The test suite's own rules, read from its source: test modules never import one another."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEST_MODULES = sorted(TESTS.glob("test_*.py"))


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
    return found


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
