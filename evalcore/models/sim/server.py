"""I/O layer: an OpenAI-compatible chat-completions endpoint serving the sim policies, on 127.0.0.1 only.

    python -m evalcore.models.sim.server --port 0 [--latency-ms 50] [--alias openai-model=sim-lexical ...]
                                         [--rate-limit-every N [--retry-after SECONDS|HTTP-DATE]]

prints `listening on http://127.0.0.1:PORT/v1` to stderr once bound. litellm
reaches it as `hosted_vllm/sim-lexical` (or `hosted_vllm/sim-judge`) with
`api_base=http://127.0.0.1:PORT/v1` and needs no key. For benchmarks (the
latency is a real `asyncio.sleep`) and for testing litellm's real HTTP path.
`--alias gpt-4o-mini=sim-lexical` also serves a policy under a model name
litellm has a price for (`openai/gpt-4o-mini` with this api_base), so a
benchmark prices its calls the way a run against that provider would.
`--rate-limit-every 3` answers every third chat request with a 429 carrying
`Retry-After` (default 1), as a provider at its limit does, so a run's
rate-limit handling can be exercised offline and deterministically.

    POST /v1/chat/completions   OpenAI request and response shapes: tools, tool_calls, usage
    GET  /v1/models             the model ids served
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from evalcore.models.sim.judge_policy import judge_reply
from evalcore.models.sim.lexical import lexical_reply
from evalcore.models.sim.reply import SimReply, assistant_turns, openai_message
from evalcore.processes import adopt_children

HOST = "127.0.0.1"
POLICIES = {"sim-lexical": lexical_reply, "sim-judge": judge_reply}


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": None}}, status_code=status)


def completion_body(model: str, reply: SimReply, messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The chat.completion object; its id is a hash of the request, so equal requests get equal answers."""
    digest = hashlib.sha256(json.dumps([model, list(messages)], sort_keys=True, default=str).encode()).hexdigest()[:24]
    return {
        "id": f"chatcmpl-sim-{digest}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": reply.model_version,
        "choices": [{"index": 0, "message": openai_message(reply, assistant_turns(messages)), "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens, "total_tokens": reply.input_tokens + reply.output_tokens},
    }


def build_app(latency_ms: float = 0.0, aliases: Mapping[str, str] | None = None, *, rate_limit_every: int = 0, retry_after: str = "1") -> Starlette:
    policies = {**POLICIES, **{alias: POLICIES[policy] for alias, policy in (aliases or {}).items()}}
    received = 0

    async def chat_completions(request: Request) -> JSONResponse:
        nonlocal received
        received += 1
        if rate_limit_every and received % rate_limit_every == 0:
            limited = _error(429, "Rate limit reached for requests (sim); retry after the time in Retry-After", "rate_limit_error")
            limited.headers["Retry-After"] = retry_after
            return limited
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "the request needs a 'messages' list")
        model = str(body.get("model", ""))
        policy = policies.get(model)
        if policy is None:
            return _error(404, f"model {model!r} does not exist; this server has {', '.join(policies)}", "not_found_error")
        if body.get("stream"):
            return _error(400, "streaming is not supported by the sim server")
        tools = body.get("tools") if isinstance(body.get("tools"), list) else None
        reply = policy(body["messages"], tools)
        await asyncio.sleep(latency_ms / 1000)
        return JSONResponse(completion_body(model, reply, body["messages"]))

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": name, "object": "model", "owned_by": "evalcore"} for name in policies]})

    return Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"]), Route("/v1/models", models, methods=["GET"])])


class _AnnouncingServer(uvicorn.Server):
    """uvicorn, plus one stderr line naming the real URL once the socket is bound (callers wait for it)."""

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            print(f"listening on http://{host}:{port}/v1", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    adopt_children()  # ends with the evalcore process that started it
    parser = argparse.ArgumentParser(prog="python -m evalcore.models.sim.server", description="OpenAI-compatible sim model endpoint on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8765, help="port to bind; 0 picks a free one (default: 8765)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="simulated latency added to every answer (default: 0)")
    parser.add_argument("--alias", action="append", default=[], metavar="NAME=POLICY", help=f"also serve POLICY ({', '.join(POLICIES)}) as model NAME")
    parser.add_argument("--rate-limit-every", type=int, default=0, metavar="N", help="answer every Nth chat request with 429 (default: never)")
    parser.add_argument("--retry-after", default="1", metavar="VALUE", help="the Retry-After of those 429s: seconds or an HTTP date (default: 1)")
    args = parser.parse_args(argv)
    if args.latency_ms < 0:
        parser.error("--latency-ms must not be negative")
    if args.rate_limit_every < 0:
        parser.error("--rate-limit-every must not be negative")
    aliases = dict(alias.partition("=")[::2] for alias in args.alias)
    if unknown := sorted(policy for policy in aliases.values() if policy not in POLICIES):
        parser.error(f"--alias names no policy: {', '.join(unknown)} (policies: {', '.join(POLICIES)})")
    # No access log: the warning level hides its lines anyway, and without it uvicorn skips the per-request logger call.
    app = build_app(args.latency_ms, aliases, rate_limit_every=args.rate_limit_every, retry_after=args.retry_after)
    config = uvicorn.Config(app, host=HOST, port=args.port, log_level="warning", access_log=False)
    _AnnouncingServer(config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
