"""Pure logic: scrub secrets from any text evalcore produces about a model call.

Keys are never passed by evalcore (litellm reads them from the environment),
but providers and SDKs sometimes echo them back in error messages. `redact`
is the belt and braces: every error text of the models package goes through it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

REDACTED = "[redacted]"
SECRET_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_SECRET_LENGTH = 6  # shorter values ("1", "true") would scrub ordinary words
# Key shapes worth hiding even when they do not come from this process's environment.
_KEY_SHAPES = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|\bBearer\s+[A-Za-z0-9._\-]{8,}", re.IGNORECASE)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names look like credentials, longest first."""
    env = os.environ if environ is None else environ
    values = {value for name, value in env.items() if name.upper().endswith(SECRET_SUFFIXES) and len(value) >= MIN_SECRET_LENGTH}
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every credential-looking environment value and key-shaped token replaced by `[redacted]`."""
    for value in secret_values(environ):
        text = text.replace(value, REDACTED)
    return _KEY_SHAPES.sub(REDACTED, text)
