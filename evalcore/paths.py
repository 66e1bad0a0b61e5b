"""I/O layer (file system only): where evalcore's bundled files are, and the stable identity of a golden set.

A source checkout keeps the golden sets, the rubric and the dashboard's pages
beside the package (`golden/`, `app.py`, `pages/`); an installed package carries
the same files under `evalcore/_bundled/`. `bundled()` finds either.

A golden set is known in the store by its identity, never by how its path was
typed: `golden/tasks.yaml`, `./golden/tasks.yaml` and `/home/me/repo/golden/tasks.yaml`
are one golden set with one history. The identity is the file's path relative
to its project root (the nearest folder above it holding `.git` or
`pyproject.toml`; the bundled files count as their own project), in POSIX form;
a file outside any project is known by its resolved absolute path.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

_PACKAGE = Path(__file__).resolve().parent
_INSTALLED_ROOT = _PACKAGE / "_bundled"
SOURCE_ROOT = _PACKAGE.parent  # the folder holding the package: a source checkout, or site-packages
PROJECT_MARKERS = (".git", "pyproject.toml")


def bundled_root() -> Path:
    """The folder holding `golden/`, `app.py` and `pages/`: the installed copy, or the source checkout."""
    return _INSTALLED_ROOT if _INSTALLED_ROOT.is_dir() else SOURCE_ROOT


def bundled(relative: str) -> Path:
    """A bundled file, e.g. `bundled("golden/tasks.yaml")`."""
    return bundled_root() / relative


def project_root(path: Path) -> Path | None:
    """The nearest folder at or above `path`'s folder that holds a project marker, or None."""
    for folder in path.parents:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    return None


def golden_identity(path: Path | str) -> str:
    """The stored identity of the golden set at `path` (relative to the current directory when not absolute)."""
    resolved = Path(path).expanduser().resolve()
    for root in (bundled_root().resolve(), project_root(resolved)):
        if root is not None and resolved.is_relative_to(root):
            return PurePosixPath(resolved.relative_to(root)).as_posix()
    return resolved.as_posix()


def model_identity(name: str) -> str:
    """A model's identity in the store: its spec with a file it names known by the file's identity, as a golden set is
    (`sim/script:data/demo/x.yaml`, `./data/demo/x.yaml` and its absolute path are one model with one history)."""
    prefix, colon, path = name.partition(":")
    if prefix.startswith("host/") and colon and path.strip():  # an agent host's model: the model it runs, known as above
        return f"{prefix}:{model_identity(path.strip())}"
    if prefix == "sim/script" and colon and path.strip():
        return f"{prefix}:{golden_identity(path.strip())}"
    return name


def golden_file(identity: str) -> Path | None:
    """The file a stored identity names, looked for as typed, under the current directory's project, and in the bundle."""
    candidates = [Path(identity)]
    if not Path(identity).is_absolute():
        root = project_root(Path.cwd().resolve() / "_")
        candidates += [*([root / identity] if root else []), bundled(identity)]
    return next((candidate for candidate in candidates if candidate.is_file()), None)


def default_golden_set() -> Path:
    """`golden/tasks.yaml` in the current directory when there is one, else the bundled reference golden set."""
    local = Path("golden/tasks.yaml")
    return local if local.is_file() else bundled("golden/tasks.yaml")
