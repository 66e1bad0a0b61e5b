"""I/O layer: the one place evalcore imports litellm, with its network fetches turned off first.

Other modules take litellm (and the few litellm classes they need) from here,
never from `import litellm` directly, so the environment is always set first.

litellm downloads its model cost map on import unless told otherwise, and the
import costs seconds of CPU, so every caller imports this module lazily
(inside the function that needs litellm), keeping `import evalcore` cheap. A
run calls `adapter.start_litellm_import()` first thing, so the import overlaps
the rest of its start-up (the server under test starting, discovery, the
store); the first real use waits for it on Python's import lock.

The import runs with the garbage collector off (it builds thousands of
classes, and collections during it cost about a quarter of its CPU), and the
objects it created are then frozen out of later collections, which a run
would otherwise walk again and again.
"""

from __future__ import annotations

import gc
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

_collecting = gc.isenabled()
gc.disable()
try:
    import litellm
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError
    from litellm.types.utils import ModelResponse
finally:
    if _collecting:
        gc.enable()
gc.freeze()

# Otherwise litellm prints "Give Feedback / Get Help" banners to stdout on every failure.
litellm.suppress_debug_info = True

__all__ = ["CustomLLM", "CustomLLMError", "ModelResponse", "litellm"]
