"""Models: litellm calls (any provider string), the offline `sim/` provider, tool formats, prices.

litellm and the sim provider import httpx, and httpx imports its command-line tool (click, rich and pygments: a
third of its import time) whenever those are installed, and a stub in its place when they are not. evalcore never
runs that tool, so it takes the stub.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
