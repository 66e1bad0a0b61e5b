"""A stdio MCP server whose `tools/call` misbehaves (or behaves) in one MRTR way: `python tests/mrtr_stdio.py MODE`.

Modes:
  echo       asks for roots/list once with requestState "opaque-1", then answers with what the retry carried
  loop       answers every call with input_required (a fresh requestState each time), never completing
  malformed  asks for an input request whose method is not one
  neither    answers input_required with neither inputRequests nor requestState
  no-params  asks for an elicitation without params
"""

from __future__ import annotations

import json
import sys


def result(mode: str, params: dict, counter: int) -> dict:
    if mode == "echo":
        if "requestState" not in params:
            return {"resultType": "input_required", "inputRequests": {"where": {"method": "roots/list"}}, "requestState": "opaque-1"}
        text = json.dumps({"requestState": params.get("requestState"), "inputResponses": params.get("inputResponses")})
        return {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": False}
    if mode == "loop":
        return {"resultType": "input_required", "requestState": f"again-{counter}"}
    if mode == "malformed":
        return {"resultType": "input_required", "inputRequests": {"x": {"method": "tools/call", "params": {"name": "evil"}}}}
    if mode == "neither":
        return {"resultType": "input_required"}
    return {"resultType": "input_required", "inputRequests": {"ask": {"method": "elicitation/create"}}}


def main(mode: str) -> None:
    counter = 0
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        counter += 1
        params = request.get("params") or {}
        if request.get("method") == "tools/call":
            body = result(mode, params, counter)
        else:
            body = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": body}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
