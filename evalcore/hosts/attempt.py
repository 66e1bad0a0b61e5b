"""Orchestration: one attempt through an agent host, as a `Transcript` the scorers read like any model's.

Each attempt is one headless host session (`evalcore.hosts.session`) in an empty config/home folder and an empty
working folder of its own (both removed after), with a minimal environment, the tap's URL as its only MCP server
(`evalcore.hosts.tap`), and, for a `sim/` model, the sim endpoint's URL for this attempt as its model endpoint.

What the host did is read from two sides: its own event stream (`HostReport`) and the MCP exchanges the tap
recorded. The recorded side is what is scored: one turn per recorded `tools/call`, its execution the server's own
answer, then the final answer; the host's usage, cost and turn count go on the final turn. The two sides are
cross-checked (the MCP calls in order, by name and arguments); a disagreement is written on the attempt
(`Transcript.error`) and in its transcript.

An attempt is errored (stop reason `model_error`, so no score counts it) when the host asked for an approval nobody
can give, passed its wall-clock ceiling (`ModelSpec.timeout_s`: the whole session's, its process tree killed), exited
without a result, or reported an error of its own. A host whose MCP client speaks only revisions the server refuses
makes the whole column "not testable through this host: it speaks MCP up to R": the first such attempt finds it, and
every later attempt of that host model says so without starting the host.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.hosts import claude_code, codex
from evalcore.hosts.report import HostReport, StreamCall
from evalcore.hosts.session import SessionOutput, run_session
from evalcore.hosts.spec import HostModel, host_binary, host_version, parse_host_model
from evalcore.hosts.tap import Tap, TapLog, running_tap
from evalcore.mcp.protocol.constants import PROTOCOL_VERSION
from evalcore.mcp.recording import ServerTarget
from evalcore.mcp.transport.base import Limits
from evalcore.models.sim.host_server import HostWireServer, HostWireSession, running_host_wire_server
from evalcore.models.types import ModelSpec
from evalcore.records import ModelTurn, StopReason, ToolCall, ToolExecution, Transcript
from evalcore.redaction import clip

BASE_VARIABLES = ("PATH", "LANG", "LANGUAGE", "TMPDIR")  # what a host inherits, as a stdio server does
SIM_KEY = "sim-no-key"  # what a host shows a sim endpoint, which reads none


@dataclass
class HostRuntime:
    """A run's shared parts for its host attempts: the recording tap, the sim endpoint, and the columns found untestable."""

    tap: Tap
    wires: HostWireServer
    untestable: dict[str, str] = field(default_factory=dict)  # host model name -> why


@contextlib.contextmanager
def host_runtime(target: ServerTarget, limits: Limits) -> Iterator[HostRuntime]:
    """The tap in front of `target` (opened from the run's recording target) and the sim endpoint, for the run's length."""
    with running_tap(target, limits) as tap, running_host_wire_server() as wires:
        yield HostRuntime(tap, wires)


def host_model_version(spec: ModelSpec, reported: str | None) -> str:
    """`claude-code 2.1.332 / <the model's own version>`: a host update and a model update both show."""
    parsed = parse_host_model(spec.name)
    version = f"{parsed.host} {host_version(host_binary(parsed.host))}"
    return f"{version} / {reported}" if reported else version


async def run_host_attempt(runtime: HostRuntime, spec: ModelSpec, *, prompt: str, system: str, context: Mapping[str, Any], max_steps: int) -> Transcript:
    """One attempt through the host `spec` names (see the module docstring)."""
    parsed = parse_host_model(spec.name)
    if spec.name in runtime.untestable:
        return _errored(runtime.untestable[spec.name], ())
    binary = host_binary(parsed.host)
    folder = Path(tempfile.mkdtemp(prefix="evalcore-host-"))
    home, work = folder / "home", folder / "work"
    home.mkdir()
    work.mkdir()
    mcp_url = runtime.tap.open_attempt()
    wire_base = runtime.wires.register(HostWireSession(parsed.model, dict(context), _server_name(parsed))) if parsed.simulated else None
    try:
        command = _command(parsed, binary, home=home, mcp_url=mcp_url, spec=spec, wire_base=wire_base, prompt=prompt, system=system, max_steps=max_steps)
        output = await run_session(command.argv, env=command.env, cwd=work, ceiling_s=spec.timeout_s)
    finally:
        log = runtime.tap.close_attempt(mcp_url)
        if wire_base is not None:
            runtime.wires.forget(wire_base)
        shutil.rmtree(folder, ignore_errors=True)
    report = claude_code.parse(output.lines) if parsed.host == "claude-code" else codex.parse(output.lines)
    version = host_model_version(spec, report.model)
    untestable = _era_gap(log)
    if untestable is not None:
        runtime.untestable[spec.name] = untestable
        return _errored(untestable, report.events)
    return transcript_of(spec, parsed, output, report, log, version, prompt)


def _server_name(parsed: HostModel) -> str:
    return claude_code.SERVER_NAME if parsed.host == "claude-code" else codex.SERVER_NAME


def _command(
    parsed: HostModel, binary: Path, *, home: Path, mcp_url: str, spec: ModelSpec, wire_base: str | None, prompt: str, system: str, max_steps: int
) -> claude_code.HostCommand:
    base_env = {name: os.environ[name] for name in BASE_VARIABLES if name in os.environ}
    if parsed.host == "claude-code":
        key = SIM_KEY if wire_base is not None else os.environ.get(claude_code.KEY_VARIABLE)
        model = "sim" if parsed.simulated else parsed.model
        return claude_code.command(
            binary, home=home, mcp_url=mcp_url, model=model, base_url=wire_base or spec.api_base, key=key, prompt=prompt, system=system,
            max_turns=max_steps, base_env=base_env,
        )  # fmt: skip
    key = SIM_KEY if wire_base is not None else os.environ.get(codex.KEY_VARIABLE)
    base = f"{wire_base}/v1" if wire_base is not None else spec.api_base
    model = "sim" if parsed.simulated else parsed.model
    return codex.command(binary, home=home, mcp_url=mcp_url, model=model, base_url=base, key=key, prompt=prompt, system=system, base_env=base_env)


def _era_gap(log: TapLog) -> str | None:
    """ "not testable through this host: it speaks MCP up to R" when the host never got the server's tools and named
    only revisions older than the server's; None otherwise."""
    listed = any(t.exchange.method == "tools/list" and t.exchange.answer is not None and "result" in t.exchange.answer for t in log.exchanges)
    if listed or not log.versions or PROTOCOL_VERSION in log.versions:
        return None
    return f"not testable through this host: it speaks MCP up to {max(log.versions)}, and the server speaks {PROTOCOL_VERSION} only"


def unsupported(reason: str) -> Transcript:
    """An errored attempt for what a host cannot be run with (it is never scored as if it could)."""
    return _errored(reason, ())


def _errored(reason: str, events: Sequence[Mapping[str, Any]]) -> Transcript:
    return Transcript(tuple(events), (), (), None, "model_error", reason)


def host_header(version: str, report: HostReport, mismatch: str | None) -> dict[str, Any]:
    """The transcript's first message: which host, its own turn count and steps, and the cross-check."""
    title = f"Host {version} · {report.turns or 0} host turns, {report.host_steps} host steps · cross-check: {mismatch or 'agree'}"
    fields = {"host": version, "turns": report.turns, "host_steps": report.host_steps, "cross_check": mismatch or "agree"}
    return {"role": "host", "title": title, **fields, "content": fields}


def transcript_of(spec: ModelSpec, parsed: HostModel, output: SessionOutput, report: HostReport, log: TapLog, version: str, prompt: str = "") -> Transcript:
    """The attempt's transcript from the recorded side, with the host's report on its final turn (see the module docstring)."""
    executions = tuple(_execution(number, tapped.exchange.params, tapped.exchange.answer, tapped.exchange.failure, tapped.latency_ms)
                       for number, tapped in enumerate((t for t in log.exchanges if t.exchange.method == "tools/call"), start=1))  # fmt: skip
    turns = [ModelTurn(None, (e.call,), 0.0, 0, 0, 0.0, version, finish_reason="tool_calls") for e in executions]
    cost = 0.0 if parsed.simulated else report.cost_usd
    host = f"host/{parsed.host}"
    final = ModelTurn(report.final_text, (), output.elapsed_ms, report.input_tokens, report.output_tokens, cost, version, finish_reason="stop")
    mismatch = cross_check(report.calls, [e.call for e in executions])
    header = host_header(version, report, mismatch)
    messages = (header, {"role": "user", "content": prompt}, *report.events)
    failure = _failure(host, spec, output, report)
    if failure is not None:
        return Transcript(messages, tuple(turns), executions, None, "model_error", failure)
    stop: StopReason = "step_limit" if report.step_limit else "final"
    error = f"{host}: cross-check: {mismatch}" if mismatch else (f"{host}: {report.error}" if report.step_limit and report.error else None)
    return Transcript(messages, (*turns, final), executions, report.final_text, stop, error)


def _failure(host: str, spec: ModelSpec, output: SessionOutput, report: HostReport) -> str | None:
    """Why the session is errored, or None."""
    if output.timed_out:
        return f"{host}: no end within its {spec.timeout_s:g} s ceiling; its process tree was killed"
    if report.denials:
        return f"{host}: asked for an approval nobody can give ({', '.join(report.denials)})"
    if report.error is not None and not report.step_limit:
        last = output.stderr_tail.strip().splitlines()[-1:] if report.error == "no result event" else []
        code = f" (exit code {output.returncode})" if output.returncode not in (0, None) else ""
        return clip(f"{host}: {report.error}{code}{': ' + last[0] if last else ''}", 500)
    return None


def cross_check(stream: Sequence[StreamCall], recorded: Sequence[ToolCall]) -> str | None:
    """None when the host's stream and the recorded exchanges show the same MCP calls in order, else what differs."""
    said = [(c.name, _canonical(c.arguments)) for c in stream]
    seen = [(c.name, _canonical(c.arguments)) for c in recorded]
    if said == seen:
        return None
    return clip(f"the host's stream shows {len(said)} MCP call(s) {[n for n, _ in said]}, the recorded exchanges {len(seen)} {[n for n, _ in seen]}", 300)


def _canonical(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, default=str)


def _execution(number: int, params: Mapping[str, Any], answer: Mapping[str, Any] | None, failure: str | None, latency_ms: float) -> ToolExecution:
    raw = params.get("arguments")
    arguments: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    call = ToolCall(f"host_call_{number}", str(params.get("name")), arguments, json.dumps(arguments))
    result = answer.get("result") if answer is not None else None
    if isinstance(result, dict):
        is_error = result.get("isError") is True
        return ToolExecution(call, result, None, is_error, latency_ms, (number,), "tool_error" if is_error else None)
    error = answer.get("error") if answer is not None else None
    if isinstance(error, dict):
        return ToolExecution(call, None, f"{error.get('code')}: {error.get('message')}", True, latency_ms, (number,), str(error.get("code")))
    kind = (failure or "no_answer").split(":")[0]
    return ToolExecution(call, None, failure or "no answer", True, latency_ms, (number,), kind)
