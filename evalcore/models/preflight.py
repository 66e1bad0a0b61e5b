"""I/O layer: before a run's first attempt, every model must have its credentials and, where its endpoint is known, be reachable.

A run whose models cannot be called measures nothing: without this check it
would retry every attempt and end with a report of errors. Credentials are
checked the way litellm itself would look for them (`litellm.validate_environment`:
which variables the provider needs; their values are never read here). An
endpoint is known when the model has an `api_base` (`--api-base`, or the
provider's base variable, e.g. `OLLAMA_API_BASE`); it is reachable when a TCP
connection to it opens. A hosted provider's own endpoint is not probed: a call
that cannot reach it errors, and a run with errored attempts is incomplete.
`sim/` models run in this process and need neither. A model on the OpenAI-wire route (`evalcore.models.openai_route`)
is checked the same way without litellm: its key variable (`OPENAI_API_KEY`; a local server's is optional), and
its `api_base` when it has one (a local server's base variable too).

`openai/NAME` with an `api_base` and no key is how a local OpenAI-compatible server (vLLM, llama.cpp,
Ollama) is often first tried: its error says what such a server takes instead.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from evalcore.errors import ConfigError
from evalcore.models.openai_route import route_of
from evalcore.models.types import ModelSpec

CONNECT_TIMEOUT_S = 3.0


def model_problems(model: ModelSpec, *, connect_timeout_s: float = CONNECT_TIMEOUT_S) -> list[str]:
    """What stops this model from being called, as `model: reason` lines (empty: it can be called)."""
    if model.name.startswith("host/"):  # an agent host (evalcore.hosts): its binary, and the key of the model behind it
        from evalcore.hosts.spec import host_problems

        return host_problems(model.name)
    if model.simulated:
        return []
    route = route_of(model)
    if route is not None:  # litellm would find the same: `openai` needs its key, and a given base is probed
        if route.provider.default_key is None and not os.environ.get(route.key_variable):
            return [f"{model.name}: {_missing_sentence([route.key_variable])}{_local_server_hint(model, [route.key_variable])}"]
        probed = model.api_base or (None if route.provider.default_base else route.base_url)
        unreachable = _unreachable(probed, connect_timeout_s) if probed else None
        return [f"{model.name}: cannot reach {probed} ({unreachable})"] if unreachable else []
    from evalcore.models.litellm_loader import litellm

    with contextlib.redirect_stdout(io.StringIO()):  # litellm prints a provider list to stdout for an unknown provider
        try:
            _, _, _, api_base = litellm.get_llm_provider(model.name, api_base=model.api_base)
        except (litellm.BadRequestError, ValueError):  # a model string litellm cannot place
            return [f"{model.name}: litellm knows no provider for this model string (write it as provider/model, e.g. openai/gpt-4o-mini)"]
        found = litellm.validate_environment(model=model.name, api_base=model.api_base)
    missing = [str(key) for key in found.get("missing_keys") or []]
    if missing and not found.get("keys_in_environment"):
        if model.api_base and all(key.endswith("_API_BASE") for key in missing):
            missing = []  # the base URL came from --api-base
        if missing:
            return [f"{model.name}: {_missing_sentence(missing)}{_local_server_hint(model, missing)}"]
    base = model.api_base or api_base
    if base:
        unreachable = _unreachable(str(base), connect_timeout_s)
        if unreachable:
            return [f"{model.name}: cannot reach {base} ({unreachable})"]
    return []


def check_models(models: Sequence[ModelSpec], *, connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Raise one ConfigError naming every model that cannot be called, one line each."""
    problems = [line for model in models for line in model_problems(model, connect_timeout_s=connect_timeout_s)]
    if problems:
        raise ConfigError("\n".join(problems))


def _local_server_hint(model: ModelSpec, missing: Sequence[str]) -> str:
    """For `openai/NAME` with an api_base: a local server needs no OpenAI key."""
    provider, _, name = model.name.partition("/")
    if provider != "openai" or not model.api_base or list(missing) != ["OPENAI_API_KEY"]:
        return ""
    return f" (a local OpenAI-compatible server at --api-base takes hosted_vllm/{name}, which needs no key; or set OPENAI_API_KEY to any dummy value)"


def _missing_sentence(keys: Sequence[str]) -> str:
    if len(keys) == 1:
        return f"{keys[0]} is not set"
    return f"{', '.join(keys[:-1])} and {keys[-1]} are not set"


def _unreachable(base: str, timeout_s: float) -> str | None:
    """Why no TCP connection opens to the URL's host and port, or None when one does."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            return None
    except TimeoutError:
        return f"no connection within {timeout_s:g}s"
    except OSError as exc:
        return exc.strerror or type(exc).__name__
