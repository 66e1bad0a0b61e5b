"""I/O layer: one model call straight to an OpenAI-compatible Chat Completions endpoint, for models litellm would send there as is.

litellm stays the way to reach providers: it knows the model strings, the prices and each provider's quirks.
For a model it would only pass through to OpenAI's Chat Completions API unchanged, though, its per-call
machinery (logging, callbacks, the OpenAI SDK under it, response objects: bench/profile_run.py) cost more CPU
than the rest of an attempt, and importing it costs seconds of CPU and 200 MB. Such a model is called here,
with aiohttp on the caller's event loop (about a quarter of httpx's CPU per call), and litellm is not imported
for it at all.

A model takes this route (`route_of`) when all of these hold, and otherwise goes through litellm:

- its string is `openai/NAME` (litellm's `openai` provider: the Chat Completions API at `api_base`);
- litellm prices from its bundled cost map (`LITELLM_LOCAL_MODEL_COST_MAP`, evalcore's default), and that map
  has NAME as a flat-priced `openai` chat model (`evalcore.models.cost_map`), or the spec carries its own price;
  so the cost is litellm's own figure, and a model litellm finds only by its fall-back rules goes to litellm;
- it is not a reasoning model (the map's `supports_reasoning`, or an o-series, gpt-5 or gpt-6 name), nor an
  audio, search or realtime model: litellm drops or renames their parameters;
- `EVALCORE_MODEL_ROUTE` is not `litellm` (which sends every model through litellm).

What litellm would send, sent here: the key from `OPENAI_API_KEY` (and `OPENAI_ORGANIZATION`), the base from
`api_base`, else `OPENAI_BASE_URL` / `OPENAI_API_BASE`, else OpenAI's; the body has the model's bare name, the
messages (their empty fields left out), temperature, seed, and the tools with `tool_choice: auto`. A failure is a `ProviderError` named as
litellm names it (`RateLimitError`, `AuthenticationError`, `ServiceUnavailableError`, ...), with the status and
the response headers the retry policy reads (`Retry-After`); a timeout or a connection that fails is a
`Timeout` or an `APIConnectionError`. Retries, provider limits and the error text stay the adapter's.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import aiohttp
import yarl

from evalcore.models.cost_map import bundled_openai_chat_model
from evalcore.models.pricing import unit_prices
from evalcore.models.types import ModelSpec
from evalcore.tls import verifying_context

ROUTE_VARIABLE: Final = "EVALCORE_MODEL_ROUTE"
OPENAI_BASE: Final = "https://api.openai.com/v1"
# litellm's openai provider sends these model families through configs that drop or rename parameters: the o-series
# (`o` and a digit), the gpt-5 and gpt-6 reasoning series (anywhere in the name), audio, search and realtime models.
_SPECIAL_NAME = re.compile(r"^o\d|gpt-5|gpt-6|codex|computer-use|audio|search|realtime", re.IGNORECASE)
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aiohttp.ClientSession] = weakref.WeakKeyDictionary()
_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class DirectRoute:
    """Where and how a direct call goes: the endpoint, the model's bare name, and the names of its credential variables."""

    url: str  # .../chat/completions
    model: str  # the name the provider knows (no `openai/` prefix)
    key_variable: str = "OPENAI_API_KEY"
    organization_variable: str = "OPENAI_ORGANIZATION"


class ProviderError(Exception):
    """A provider's error answer, or no answer. `status_code` and `headers` are what the retry policy reads."""

    def __init__(self, message: str, status_code: int | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = dict(headers or {})

    @property
    def retryable(self) -> bool:
        status = self.status_code
        return status is None or status in (408, 429) or status >= 500


# Named as litellm names them, so an error reads the same whichever way the call went.
class BadRequestError(ProviderError): ...


class AuthenticationError(ProviderError): ...


class PermissionDeniedError(ProviderError): ...


class NotFoundError(ProviderError): ...


class RateLimitError(ProviderError): ...


class InternalServerError(ProviderError): ...


class ServiceUnavailableError(ProviderError): ...


class APIError(ProviderError): ...


class Timeout(ProviderError): ...


class APIConnectionError(ProviderError): ...


_BY_STATUS: Final[Mapping[int, type[ProviderError]]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: Timeout,
    422: BadRequestError,
    429: RateLimitError,
    500: InternalServerError,
    503: ServiceUnavailableError,
}


def route_of(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> DirectRoute | None:
    """The direct route for this model, or None when it goes through litellm (see the module docstring)."""
    environ = os.environ if environ is None else environ
    return _route(
        spec,
        unit_prices(spec),
        through_litellm=environ.get(ROUTE_VARIABLE, "").strip().lower() == "litellm",
        # Unset is evalcore's default, the bundled map (`litellm_loader` sets it before litellm is imported).
        bundled_map=environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True").strip().lower() in ("true", "1"),
        base=spec.api_base or environ.get("OPENAI_BASE_URL") or environ.get("OPENAI_API_BASE") or OPENAI_BASE,
    )


@functools.lru_cache(maxsize=256)
def _route(spec: ModelSpec, prices: tuple[float, float] | None, *, through_litellm: bool, bundled_map: bool, base: str) -> DirectRoute | None:
    """`route_of`'s answer from all it depends on, so that it is cached under all of it (it is asked at every call)."""
    provider, _, name = spec.name.partition("/")
    if provider != "openai" or not name or through_litellm or _SPECIAL_NAME.search(name):
        return None
    if prices is None:  # priced by litellm's map: only a flat, non-reasoning chat model found by its own name
        entry = bundled_openai_chat_model(name) if bundled_map else None
        if entry is None or entry.supports_reasoning or not entry.flat:
            return None
    return DirectRoute(url=f"{base.rstrip('/')}/chat/completions", model=name)


def request_body(route: DirectRoute, request: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body for litellm's `completion` keyword arguments (`adapter.build_request`), as litellm sends it to OpenAI."""
    # As the OpenAI SDK under litellm sends it: a message's keys without a value are left out (`"content": null`).
    messages = [{key: value for key, value in message.items() if value is not None} for message in request["messages"]]
    body: dict[str, Any] = {"model": route.model, "messages": messages}
    for name in ("temperature", "seed", "tools", "tool_choice"):
        if request.get(name) is not None:
            body[name] = request[name]
    return body


def encode_body(route: DirectRoute, request: Mapping[str, Any]) -> bytes:
    """The request body for litellm's `completion` keyword arguments, as JSON bytes (`request_body`)."""
    return json.dumps(request_body(route, request)).encode("utf-8")


async def send(route: DirectRoute, body: bytes, timeout_s: float, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """POST one chat completion (`body` from `encode_body`) and return the answer's JSON object; a `ProviderError` for anything else."""
    environ = os.environ if environ is None else environ
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = environ.get(route.key_variable)
    if not key:
        raise AuthenticationError(f"OpenAIException - the api_key client option must be set, by setting {route.key_variable} in the environment")
    headers["Authorization"] = f"Bearer {key}"
    organization = environ.get(route.organization_variable)
    if organization:
        headers["OpenAI-Organization"] = organization
    proxy, proxy_auth = _proxy_for(route.url, environ)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    try:
        async with (await _client()).post(route.url, data=body, headers=headers, timeout=timeout, proxy=proxy, proxy_auth=proxy_auth) as response:
            status = response.status
            text = await response.read()
            response_headers = dict(response.headers)
    except TimeoutError as exc:
        raise Timeout(f"Request timed out after {timeout_s:g} s ({type(exc).__name__})") from exc
    except aiohttp.ClientError as exc:
        raise APIConnectionError(f"Connection error: {type(exc).__name__}: {exc}") from exc
    if status >= 400:
        raise _error(status, text, response_headers)
    try:
        answer = json.loads(text)
    except ValueError as exc:
        raise APIError(f"OpenAIException - the answer is not JSON (HTTP {status})", status) from exc
    if not isinstance(answer, dict):
        raise APIError(f"OpenAIException - the answer is not a JSON object (HTTP {status})", status)
    return answer


def _error(status: int, body: bytes, headers: Mapping[str, str]) -> ProviderError:
    """The `ProviderError` for an error answer, with the provider's own message (OpenAI's `{"error": {"message": ...}}`)."""
    message = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        found = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else data.get("message")
        if isinstance(found, str) and found:
            message = found
    kind = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    return kind(f"OpenAIException - {message or f'HTTP {status}'}", status, headers)


def _proxy_for(url: str, environ: Mapping[str, str]) -> tuple[str | None, aiohttp.BasicAuth | None]:
    """The proxy litellm's client would send `url` through: `HTTPS_PROXY`, `HTTP_PROXY` or `ALL_PROXY` (the lower-case
    name first), unless `NO_PROXY` covers the host. Read at each call, on the loop: aiohttp's own `trust_env` reads
    them, and the user's `.netrc`, on a worker thread for every request, which cost more CPU than the request."""
    proxies: dict[str, str] = {}
    for name, value in environ.items():
        lowered = name.lower()
        if value and lowered.endswith("_proxy") and (name == lowered or lowered not in proxies):
            proxies[lowered] = value
    parts = urllib.parse.urlsplit(url)
    proxy = proxies.get(f"{parts.scheme}_proxy") or proxies.get("all_proxy")
    if proxy is None or parts.hostname is None:
        return None, None
    if "no_proxy" in proxies and urllib.request.proxy_bypass_environment(parts.hostname, {"no": proxies["no_proxy"]}):  # type: ignore[attr-defined]  # stdlib; not in typeshed
        return None, None
    located = yarl.URL(proxy if "://" in proxy else f"http://{proxy}")
    return str(located.with_user(None)), aiohttp.BasicAuth.from_url(located)


async def _client() -> aiohttp.ClientSession:
    """The running loop's client (a connection pool shared by its calls; it goes with the loop)."""
    loop = asyncio.get_running_loop()
    client = _CLIENTS.get(loop)
    if client is None or client.closed:
        # As litellm's client: the CA bundle from SSL_CERT_FILE or SSL_CERT_DIR, else certifi's (read only for https);
        # its proxy is each call's (`_proxy_for`).
        connector = aiohttp.TCPConnector(limit=0, ssl=verifying_context(trust_env=True))
        client = _CLIENTS[loop] = aiohttp.ClientSession(connector=connector, trust_env=False)
        closer = _CLOSERS[loop] = _closed_with_the_loop(loop, client)
        await anext(closer)
    return client


async def _closed_with_the_loop(loop: asyncio.AbstractEventLoop, client: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Parked at its `yield` until the loop shuts its async generators down (`asyncio.run` does, as it ends), then
    closes `client` and forgets it: so every caller's loop closes its client, whether or not the caller calls
    `aclose`, and no ended loop stays referenced from here (the client holds its loop)."""
    try:
        yield
    finally:
        if _CLIENTS.get(loop) is client:
            del _CLIENTS[loop]
            _CLOSERS.pop(loop, None)
        await client.close()


async def aclose() -> None:
    """Close the running loop's client, if it made one (a run does this at its end)."""
    closer = _CLOSERS.get(asyncio.get_running_loop())
    if closer is not None:
        await closer.aclose()
