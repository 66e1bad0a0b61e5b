"""Checks of the JSON-RPC envelope rules for requests (spec/basic/index.mdx "Requests"): they bind the sender, so a server that serves a
request breaking them is warned, never failed."""

from __future__ import annotations

import json

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.envelope import standard_headers

SPEC = "docs/specification/2026-07-28/basic/index.mdx"


@check(
    "jsonrpc.null_id_refused",
    title="a request with a null id is refused, not served",
    spec=SPEC,
    quote="Unlike base JSON-RPC, the ID **MUST NOT** be `null`.",
    binds="sender",  # the sentence binds the request's sender: serving such a request is a warning at most
    http_only=True,  # over stdio an answer to a null id is routed to no request, so a refusal cannot be told from silence
)
async def null_id_refused(ctx: RunContext) -> Verdict:
    message = {"jsonrpc": c.JSONRPC_VERSION, "id": None, "method": "tools/list", "params": {"_meta": ctx.client.meta()}}
    headers = standard_headers(message) if ctx.is_http else {}
    exchange = await ctx.send_raw(json.dumps(message).encode(), headers=headers, label="tools/list with id null")
    served = [m for m in exchange.wire.messages if "result" in m]
    if served:
        return failed("a tools/list with id null was served with a result; the spec forbids null ids")
    if exchange.failure is not None and exchange.failure.kind in ("closed", "too_large"):
        return failed(f"a request with id null: {exchange.describe()}")
    return passed("refused" + (f" (HTTP {exchange.status})" if exchange.status is not None else ""))
