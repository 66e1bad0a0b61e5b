"""Check of what a server does with a JSON-RPC batch, which 2026-07-28 does not have (removed in 2025-06-18).

The only sentence of 2026-07-28 that a batch can break is stdio's: an answer
in kind (a JSON array of responses) is a line that is not an MCP message. Over
HTTP no rule covers a batch POST (only the client's rule to send one message
per POST), so there the check reports what the server did, for information,
and never fails.
"""

from __future__ import annotations

import json

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, not_applicable, not_testable, passed
from evalcore.mcp.protocol.envelope import build_request, standard_headers

SPEC = "docs/specification/2026-07-28/basic/transports/stdio.mdx"


@check(
    "jsonrpc.batch_refused",
    title="a JSON-RPC batch is not answered in kind (stdio: no JSON array on stdout)",
    spec=SPEC,
    quote="The server **MUST NOT** write anything to its `stdout` that is not a valid MCP message.",
)
async def batch_refused(ctx: RunContext) -> Verdict:
    inner = build_request("tools/list", None, f"evalcore-batch-{ctx.nonce}", ctx.client.meta())
    body = json.dumps([inner]).encode()
    if ctx.is_http:
        sent = await ctx.send_raw(body, headers=standard_headers(inner), label="a JSON-RPC batch of one tools/list")
        said = sent.server_said() or ("a JSON array" if sent.wire.body.lstrip().startswith(b"[") else "")
        answer = f"HTTP {sent.status}" + (f" ({said})" if said else "") if sent.status is not None else str(sent.failure)
        return not_applicable(f"no 2026-07-28 rule covers a batch POST (batching was removed in 2025-06-18); for information, a batch got {answer}")
    await ctx.send_raw(body, headers={}, label="a JSON-RPC batch of one tools/list")
    marker = await ctx.request("tools/list")  # answered after the batch's answer, if the batch got one
    failure = marker.failure
    if failure is not None and failure.kind == "bad_json" and "not an object" in failure.detail:
        return failed(f"the server answered a JSON-RPC batch with a JSON array on stdout, which is not an MCP message ({failure.detail})")
    if failure is not None and failure.kind == "closed":
        return not_testable(f"it stopped after a JSON-RPC batch on stdin: {failure.detail}")
    if marker.response is None:
        return failed(f"after a JSON-RPC batch, the next request got {marker.describe()}")
    return passed("no JSON array written; the next request was served")
