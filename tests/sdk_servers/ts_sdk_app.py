"""The TypeScript SDK v2 server (tests/ts_sdk_server/server.mjs), started through node in place of this process.

Lets the same `python -m tests.sdk_servers.<module>` launcher start it; the
node modules must have been installed first (`npm ci` in tests/ts_sdk_server).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "ts_sdk_server" / "server.mjs"

if __name__ == "__main__":
    node = shutil.which("node")
    if node is None:
        sys.exit("node is not installed")
    os.execv(node, [node, str(SERVER), *sys.argv[1:]])
