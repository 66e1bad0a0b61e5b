"""Transport layer: Streamable HTTP (httpx) and stdio behind one interface (`base.Transport`).

httpx imports its command-line tool (click, rich and pygments: a third of its import time) whenever those are
installed, and a stub in its place when they are not. evalcore never runs that tool, so it takes the stub.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
