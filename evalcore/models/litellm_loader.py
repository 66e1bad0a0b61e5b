"""I/O layer: the one place evalcore imports litellm, with its network fetches turned off first.

Other modules take litellm (and the few litellm classes they need) from here,
never from `import litellm` directly, so the environment is always set first.

litellm downloads its model cost map on import unless told otherwise, and the
import costs seconds, so every caller imports this module lazily (inside the
function that needs litellm), keeping `import evalcore` cheap.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import litellm  # noqa: E402  (the environment above must be set first)
from litellm.llms.custom_llm import CustomLLM, CustomLLMError  # noqa: E402
from litellm.types.utils import ModelResponse  # noqa: E402

# Otherwise litellm prints "Give Feedback / Get Help" banners to stdout on every failure.
litellm.suppress_debug_info = True

__all__ = ["CustomLLM", "CustomLLMError", "ModelResponse", "litellm"]
