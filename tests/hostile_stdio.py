"""A deliberately broken stdio "MCP server": `python tests/hostile_stdio.py MODE`."""

from __future__ import annotations

import json
import signal
import sys
import time


def main(mode: str) -> None:
    if mode == "exit":
        print("fatal: config file missing", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "deaf":  # ignores SIGTERM and never answers
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        if mode in ("hang", "deaf"):
            time.sleep(60)
        elif mode == "not-jsonrpc":
            sys.stdout.write(json.dumps({"status": "ok", "echo": request.get("method")}) + "\n")
        elif mode == "garbage":
            sys.stdout.write("Starting server... done!\n")
        elif mode == "huge":
            sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(request["id"]) + ',"result":{"x":"' + "a" * 2_000_000 + '"}}\n')
        elif mode == "huge100":
            sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(request["id"]) + ',"result":{"x":"')
            chunk = "a" * 1_000_000
            for _ in range(100):  # 100 MB on one line
                sys.stdout.write(chunk)
            sys.stdout.write('"}}\n')
        elif mode == "nested":
            sys.stdout.write("[" * 100_000 + "]" * 100_000 + "\n")
        elif mode == "not-responses":
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}) + "\n")  # no id
            sys.stdout.write(json.dumps({"jsonrpc": "1.0", "id": "other", "result": {}}) + "\n")  # wrong version, no one's id
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "method": "sampling/createMessage"}) + "\n")  # a request
        elif mode == "drip":
            for char in json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}}):
                sys.stdout.write(char)
                sys.stdout.flush()
                time.sleep(1)
        elif mode == "ok":
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}) + "\n")
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}}) + "\n")
        elif mode == "die-after-one":
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}}) + "\n")
            sys.stdout.flush()
            print("crashed", file=sys.stderr, flush=True)
            sys.exit(1)
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1])
