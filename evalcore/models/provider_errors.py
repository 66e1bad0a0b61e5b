"""Pure data: a provider's error answer, or no answer, as the retry policy and the error text read it.

Named as litellm names them, so an error reads the same whichever route the call took (`evalcore.models.openai_route`
or litellm). `status_code` and `headers` (`Retry-After`) are what the retry policy reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final


class ProviderError(Exception):
    """A provider's error answer, or no answer. `status_code` None: no HTTP status (a timeout, a broken answer)."""

    def __init__(self, message: str, status_code: int | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = dict(headers or {})

    @property
    def retryable(self) -> bool:
        status = self.status_code
        return status is None or status in (408, 429) or status >= 500


class BadRequestError(ProviderError): ...


class ContextWindowExceededError(BadRequestError):
    """The prompt is longer than the model's context (llama-server's `-c`, vLLM's `--max-model-len`, ...)."""


class AuthenticationError(ProviderError): ...


class PermissionDeniedError(ProviderError): ...


class NotFoundError(ProviderError): ...


class RateLimitError(ProviderError): ...


class InternalServerError(ProviderError): ...


class BadGatewayError(ProviderError): ...


class ServiceUnavailableError(ProviderError): ...


class APIError(ProviderError):
    """An answer that is no chat completion: not JSON, not an object, or `{"error": ...}` with HTTP 200 (retried)."""


class Timeout(ProviderError): ...


class APIConnectionError(ProviderError): ...


BY_STATUS: Final[Mapping[int, type[ProviderError]]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: Timeout,
    422: BadRequestError,
    429: RateLimitError,
    500: InternalServerError,
    502: BadGatewayError,
    503: ServiceUnavailableError,
    504: Timeout,
}


# The words by which litellm tells a prompt too long for the model's context, whatever the status
# (`ExceptionCheckers.is_error_str_context_window_exceeded`), read lowercased in the provider's answer.
CONTEXT_WINDOW_WORDS: Final = (
    "exceed context limit",
    "this model's maximum context length is",  # OpenAI, vLLM
    "requested token count exceeds the model's maximum context length",
    "string too long. expected a string with maximum length",
    "model's maximum context limit",
    "is longer than the model's context length",
    "input tokens exceed the configured limit",
    "`inputs` tokens + `max_new_tokens` must be",
    "exceeds the available context size",  # llama.cpp's llama-server
    "exceeds the maximum number of tokens allowed",
    '"code": "context_length_exceeded"',
    "prompt is too long",
)


def error_class(status: int, answer: str = "") -> type[ProviderError]:
    """The class of a provider's error answer with this HTTP status and this text (its message, its body)."""
    text = answer.lower()
    too_long_a_parameter = "string_above_max_length" in text or ("invalid 'user'" in text and "string too long" in text)  # OpenAI's `user`
    if not too_long_a_parameter and any(words in text for words in CONTEXT_WINDOW_WORDS):
        return ContextWindowExceededError
    return BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
