"""Hostile golden files: `evalcore run` refuses each before anything runs, with file:line and the reason, in bounded memory.

Each file goes to the real CLI in a child process. Its peak memory is the
child's own high-water resident set (`VmHWM`, which starts afresh at exec;
`ru_maxrss` would include the pytest process the child was forked from),
under an address-space cap that stops a regression from taking the machine
with it. Nothing here is timed.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalcore.errors import ConfigError
from evalcore.golden.limits import DEFAULT_LIMITS, LIMIT_NAMES, GoldenLimits
from evalcore.golden.loader import GoldenSetProblems, load_golden_set

ROOT = Path(__file__).resolve().parent.parent
MEMORY_BOUND_KB = 100 * 1024
ADDRESS_SPACE_CAP = 1024**3  # a safety net only: the assertion is on the resident peak
CPU_CAP_S = 300  # likewise: a runaway child is stopped, not waited for


@dataclass(frozen=True)
class Refusal:
    returncode: int
    stderr: str
    peak_kb: int


# `python -m evalcore ARGS`, then the process's own peak resident set (kB) written to the file named first.
CLI_WITH_PEAK = """
import sys
peak_file = sys.argv.pop(1)
try:
    from evalcore.cli import main
    code = main(sys.argv[1:])
finally:
    with open("/proc/self/status") as status, open(peak_file, "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
sys.exit(code)
"""


def run_cli(golden: Path, db: Path, *extra: str) -> Refusal:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_CAP_S, CPU_CAP_S))

    peak = golden.with_name(f"{golden.name}.peak")
    arguments = ["run", "--golden", str(golden), "--db", str(db), "--models", "sim/lexical", "--runs", "1", *extra]
    done = subprocess.run([sys.executable, "-c", CLI_WITH_PEAK, str(peak), *arguments], cwd=ROOT, capture_output=True, text=True, preexec_fn=cap)
    return Refusal(done.returncode, done.stderr, int(peak.read_text()))


def alias_bomb() -> str:
    """Nine lists of nine aliases of the list before: ten lines that stand for 9**10 strings."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\ncases:\n  - id: bomb\n    prompt: hi\n    expect_tool: get_weather\n    expect_args: {city: *a9}\n"


# Each: the file's bytes, the line the refusal names, and words the reason must contain.
HOSTILE: dict[str, tuple[bytes, int, tuple[str, ...]]] = {
    "alias bomb": (alias_bomb().encode(), 5, ("aliases repeat more than 10000 nodes", "alias_nodes")),
    "5 MB prompt": (b'cases:\n  - id: big\n    prompt: "' + b"a" * 5_000_000 + b'"\n    expect_tool: get_weather\n', 3, ("'prompt'", "prompt_chars")),
    "tab in indentation": (b"cases:\n  - id: t\n\tprompt: hi\n    expect_tool: get_weather\n", 3, ("tab",)),
    "tab deep in a mapping": (b"cases:\n  - id: t\n    expect_args:\n      \tcity: x\n    prompt: hi\n", 4, ("tab",)),
    "non-UTF-8 byte": (b"cases:\n  - id: t\n    prompt: caf\xe9\n    expect_tool: get_weather\n", 3, ("not UTF-8", "0xe9")),
    "deep nesting": (
        b"cases:\n  - id: d\n    prompt: p\n    expect_tool: get_weather\n    expect_args: {x: " + b"[" * 40 + b"]" * 40 + b"}\n",
        5,
        ("nested deeper than 32",),
    ),
    "recursive alias": (b"cases:\n  - id: r\n    prompt: p\n    expect_tool: get_weather\n    expect_args: &loop {x: *loop}\n", 5, ("recursive",)),
    "too many cases": (b"cases:\n" + b"".join(b"  - {id: c%d, prompt: p, expect_tool: null}\n" % i for i in range(2_001)), 2_002, ("more than 2000 cases",)),
    "python tag": (b"cases:\n  - id: t\n    prompt: !!python/object:os.system echo\n    expect_tool: null\n", 3, ("could not determine a constructor",)),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_golden_file_is_refused_before_anything_runs(tmp_path: Path, name: str) -> None:
    content, line, words = HOSTILE[name]
    golden = tmp_path / "hostile.yaml"
    golden.write_bytes(content)
    db = tmp_path / "store" / "evals.duckdb"
    refusal = run_cli(golden, db)
    assert refusal.returncode == 2, refusal.stderr
    (message,) = refusal.stderr.splitlines()  # one line, no traceback
    assert message.startswith(f"error: {golden}:{line}: "), message
    assert all(word in message for word in words), message
    assert refusal.peak_kb < MEMORY_BOUND_KB, f"peak {refusal.peak_kb} KB"
    assert not db.exists() and not db.parent.exists()  # no store file, so no run row


def test_a_limit_can_be_raised_from_the_command_line(tmp_path: Path) -> None:
    golden = tmp_path / "long.yaml"
    golden.write_text(f"cases:\n  - id: long\n    prompt: {'word ' * 30_000}\n    expect_tool: get_weather\n", encoding="utf-8")
    db = tmp_path / "evals.duckdb"
    refused = run_cli(golden, db)
    assert refused.returncode == 2 and "prompt_chars" in refused.stderr
    # Raised past the prompt, the file passes validation and fails on the next limit lowered on purpose.
    lowered = run_cli(golden, db, "--golden-limit", "prompt_chars=200000", "--golden-limit", "nodes=3")
    assert lowered.returncode == 2 and f"{golden}:" in lowered.stderr and "more than 3 YAML nodes" in lowered.stderr, lowered.stderr
    assert not db.exists()
    bad = run_cli(golden, db, "--golden-limit", "prompts=5")
    assert bad.returncode == 2 and "--golden-limit takes NAME=VALUE" in bad.stderr


def test_limit_overrides_are_checked() -> None:
    assert DEFAULT_LIMITS.with_overrides(["cases=10", "depth = 4"]) == GoldenLimits(cases=10, depth=4)
    assert set(LIMIT_NAMES) == {"file_bytes", "nodes", "alias_nodes", "depth", "prompt_chars", "cases"}
    for bad in ("cases", "cases=0", "cases=many", "shoes=3"):
        with pytest.raises(ConfigError):
            DEFAULT_LIMITS.with_overrides([bad])


def test_each_limit_refuses_at_its_line(tmp_path: Path) -> None:
    text = textwrap.dedent(
        """\
        base: &base {city: Paris, units: celsius}
        cases:
          - id: a
            prompt: Weather in Paris?
            expect_tool: get_weather
            expect_args: *base
        """
    )
    path = tmp_path / "tasks.yaml"
    path.write_text(text, encoding="utf-8")
    cases = {
        GoldenLimits(alias_nodes=4): (6, "aliases repeat more than 4 nodes"),
        GoldenLimits(nodes=8): (3, "more than 8 YAML nodes"),
        GoldenLimits(depth=2): (3, "nested deeper than 2 levels"),
        GoldenLimits(prompt_chars=10): (4, "'prompt' is 17 characters, more than 10"),
        GoldenLimits(file_bytes=20): (None, f"the file is {len(text)} bytes, more than 20"),
    }
    for limits, (line, words) in cases.items():
        with pytest.raises(GoldenSetProblems) as info:
            load_golden_set(path, limits=limits)
        where = f"{path}:{line}: " if line else f"{path}: "
        assert any(p.startswith(where) and words in p for p in info.value.problems), (limits, str(info.value))
    # Within the limits, the alias and the unknown top-level key are what the loader sees.
    (problem,) = pytest.raises(GoldenSetProblems, load_golden_set, path).value.problems
    assert problem.startswith(f'{path}:1: unknown top-level key "base"')


def test_merge_keys_and_shared_anchors_still_load(tmp_path: Path) -> None:
    path = tmp_path / "tasks.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            cases:
              - &weather
                id: a
                prompt: Weather in Paris?
                expect_tool: get_weather
                expect_args: &paris {city: Paris}
              - <<: *weather
                id: b
                expect_args: {<<: *paris, units: fahrenheit}
            """
        ),
        encoding="utf-8",
    )
    first, second = load_golden_set(path).cases
    assert (first.id, second.id, second.prompt, second.expect_tool) == ("a", "b", "Weather in Paris?", "get_weather")
    assert second.expect_args == {"city": "Paris", "units": "fahrenheit"} and first.expect_args == {"city": "Paris"}
