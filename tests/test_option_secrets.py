"""Credentials written into the options every command shares (the server under test, the models' endpoints) never
leave the process: each command that takes them runs end to end with a planted credential in each, and the store (its
raw bytes, its WAL, every text column), the --out/--json files and the output are searched for them in every encoding."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest

from evalcore.cli import build_parser
from evalcore.cli import main as cli_main
from tests.echo_auth_server import echo_auth_server
from tests.leaky_provider import leak_forms

ROOT = Path(__file__).resolve().parents[1]
INPUTS = ("golden.yaml", "rubric.md")  # the files a test writes: the others are what the commands wrote
FILES = {*INPUTS, "evals.duckdb", "http.json", "stdio.json", "http.xml", "stdio.xml", "compare.json", "perturb.json"}
GOLDEN = """\
cases:
  - id: weather-paris
    prompt: "What's the weather like in Paris right now?"
    expect_tool: get_weather
    expect_args: {city: Paris}
"""
# One planted credential per place it can be written; '/', '+' and '=' make their encodings differ from them.
PLANTED = {
    "--api-base user": "apibase-user-7Q2",
    "--api-base password": "apibase-pass/3k9+W=",
    "--api-base api_key": "apibase-qkey-8m4V",
    "--judge-api-base password": "judgebase-pass/5r1+Z=",
    "--url user": "mcpurl-user-2P6",
    "--url password": "mcpurl-pass/9x3+Q=",
    "--url token": "mcpurl-qtok-4n8T",
    "--candidate-url password": "candurl-pass/6d2+K=",
    "--header X-Api-Key": "header-key/1j7+M=",
    "--header Authorization": "header-bearer/8s5+Y=",
    "--stdio SERVICE_TOKEN": "stdio-svc-token-3H9",
    "--server-env UPSTREAM_DSN password": "dsn-pass/4b6+R=",
}
DSN = f"postgres://dsn-user:{quote(PLANTED['--server-env UPSTREAM_DSN password'], safe='')}@db.internal:5432/app"
# The demo server over stdio, started with a credential on its command line.
STDIO = f"env SERVICE_TOKEN={PLANTED['--stdio SERVICE_TOKEN']} {shlex.quote(sys.executable)} -m evalcore.demo_server --stdio"


def _with_credentials(url: str, user: str, password: str, query: str = "") -> str:
    """`url` with `user:password` written into it (percent-encoded, as a URL carries them) and `query` after it."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{quote(user, safe='')}:{quote(password, safe='')}@{rest}{query}"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """A reachable OpenAI-compatible endpoint that refuses every call: its models' attempts are provider errors."""
    with echo_auth_server() as api_base:
        yield api_base


@pytest.fixture
def planted(provider: str, reference_url: str) -> dict[str, str]:
    """The options' values, each carrying its planted credentials."""
    return {
        "api_base": _with_credentials(provider, PLANTED["--api-base user"], PLANTED["--api-base password"], f"?api_key={PLANTED['--api-base api_key']}"),
        "judge_api_base": _with_credentials(provider, "judge-user", PLANTED["--judge-api-base password"]),
        "url": _with_credentials(reference_url, PLANTED["--url user"], PLANTED["--url password"], f"?token={PLANTED['--url token']}"),
        "candidate_url": _with_credentials(reference_url, "cand-user", PLANTED["--candidate-url password"]),
    }


def _evalcore(directory: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`python -m evalcore ARGUMENTS`, a bare file name among them taken from `directory`; run from the project's root,
    where the stdio server's `python -m evalcore.demo_server` finds its package (it gets no PYTHONPATH)."""
    arguments = tuple(str(directory / argument) if argument in FILES else argument for argument in arguments)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OPENAI_API_KEY": "sk-dummy-key-for-the-refusing-endpoint",  # the preflight asks for a key; the endpoint refuses any
        "UPSTREAM_DSN": DSN,  # passed to the stdio server by --server-env: a name no credential variable has
    }
    return subprocess.run([sys.executable, "-m", "evalcore", *arguments], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def _store_text(db: Path) -> str:
    """Every value of every table of the store, as text."""
    parts: list[str] = []
    with duckdb.connect(str(db), read_only=True) as connection:
        for (table,) in connection.execute("SELECT table_name FROM information_schema.tables").fetchall():
            parts.extend(str(value) for row in connection.execute(f'SELECT * FROM "{table}"').fetchall() for value in row)  # noqa: S608 - its own names
    return "\n".join(parts)


def _assert_no_planted_secret(directory: Path, outputs: str) -> str:
    """No planted credential, in any encoding, in any file the commands wrote (the store, its WAL, the reports), in the
    store's text or in their output. Returns the store's text."""
    db = directory / "evals.duckdb"
    store = _store_text(db) if db.exists() else ""
    texts = {"the output": outputs, "the store's text": store}
    files = {str(path.relative_to(directory)): path.read_bytes() for path in directory.rglob("*") if path.is_file() and path.name not in INPUTS}
    assert files, "the commands wrote nothing"
    for option, secret in PLANTED.items():
        for form_name, form in leak_forms(secret).items():
            for where, text in texts.items():
                assert form not in text, f"{option} ({form_name}) is in {where}"
            for path, content in files.items():
                assert form.encode() not in content, f"{option} ({form_name}) is in {path}"
    return store


REDACTED_API_BASE = "http://[redacted:--api-base user]:[redacted:--api-base password]@"


def _stored_endpoints(db: Path) -> list[str]:
    """The start of the non-sim model's api_base in each stored run's config."""
    with duckdb.connect(str(db), read_only=True) as connection:
        configs = [json.loads(row[0]) for row in connection.execute("SELECT config_json FROM behaviour_runs").fetchall()]
    return [next(m["api_base"] for m in config["models"] if m["api_base"]).split("127.0.0.1")[0] for config in configs]


def _finished(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout + done.stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder holding the golden set and the judge's rubric; the commands run in it."""
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    (tmp_path / "rubric.md").write_text((ROOT / "golden" / "rubric.md").read_text(encoding="utf-8"), encoding="utf-8")
    return tmp_path


def test_run_keeps_every_target_and_endpoint_credential_out(workspace: Path, planted: Mapping[str, str]) -> None:
    common = ["run", "--golden", "golden.yaml", "--runs", "1", "--db", "evals.duckdb", "--max-drop", "1", "--max-error-rate", "1"]
    over_http = _evalcore(
        workspace,
        *common,
        "--out", "http.json",
        "--url", planted["url"],
        "--header", f"X-Api-Key: {PLANTED['--header X-Api-Key']}",
        "--models", "sim/lexical,openai/gpt-4o-mini",
        "--api-base", planted["api_base"],
        "--judge", "openai/gpt-4o",
        "--judge-api-base", planted["judge_api_base"],
    )  # fmt: skip
    over_stdio = _evalcore(workspace, *common, "--out", "stdio.json", "--stdio", STDIO, "--server-env", "UPSTREAM_DSN", "--models", "sim/lexical")
    store = _assert_no_planted_secret(workspace, _finished(over_http) + _finished(over_stdio))
    # The credentials went where they are stored: the models' and the judge's endpoints, the server's URL and command.
    for name in ("--api-base password", "--judge-api-base password", "--url token", "--stdio SERVICE_TOKEN"):
        assert f"[redacted:{name}]" in store, name


def test_compare_keeps_every_target_and_endpoint_credential_out(workspace: Path, planted: Mapping[str, str]) -> None:
    done = _evalcore(
        workspace,
        "compare", "--golden", "golden.yaml", "--runs", "1", "--db", "evals.duckdb", "--json", "compare.json",
        "--url", planted["url"],
        "--header", f"X-Api-Key: {PLANTED['--header X-Api-Key']}",
        "--candidate-url", planted["candidate_url"],
        "--models", "sim/lexical,openai/gpt-4o-mini",
        "--api-base", planted["api_base"],
    )  # fmt: skip
    _assert_no_planted_secret(workspace, _finished(done))
    # Each arm's stored config holds the model's endpoint, the comparison its candidate; both redacted.
    assert _stored_endpoints(workspace / "evals.duckdb") == [REDACTED_API_BASE] * 2
    assert "[redacted:--candidate-url password]" in (workspace / "compare.json").read_text(encoding="utf-8")


def test_perturb_keeps_every_target_and_endpoint_credential_out(workspace: Path, planted: Mapping[str, str]) -> None:
    done = _evalcore(
        workspace,
        "perturb", "--golden", "golden.yaml", "--runs", "1", "--db", "evals.duckdb", "--json", "perturb.json",
        "--perturbations", "shuffled",
        "--server", "reference",
        "--header", f"Authorization: Bearer {PLANTED['--header Authorization']}",
        "--models", "sim/lexical,openai/gpt-4o-mini",
        "--api-base", planted["api_base"],
    )  # fmt: skip
    _assert_no_planted_secret(workspace, _finished(done))
    assert _stored_endpoints(workspace / "evals.duckdb") == [REDACTED_API_BASE] * 2  # the baseline and the perturbed arm


def test_replay_calls_keeps_every_target_credential_out(workspace: Path, planted: Mapping[str, str], reference_url: str) -> None:
    recorded = ["run", "--golden", "golden.yaml", "--runs", "1", "--db", "evals.duckdb", "--run-id", "recorded", "--url", reference_url]
    _finished(_evalcore(workspace, *recorded))
    over_http = _evalcore(
        workspace, "replay-calls", "recorded", "--db", "evals.duckdb", "--json", "http.json", "--url", planted["url"],
        "--header", f"X-Api-Key: {PLANTED['--header X-Api-Key']}",
    )  # fmt: skip
    over_stdio = _evalcore(
        workspace, "replay-calls", "recorded", "--db", "evals.duckdb", "--json", "stdio.json", "--stdio", STDIO, "--server-env", "UPSTREAM_DSN"
    )
    _assert_no_planted_secret(workspace, _finished(over_http) + _finished(over_stdio))
    assert "[redacted:--url token]" in (workspace / "http.json").read_text(encoding="utf-8")


def test_conformance_keeps_every_target_credential_out(workspace: Path, planted: Mapping[str, str]) -> None:
    over_http = _evalcore(
        workspace, "conformance", "--runs", "1", "--db", "evals.duckdb", "--json", "http.json", "--junit", "http.xml", "--url", planted["url"],
        "--header", f"X-Api-Key: {PLANTED['--header X-Api-Key']}",
    )  # fmt: skip
    over_stdio = _evalcore(
        workspace, "conformance", "--runs", "1", "--db", "evals.duckdb", "--json", "stdio.json", "--junit", "stdio.xml", "--stdio", STDIO,
        "--server-env", "UPSTREAM_DSN",
    )  # fmt: skip
    store = _assert_no_planted_secret(workspace, _finished(over_http) + _finished(over_stdio))
    assert "[redacted:--url password]" in store and "[redacted:--stdio SERVICE_TOKEN]" in store


# --- the options read in one place ------------------------------------------------------------------------------------


def _args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_target_from_args_registers_every_credential_before_it_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcore import redaction
    from evalcore.commands.options import target_from_args

    monkeypatch.setattr(redaction, "_registered", {})
    monkeypatch.setenv("UPSTREAM_DSN", DSN)
    monkeypatch.setenv("SERVER_REGION", "eu-west-1")
    chosen = target_from_args(_args("run", "--stdio", STDIO, "--server-env", "UPSTREAM_DSN", "--server-env", "SERVER_REGION"))
    assert chosen.stdio == STDIO and chosen.url is None and chosen.server is None
    assert chosen.server_env == (("UPSTREAM_DSN", DSN), ("SERVER_REGION", "eu-west-1"))
    text = redaction.redact(f"{DSN} {STDIO} eu-west-1")
    assert PLANTED["--server-env UPSTREAM_DSN password"] not in text and PLANTED["--stdio SERVICE_TOKEN"] not in text
    assert "eu-west-1" in text  # a variable that names no credential and holds no URL's key is passed as it is
    assert DSN not in repr(chosen)

    chosen = target_from_args(_args("compare", "--server", "reference", "--header", f"Authorization: Bearer {PLANTED['--header Authorization']}"))
    assert chosen.server == "reference" and chosen.headers == (("Authorization", f"Bearer {PLANTED['--header Authorization']}"),)
    assert PLANTED["--header Authorization"] not in redaction.redact(f"token {PLANTED['--header Authorization']}")


def test_model_options_register_the_endpoints_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcore import redaction
    from evalcore.commands.options import judge_spec_from_args, model_specs_from_args

    monkeypatch.setattr(redaction, "_registered", {})
    api_base = _with_credentials("http://127.0.0.1:9/v1", "u-123456", PLANTED["--api-base password"], f"?api_key={PLANTED['--api-base api_key']}")
    args = _args("perturb", "--models", "sim/lexical,hosted_vllm/m", "--api-base", api_base)
    specs = model_specs_from_args(args)
    assert [(spec.name, spec.api_base) for spec in specs] == [("sim/lexical", None), ("hosted_vllm/m", api_base)]
    assert [spec.name for spec in model_specs_from_args(args, models="hosted_vllm/p")] == ["hosted_vllm/p"]
    shown = redaction.redact(api_base)
    assert PLANTED["--api-base password"] not in shown and PLANTED["--api-base api_key"] not in shown
    judged = _args("run", "--judge", "hosted_vllm/j", "--judge-api-base", _with_credentials("http://127.0.0.1:9/v1", "j", PLANTED["--judge-api-base password"]))
    assert judge_spec_from_args(judged) is not None
    assert PLANTED["--judge-api-base password"] not in redaction.redact(PLANTED["--judge-api-base password"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--stdio", "python -m x", "--candidate-tools", "o.yaml", "--header", "X-A: abcdefgh"], "--header is sent to an HTTP server only"),
        (["perturb", "--url", "ftp://127.0.0.1/mcp"], "--url must start with http:// or https://"),
        (["replay-calls", "r", "--url", "http://127.0.0.1:9/mcp", "--server-env", "HOME"], "--server-env is passed to a stdio server only"),
        (
            ["conformance", "--url", _with_credentials("http://127.0.0.1:9/mcp", "u", PLANTED["--url password"]), "--header", "Authorization: Bearer abcdefgh"],
            "--header Authorization and a user:password in the URL would both set the request's credentials",
        ),
    ],
)
def test_a_target_the_options_cannot_make_is_refused_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and PLANTED["--url password"] not in err
