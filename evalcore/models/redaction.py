"""Pure logic: scrub secrets from the error texts of model calls.

Keys are never passed by evalcore (litellm reads them from the environment),
but providers and SDKs sometimes echo them back in error messages. `redact`
removes every known secret in every encoding (`evalcore.redaction`) and, in
error texts only, key-shaped tokens that come from nowhere evalcore knows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evalcore.redaction import Redactor, current, environment_secrets

REDACTED = "[redacted]"
# Key shapes worth hiding even when they do not come from this process's environment.
_KEY_SHAPES = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|\bBearer\s+(?!\[redacted)[A-Za-z0-9._\-]{8,}", re.IGNORECASE)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every known secret replaced by `[redacted:NAME]` and other key-shaped tokens by `[redacted]`."""
    redactor = current() if environ is None else Redactor(environment_secrets(environ))
    return _KEY_SHAPES.sub(REDACTED, redactor.text(text))
