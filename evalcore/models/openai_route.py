"""I/O layer: one model call to an OpenAI Chat Completions endpoint through the official `openai` SDK, for every
model that speaks that wire; litellm is not imported for them.

litellm stays the way to reach the other providers (Anthropic, Gemini, Bedrock, Vertex, ...): it knows their wires,
prices and quirks. For a provider litellm only passes through to the OpenAI wire, its per-call machinery (logging,
callbacks, response objects) costs more CPU than the rest of an attempt, and importing it costs seconds of CPU and
200 MB. Such a model is called here, with `AsyncOpenAI` on the caller's event loop (`route_of`):

- `openai/NAME`, whatever NAME is (a local server's model, priced or not), except OpenAI's reasoning, audio, search
  and realtime models (an o-series, gpt-5 or gpt-6 name, or `supports_reasoning` in litellm's map): litellm drops
  or renames their parameters;
- `hosted_vllm/NAME` (vLLM, llama.cpp's `llama-server`, Ollama's `/v1`, ...) and `lm_studio/NAME`;
- unless `EVALCORE_MODEL_ROUTE=litellm`, which sends every model through litellm.

What litellm would send, sent here: the key from the provider's variable (`OPENAI_API_KEY`; a local server's
`HOSTED_VLLM_API_KEY` / `LM_STUDIO_API_KEY`, else the placeholder litellm sends), the base from `api_base`, else the
provider's base variable (`OPENAI_BASE_URL` / `OPENAI_API_BASE` for `openai`); for `openai` the organisation
(`OPENAI_ORGANIZATION` or `OPENAI_ORG_ID`) and project (`OPENAI_PROJECT_ID`). A query in the base
(`?api-version=...`) is sent with every request. The body has the model's bare name, the messages (their empty
fields left out), temperature, seed, and the tools with `tool_choice: auto`. Proxies come from the environment
(`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`), as for litellm.

The SDK's own retries are off: retries, provider limits and the error text stay the adapter's. The answer's JSON
is read here, not by the SDK's response models: a failure is a `ProviderError` (`evalcore.models.provider_errors`),
an answer that is not a chat completion (not JSON, or `{"error": ...}` with HTTP 200) included, with the
provider's own message. One client per (base, key, headers, proxies) per event loop, closed when the loop ends.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import urllib.parse
import weakref
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from evalcore.models.cost_map import bundled_entry
from evalcore.models.provider_errors import APIConnectionError, APIError, AuthenticationError, ProviderError, Timeout, error_class
from evalcore.models.types import ModelSpec

if TYPE_CHECKING:
    import openai

ROUTE_VARIABLE: Final = "EVALCORE_MODEL_ROUTE"
OPENAI_BASE: Final = "https://api.openai.com/v1"
LOCAL_SERVER_KEY: Final = "fake-api-key"  # what litellm sends a local server that was given no key
PROXY_VARIABLES: Final = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")
# litellm's openai provider sends these model families through configs that drop or rename parameters: the o-series
# (`o` and a digit), the gpt-5 and gpt-6 reasoning series (anywhere in the name), audio, search and realtime models.
_SPECIAL_NAME = re.compile(r"^o\d|gpt-5|gpt-6|codex|computer-use|audio|search|realtime", re.IGNORECASE)
_MAX_MESSAGE_CHARS: Final = 500


@dataclass(frozen=True)
class WireProvider:
    """A litellm provider that speaks the OpenAI wire as is, and where litellm finds its key and base."""

    name: str
    key_variable: str
    base_variables: tuple[str, ...]
    default_base: str | None  # None: the model needs an api_base
    default_key: str | None  # None: the key must be set
    openai_account: bool  # sends OpenAI's organisation and project headers
    strip_strict_schemas: bool = False  # litellm drops `additionalProperties: false` and `strict` (vLLM's guided decoding)


PROVIDERS: Final[Mapping[str, WireProvider]] = {
    "openai": WireProvider("openai", "OPENAI_API_KEY", ("OPENAI_BASE_URL", "OPENAI_API_BASE"), OPENAI_BASE, None, True),
    "hosted_vllm": WireProvider("hosted_vllm", "HOSTED_VLLM_API_KEY", ("HOSTED_VLLM_API_BASE",), None, LOCAL_SERVER_KEY, False, True),
    "lm_studio": WireProvider("lm_studio", "LM_STUDIO_API_KEY", ("LM_STUDIO_API_BASE",), None, LOCAL_SERVER_KEY, False),
}


@dataclass(frozen=True)
class WireRoute:
    """Where and how a call goes: the provider, the base URL (without its query), the query, the model's bare name."""

    provider: WireProvider
    base_url: str
    query: tuple[tuple[str, str], ...]
    model: str

    @property
    def key_variable(self) -> str:
        return self.provider.key_variable


def route_of(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> WireRoute | None:
    """The OpenAI-wire route for this model, or None when it goes through litellm (see the module docstring)."""
    environ = os.environ if environ is None else environ
    provider = PROVIDERS.get(spec.name.partition("/")[0])
    if provider is None:
        return None
    base = spec.api_base or next((environ[name] for name in provider.base_variables if environ.get(name)), None) or provider.default_base
    return _route(
        spec.name,
        base,
        through_litellm=environ.get(ROUTE_VARIABLE, "").strip().lower() == "litellm",
        # Unset is evalcore's default, the bundled map (`litellm_loader` sets it before litellm is imported).
        bundled_map=environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "True").strip().lower() in ("true", "1"),
    )


@functools.lru_cache(maxsize=256)
def _route(model: str, base: str | None, *, through_litellm: bool, bundled_map: bool) -> WireRoute | None:
    """`route_of`'s answer from all it depends on, so that it is cached under all of it (it is asked at every call)."""
    prefix, _, name = model.partition("/")
    provider = PROVIDERS.get(prefix)
    if provider is None or not name or through_litellm or base is None:
        return None
    if provider.name == "openai":
        entry = bundled_entry(model) if bundled_map else None
        if _SPECIAL_NAME.search(name) or (entry is not None and entry.supports_reasoning):
            return None
    parts = urllib.parse.urlsplit(base.strip())
    query = tuple(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    bare = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return WireRoute(provider=provider, base_url=bare, query=query, model=name)


def request_body(route: WireRoute, request: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body for litellm's `completion` keyword arguments (`adapter.build_request`), as litellm sends it."""
    # As the OpenAI SDK under litellm sends it: a message's keys without a value are left out (`"content": null`).
    messages = [{key: value for key, value in message.items() if value is not None} for message in request["messages"]]
    body: dict[str, Any] = {"model": route.model, "messages": messages}
    for name in ("temperature", "seed", "tools", "tool_choice"):
        if request.get(name) is not None:
            body[name] = request[name]
    if route.provider.strip_strict_schemas and body.get("tools"):
        body["tools"] = [_without_strict(tool) for tool in body["tools"]]
    return body


def _without_strict(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool as litellm sends it to vLLM: without the function's `strict` flag and `additionalProperties: false`
    anywhere in its schema (litellm drops any key named `strict`; a property of that name is kept here)."""
    function = {key: value for key, value in dict(tool.get("function") or {}).items() if key != "strict"}
    if "parameters" in function:
        function["parameters"] = _open_schema(function["parameters"])
    return {**tool, "function": function}


def _open_schema(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _open_schema(item) for key, item in value.items() if not (key == "additionalProperties" and item is False)}
    if isinstance(value, list):
        return [_open_schema(item) for item in value]
    return value


@dataclass(frozen=True)
class _ClientKey:
    base_url: str
    key: str
    organization: str | None
    project: str | None
    query: tuple[tuple[str, str], ...]
    proxies: tuple[str | None, ...]  # the proxy variables' values when the client was made (httpx reads them then)


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_ClientKey, openai.AsyncOpenAI]] = weakref.WeakKeyDictionary()
_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = weakref.WeakKeyDictionary()


def client_key(route: WireRoute, environ: Mapping[str, str]) -> _ClientKey:
    """Which client a call takes: one per base, key, account headers and proxies (a `ProviderError` when the key is missing)."""
    provider = route.provider
    key = environ.get(provider.key_variable) or provider.default_key
    if not key:
        raise AuthenticationError(f"OpenAIException - the api_key client option must be set, by setting {provider.key_variable} in the environment")
    organization = (environ.get("OPENAI_ORGANIZATION") or environ.get("OPENAI_ORG_ID")) if provider.openai_account else None
    project = environ.get("OPENAI_PROJECT_ID") if provider.openai_account else None
    proxies = tuple(environ.get(name) or environ.get(name.lower()) for name in PROXY_VARIABLES)
    return _ClientKey(route.base_url, key, organization or None, project or None, route.query, proxies)


async def send(route: WireRoute, body: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
    """POST one chat completion and return the answer's JSON object; a `ProviderError` for anything else."""
    import httpx
    import openai

    client = await _client(client_key(route, os.environ))
    try:
        response = await client.post("/chat/completions", cast_to=httpx.Response, body=body, options={"timeout": timeout_s})
    except openai.APIStatusError as exc:
        raise _status_error(exc) from exc
    except openai.APITimeoutError as exc:
        raise Timeout(f"Timeout Error: OpenAIException - Request timed out. Timeout passed={timeout_s:g}, no answer within it") from exc
    except openai.APIConnectionError as exc:
        cause = exc.__cause__
        raise APIConnectionError(f"OpenAIException - Connection error{f': {type(cause).__name__}: {cause}' if cause else ''}") from exc
    return _answer(response.status_code, response.content, dict(response.headers))


def _answer(status: int, content: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """A chat completion's JSON object; an `APIError` (retried) for an answer that is none, with the provider's message."""
    try:
        answer = json.loads(content)
    except ValueError:
        raise APIError(f"OpenAIException - the answer is not JSON (HTTP {status}): {_text(content)}", None, headers) from None
    if not isinstance(answer, dict):
        raise APIError(f"OpenAIException - the answer is not a JSON object (HTTP {status})", None, headers)
    if answer.get("error") is not None and not answer.get("choices"):
        raise APIError(f"OpenAIException - {_provider_message(answer) or 'an error'} (HTTP {status})", None, headers)
    return answer


def _status_error(exc: openai.APIStatusError) -> ProviderError:
    """The `ProviderError` for an error answer, with the provider's own message (OpenAI's `{"error": {"message": ...}}`)."""
    status = exc.status_code
    body = exc.body
    message = _provider_message(body) if isinstance(body, Mapping) else _text(body.encode() if isinstance(body, str) else b"")
    # Named by the words in the answer too, as litellm names it: a prompt too long for the context (llama-server's 400).
    answer = f"{message} {json.dumps(body) if isinstance(body, Mapping) else ''}"
    return error_class(status, answer)(f"OpenAIException - {message or f'HTTP {status}'}", status, dict(exc.response.headers))


def _provider_message(data: Mapping[str, Any]) -> str:
    error = data.get("error", data)
    found = error.get("message") if isinstance(error, Mapping) else error
    if isinstance(found, str) and found.strip():
        return found.strip()
    return json.dumps(data)[:_MAX_MESSAGE_CHARS]


def _text(content: bytes) -> str:
    """An answer's body as one line of text: an HTML error page (a proxy's 502) by its words, not its markup."""
    text = content.decode("utf-8", "replace")
    if "<" in text and ">" in text:
        title = re.search(r"<title>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        text = title.group(1) if title else re.sub(r"<[^>]*>", " ", text)
    return " ".join(text.split())[:_MAX_MESSAGE_CHARS]


async def _client(key: _ClientKey) -> openai.AsyncOpenAI:
    """The running loop's client for `key` (a connection pool shared by its calls; it goes with the loop)."""
    loop = asyncio.get_running_loop()
    clients = _CLIENTS.get(loop)
    if clients is None:
        clients = _CLIENTS[loop] = {}
        closer = _CLOSERS[loop] = _closed_with_the_loop(loop, clients)
        await anext(closer)
    client = clients.get(key)
    if client is None or client.is_closed():
        clients[key] = client = _new_client(key)
    return client


def _new_client(key: _ClientKey) -> openai.AsyncOpenAI:
    import openai

    from evalcore.tls import verifying_context

    # As litellm's client: the CA bundle from SSL_CERT_FILE or SSL_CERT_DIR, else certifi's (read only for https);
    # proxies from the environment (httpx's `trust_env`), read now: the client's key holds their values.
    # The SDK's httpx transport: its aiohttp one takes less CPU per call but reports a refused certificate as a
    # timeout, after the whole timeout (docs/openai-compatible-models.md, "Speed").
    http_client = openai.DefaultAsyncHttpxClient(verify=verifying_context(trust_env=True), trust_env=True)
    client = openai.AsyncOpenAI(
        api_key=key.key,
        organization=key.organization,
        project=key.project,
        base_url=key.base_url,
        default_query=dict(key.query) or None,
        max_retries=0,
        http_client=http_client,
    )
    # The SDK reads OPENAI_ORG_ID and OPENAI_PROJECT_ID itself when given none: a local server is sent neither.
    client.organization, client.project = key.organization, key.project
    return client


async def _closed_with_the_loop(loop: asyncio.AbstractEventLoop, clients: dict[_ClientKey, openai.AsyncOpenAI]) -> AsyncGenerator[None, None]:
    """Parked at its `yield` until the loop shuts its async generators down (`asyncio.run` does, as it ends), then
    closes the loop's clients and forgets them: so every caller's loop closes its clients, whether or not the caller
    calls `aclose`, and no ended loop stays referenced from here (a client holds its loop)."""
    try:
        yield
    finally:
        if _CLIENTS.get(loop) is clients:
            del _CLIENTS[loop]
            _CLOSERS.pop(loop, None)
        for client in list(clients.values()):
            await client.close()
        clients.clear()


async def aclose() -> None:
    """Close the running loop's clients, if it made any (a run does this at its end)."""
    closer = _CLOSERS.get(asyncio.get_running_loop())
    if closer is not None:
        await closer.aclose()
