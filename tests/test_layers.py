"""The architecture as a test: a module imports only from its own floor or the floors below it, and the store is a sink
that knows nothing but the shared records (docs/architecture.md draws the floors)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "evalcore"

# Floor of each package or module, bottom to top; a module imports only from floors at or below its own.
FLOORS = {
    "evalcore": 1,  # the shared vocabulary at the root: records, taxonomy, run kinds, errors, paths, redaction, processes, tls
    "evalcore.store": 2,
    "evalcore.mcp": 2,
    "evalcore.telemetry": 3,
    "evalcore.demo_server": 3,
    "evalcore.golden": 3,
    "evalcore.models": 3,
    "evalcore.hosts": 3,
    "evalcore.users": 3,
    "evalcore.scoring": 4,
    "evalcore.drift": 4,
    "evalcore.conformance": 5,
    "evalcore.behaviour": 6,
    "evalcore.compare": 6,
    "evalcore.commands": 7,
    "evalcore.ci": 7,
    "evalcore.cli": 7,
    "evalcore.__main__": 7,
    "evalcore.dashboard": 8,
}
SHARED = {
    "evalcore",
    "evalcore.records",
    "evalcore.taxonomy",
    "evalcore.run_kinds",
    "evalcore.errors",
    "evalcore.paths",
    "evalcore.redaction",
    "evalcore.processes",
    "evalcore.tls",
}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _floor(module: str) -> int:
    best = max((name for name in FLOORS if module == name or module.startswith(name + ".")), key=len)
    return FLOORS[best]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalcore") and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names if (ROOT.parent / node.module.replace(".", "/") / alias.name).is_dir())
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("evalcore"))
    return found


def test_no_module_imports_a_floor_above_its_own():
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module(path)
        own = 1 if module in SHARED or module == "evalcore" else _floor(module)
        upward += [f"{module} (floor {own}) imports {name} (floor {_floor(name)})" for name in sorted(_imports(path)) if _floor(name) > own]
    assert upward == []


def test_the_store_imports_only_the_shared_records_and_its_own_modules():
    foreign = []
    for path in sorted((ROOT / "store").rglob("*.py")):
        foreign += [f"{_module(path)} imports {name}" for name in sorted(_imports(path)) if not (name in SHARED or name.startswith("evalcore.store"))]
    assert foreign == []


def test_the_root_keeps_only_what_every_layer_shares():
    modules = {path.stem for path in ROOT.glob("*.py")}
    assert modules <= {"__init__", "__main__", "cli", "records", "taxonomy", "run_kinds", "errors", "paths", "redaction", "processes", "tls"}, sorted(modules)
