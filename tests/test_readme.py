"""The README's and the docs pages' commands work as written: every command and flag they show exists, every command
and option is in them, their runnable examples run (as sqlite-utils tests its documentation), and the README stays a
first read (at most 300 lines) whose links all lead somewhere."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The README and every docs page: what a user reads, the README first.
PAGES = {"README.md": README} | {f"docs/{page.name}": page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").glob("*.md"))}
DOCS = "\n".join(PAGES.values())
# How the README starts evalcore: from a checkout after `make run`, or the installed command.
PREFIXES = ((".venv/bin/python", "-m", "evalcore"), ("evalcore",))
MODULE_PREFIX = (".venv/bin/python", "-m")


def _bash_lines() -> list[str]:
    """Every command line of the README's and the docs pages' ```bash blocks, continuations joined, comments kept out."""
    lines: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", DOCS, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                lines.append(line)
    return lines


def _inline_commands() -> list[str]:
    """Inline `code` that is a command: it starts the way a command line would (a bare `evalcore` followed by a
    subcommand or an option: `evalcore version changed` is a label the drift report prints, not a command)."""
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", DOCS, flags=re.S))
    commands = {"python", "python3", ".venv/bin/python", "make", "pip"}

    def is_command(words: list[str]) -> bool:
        return words[0] in commands or (words[0] == "evalcore" and (len(words) == 1 or words[1] in _NAMES or words[1].startswith("-")))

    return [span for span in spans if is_command(span.split())]


def _commands(line: str) -> list[list[str]]:
    """The simple commands on one line: split at `&&`, `|`, `;` and a trailing `&`; placeholders' brackets dropped."""
    tokens = shlex.split(line.replace("[", "").replace("]", ""), comments=True)
    commands, current = [], []
    for token in tokens:
        if token in {"&&", "|", ";", "&"}:
            commands.append(current)
            current = []
        else:
            current.append(token.rstrip("&") if token.endswith("&") and token != "&" else token)
    commands.append(current)
    # `NAME=value command ...`: the assignments are the environment, not the command
    commands = [command[next((i for i, word in enumerate(command) if not re.match(r"^[A-Z_]+=", word)), len(command)) :] for command in commands]
    return [command for command in commands if command]


_NAMES = set(next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices)  # the commands
ALL_COMMANDS = [command for line in [*_bash_lines(), *_inline_commands()] for command in _commands(line)]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def _innermost(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The parser of a nested subcommand the words name (`labels export`), or the parser itself."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = next((word for word in words if not word.startswith("-")), None)
            if chosen in action.choices:
                return _innermost(action.choices[chosen], words[words.index(chosen) + 1 :])
    return parser


def _nested(name: str, parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A command's parser and its nested subcommands' parsers, by their full names."""
    found = {name: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                found |= _nested(f"{name} {sub}", subparser)
    return found


def _evalcore_arguments(command: list[str]) -> list[str] | None:
    for prefix in PREFIXES:
        if tuple(command[: len(prefix)]) == prefix:
            return command[len(prefix) :]
    return None


def test_the_readme_shows_commands():
    assert len(ALL_COMMANDS) > 20
    assert sum(_evalcore_arguments(command) is not None for command in ALL_COMMANDS) > 15


def test_no_command_needs_an_activated_environment():
    """A bare `python` is whatever the shell finds: without the project's .venv it has no mcp (ModuleNotFoundError)."""
    bare = [shlex.join(command) for command in ALL_COMMANDS if command[0] in {"python", "python3"}]
    assert bare == []


def test_every_evalcore_command_and_flag_in_the_readme_exists():
    subparsers, wrong = _subparsers(), []
    for command in ALL_COMMANDS:
        arguments = _evalcore_arguments(command)
        if not arguments or arguments[0].startswith("-"):
            if arguments and not set(a for a in arguments if a.startswith("--")) <= _options(build_parser()):
                wrong.append(shlex.join(command))
            continue
        name, *rest = arguments
        if name not in subparsers:
            wrong.append(f"{shlex.join(command)}: no command {name!r}")
            continue
        flags = {token.split("=")[0] for token in rest if token.startswith("--")}
        unknown = flags - _options(_innermost(subparsers[name], rest))
        if unknown:
            wrong.append(f"{shlex.join(command)}: {name} has no {', '.join(sorted(unknown))}")
    assert wrong == []


def test_every_command_and_option_is_documented():
    """A new command fails here until the README names it; a new option, until the README or a docs page mentions it."""
    missing = []
    for name, parser in _subparsers().items():
        if not re.search(rf"evalcore {re.escape(name)}\b", README):
            missing.append(name)
        for full, nested in _nested(name, parser).items():
            missing += [f"{full} {option}" for option in sorted(_options(nested) - {"-h", "--help"}) if option not in DOCS]
    assert missing == []


def test_module_commands_and_flags_exist():
    """`.venv/bin/python -m evalcore.demo_server ...` and the other modules the README starts: their flags are real."""
    modules: dict[str, set[str]] = {}
    for command in ALL_COMMANDS:
        if tuple(command[:2]) == MODULE_PREFIX and command[2] != "evalcore":
            modules.setdefault(command[2], set()).update(token.split("=")[0] for token in command[3:] if token.startswith("--"))
    assert "evalcore.demo_server" in modules
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for module, flags in modules.items():
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{module}: {done.stderr}"
        assert {flag for flag in flags if not re.search(rf"{re.escape(flag)}\b", done.stdout)} == set(), module


def test_make_targets_and_variables_exist():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for command in ALL_COMMANDS:
        if command[0] != "make":
            continue
        for word in command[1:]:
            if "=" in word:
                assert re.search(rf"^{re.escape(word.split('=')[0])} \?=", makefile, re.M), word
            else:
                assert re.search(rf"^{re.escape(word)}:", makefile, re.M), word


def _example(name: str, language: str = "bash") -> list[str]:
    block = re.search(rf"<!-- readme-example: {re.escape(name)} -->\s*```{language}\n(.*?)```", DOCS, re.S)
    assert block, f"the README and the docs pages lost their {name} example"
    if language != "bash":
        return block.group(1).splitlines()
    return [line for line in block.group(1).replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture
def checkout_dir(tmp_path):
    """A folder where the README's `.venv/bin/python` means this environment's interpreter, as in a checkout after `make run`."""
    (tmp_path / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return tmp_path


@pytest.mark.parametrize("name", ["conformance"])
def test_readme_examples_run_as_written(name, checkout_dir):
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = str(ROOT)  # the checkout's package, which a shell in the checkout finds as ./evalcore
    for line in _example(name):
        done = subprocess.run(line, shell=True, cwd=checkout_dir, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert (checkout_dir / "report.json").is_file() and (checkout_dir / "report.xml").is_file()


def test_readme_compare_example_runs_as_written_and_shows_what_it_prints(checkout_dir):
    """The worked example rewords one reference-server description: the verdict rows and the exit line the README
    shows are what the command prints, and it exits 0."""
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = str(ROOT)
    outputs = []
    for line in _example("compare"):
        done = subprocess.run(line, shell=True, cwd=checkout_dir, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    shown = re.search(r"<!-- readme-example: compare -->.*?```text\n(.*?)```", DOCS, re.S)
    assert shown, "README lost the compare example's output"
    printed = [" ".join(line.split()) for line in outputs[-1].splitlines()]
    for line in shown.group(1).splitlines():
        if line.strip() and line.strip() != "…":
            assert " ".join(line.split()) in printed, line
    assert (checkout_dir / "compare.json").is_file()


def test_the_readme_counts_the_demo_runs_as_the_demo_makes_them():
    from evalcore.golden.demo_sets import DEMO_NIGHTS, LAYER2_SETS

    counted = re.search(r"builds the simulated demo history in the background: (\d+) runs \((\d+) nights", " ".join(README.split()))
    assert counted, "the README no longer counts the demo's runs"
    assert (int(counted[1]), int(counted[2])) == (DEMO_NIGHTS + len(LAYER2_SETS) + 1, DEMO_NIGHTS)  # the nights, the Layer 2 sets, the multi-turn set


def test_the_readme_first_run_example_runs_as_written(checkout_dir):
    """The golden set the README shows, saved as it says, runs on the reference server with a simulated model."""
    (checkout_dir / "my_tasks.yaml").write_text("\n".join(_example("my_tasks.yaml", "yaml")) + "\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = str(ROOT)
    for line in _example("first-run"):
        done = subprocess.run(line, shell=True, cwd=checkout_dir, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert "case gates (hard 1/1, soft 1/1): all passed" in done.stdout, done.stdout


def test_the_sample_conformance_report_is_the_reference_servers_as_it_runs_now(checkout_dir):
    """Every check row of the sample (id, level, passes, verdict) is what a run against the reference server prints,
    and no check is missing from it: a new check fails here until the sample is regenerated."""
    shown = re.search(r"<!-- conformance-sample -->\s*```\n(.*?)```", DOCS, re.S)
    assert shown, "the docs lost the sample conformance report"
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "conformance", "--reference", "--runs", "5", "--no-db"],
        cwd=checkout_dir, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr

    def rows(text: str) -> list[tuple[str, ...]]:
        return [tuple(line.split()[:4]) for line in text.splitlines() if re.match(r"^[a-z_0-9]+\.[a-z_0-9]+ +(MUST|SHOULD|MAY) ", line)]

    assert rows(shown.group(1)) == rows(done.stdout)
    assert sum(row[0].startswith("authorization.") for row in rows(done.stdout)) > 4
    summary = [line for line in done.stdout.splitlines() if line.startswith(("CONFORMANT", "NOT CONFORMANT"))]
    assert summary and summary[0].split(" — ")[0] in shown.group(1)


def test_the_readme_is_a_first_read_and_every_link_leads_somewhere():
    assert len(README.splitlines()) <= 300
    broken = []
    for name, text in PAGES.items():
        folder = (ROOT / name).parent
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not target.startswith(("http://", "https://", "mailto:")) and not (folder / target).exists():
                broken.append(f"{name}: {target}")
    assert broken == []
