"""A stand-in agent host for the tests of what goes wrong: `python tests/fake_host.py MODE PIDFILE [host arguments]`.

    hang      start a child that sleeps, write its pid to PIDFILE, and never end (the ceiling must end both)
    approval  report, as Claude Code's stream-json does, a session whose tool call was denied an approval
    crash     write a line to stderr and exit 3 without a result

`--version` anywhere in the arguments prints a version, as a host binary does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

mode, pidfile, *arguments = sys.argv[1:]
if "--version" in arguments:
    print("9.9.9 (fake host)")
    sys.exit(0)
if mode == "hang":
    child = subprocess.Popen(["sleep", "600"])
    with open(pidfile, "w", encoding="utf-8") as file:
        file.write(str(child.pid))
    while True:
        time.sleep(60)
if mode == "approval":
    print(json.dumps({"type": "system", "subtype": "init", "mcp_servers": [{"name": "target", "status": "connected"}]}))
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
    print(json.dumps({"type": "assistant", "message": {"model": "fake", "content": [call]}}))
    denied = [{"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "ls"}}]
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "I could not run it.", "num_turns": 2}
    print(json.dumps({**result, "permission_denials": denied}))
    sys.exit(0)
print("boom: the host fell over", file=sys.stderr)
sys.exit(3)
