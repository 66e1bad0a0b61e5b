"""Check that a request whose id is neither a string nor an integer is refused, not served (spec/basic/index.mdx "Requests").

The sentence binds the request's sender, so a server that serves such a request is warned, never failed.
"""

from __future__ import annotations

import json
from typing import Any

from evalcore.conformance.context import RunContext
from evalcore.conformance.registry import Verdict, check, failed, passed
from evalcore.mcp.protocol import constants as c
from evalcore.mcp.protocol.envelope import standard_headers

SPEC = "docs/specification/2026-07-28/basic/index.mdx"


@check(
    "jsonrpc.malformed_id_refused",
    title="a request whose id is an object or a fraction is refused, not served",
    spec=SPEC,
    quote="Requests **MUST** include a string or integer ID.",
    binds="sender",  # the sentence binds the request's sender: serving such a request is a warning at most
    http_only=True,  # over stdio an answer to such an id is routed to no request, so a refusal cannot be told from silence
)
async def malformed_id_refused(ctx: RunContext) -> Verdict:
    refusals = []
    malformed_ids: tuple[Any, ...] = ({"evalcore": ctx.nonce}, 1.5)
    for malformed in malformed_ids:
        message = {"jsonrpc": c.JSONRPC_VERSION, "id": malformed, "method": "tools/list", "params": {"_meta": ctx.client.meta()}}
        label = f"tools/list with id {json.dumps(malformed)}"
        exchange = await ctx.send_raw(json.dumps(message).encode(), headers=standard_headers(message), label=label)
        if any("result" in m for m in exchange.wire.messages):
            return failed(f"a {label} was served with a result; request ids must be strings or integers")
        if exchange.failure is not None and exchange.failure.kind in ("closed", "too_large"):
            return failed(f"a {label}: {exchange.describe()}")
        refusals.append(f"HTTP {exchange.status}" if exchange.status is not None else "no answer")
    return passed(f"refused ({', '.join(refusals)})")
