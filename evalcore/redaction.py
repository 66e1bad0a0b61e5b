"""Pure logic: every secret evalcore knows, and its removal from anything that leaves the process.

The secrets are the values of credential variables in the environment (each
`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, ... that litellm and the
provider SDKs read) plus values registered at run time: a `--header` value
sent to the server under test, and the credentials written into a URL
(`register_url_secrets`: `--url`, `--api-base`) or a command line
(`register_command_secrets`: `--stdio`). A `Redactor` replaces each one by
`[redacted:NAME]` in text, in whatever form it took on the way:

- verbatim (so also `Bearer <key>`, `token=<key>`);
- standard, URL-safe and unpadded base64, also where the key sits inside a
  longer encoded value at any byte alignment (`Basic base64(user:key)`);
- URL-encoded (`quote`, `quote_plus`), JSON-escaped, and hex (either case).

One process-wide redactor (`current()`) is applied where data leaves the process:

- a record's serialisation (`evalcore.records.published`: every `to_json` /
  `to_row` of the typed records, and the conformance report's JSON and JUnit):
  the seam every record passes through on its way out, whoever writes it (the
  store, `run --out`, `conformance --json/--junit`, a new exporter);
- text that is not a record, at the three channels that carry it: the store's
  write connection (every parameter: a run's target, the server's tool list
  and config, error text, and the conformance rows), the span exporter, and a
  command's stdout/stderr (also a background job's log). Exports and pages read
  the store, so they only ever see redacted text.

Text is cut (an error message, a tool result shown to a model) only through `clip`, which redacts first: a cut
inside a key leaves a prefix that no redactor downstream could recognise.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MIN_SECRET_LENGTH = 6  # shorter values ("1", "true") would scrub ordinary words
# Names of variables whose values are credentials. Suffixes cover litellm's provider keys (OPENAI_API_KEY,
# AZURE_AD_TOKEN, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, WATSONX_APIKEY, HF_TOKEN, ...).
# OTEL_EXPORTER_OTLP_HEADERS and the like carry `authorization=...` pairs.
_SECRET_NAME = re.compile(r"(?:_|^)(?:API_?KEY|KEY|KEY_ID|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|APIKEY|AUTH|HEADERS)$|SECRET|PASSWORD|TOKEN", re.I)
_NOT_SECRET_VALUES = frozenset({"true", "false", "none", "null"})


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name marks its value as a credential.

    Cached: `current()` asks it for every variable each time anything is redacted, and the names hardly change."""
    return bool(_SECRET_NAME.search(name)) and not name.upper().startswith("TOKENIZERS_")


def environment_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """name -> value of the credential variables in `environ` (default: this process's environment), sorted by name."""
    env = os.environ if environ is None else environ
    found = [
        (name, value)
        for name, value in env.items()
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH and value.strip().lower() not in _NOT_SECRET_VALUES
    ]
    return dict(sorted(found))


def encoded_forms(secret: str) -> set[str]:
    """Every form of `secret` that is replaced: verbatim, base64 (3 alphabets x 3 alignments), URL-encoded, JSON-escaped, hex."""
    raw = secret.encode("utf-8")
    forms = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret), json.dumps(secret)[1:-1], raw.hex(), raw.hex().upper()}
    for offset in range(3):
        # The key `offset` bytes into an encoded value: keep only the characters its own bytes decide.
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        first = -(-8 * offset // 6)
        last = 8 * (offset + len(raw)) // 6
        core = encoded[first:last]
        whole = [encoded, encoded.rstrip("=")] if offset == 0 else []
        for form in (*whole, core):
            forms.update({form, form.replace("+", "-").replace("/", "_")})
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


@dataclass(frozen=True)
class Redactor:
    """Replaces each known secret, in each of its encoded forms, by `[redacted:NAME]`."""

    secrets: Mapping[str, str]  # name -> value

    def __post_init__(self) -> None:
        names: dict[str, str] = {}
        for name, value in sorted(self.secrets.items()):
            for form in encoded_forms(value):
                names.setdefault(form, name)
        object.__setattr__(self, "_names", names)
        # Longest first, so a whole encoding wins over the core of the same key.
        pattern = "|".join(re.escape(form) for form in sorted(names, key=len, reverse=True))
        object.__setattr__(self, "_pattern", re.compile(pattern) if pattern else None)

    def text(self, text: str) -> str:
        """`text` with every secret form replaced."""
        pattern: re.Pattern[str] | None = self._pattern  # type: ignore[attr-defined]
        if pattern is None or not text:
            return text
        names: dict[str, str] = self._names  # type: ignore[attr-defined]
        return pattern.sub(lambda match: f"[redacted:{names[match.group(0)]}]", text)

    def value(self, value: Any) -> Any:
        """`value` with every string in it redacted: strings, bytes (as UTF-8), and lists, tuples and dicts of them."""
        if self._pattern is None:  # type: ignore[attr-defined]
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.text(value.decode("utf-8", errors="surrogateescape")).encode("utf-8", errors="surrogateescape")
        if isinstance(value, list | tuple):
            return type(value)(self.value(item) for item in value)
        if isinstance(value, dict):
            return {self.value(key): self.value(item) for key, item in value.items()}
        return value

    def found(self, value: Any) -> list[str]:
        """Names of the secrets found in `value` (any string in it, JSON-encoded first when it is not a string)."""
        pattern: re.Pattern[str] | None = self._pattern  # type: ignore[attr-defined]
        if pattern is None:
            return []
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        names: dict[str, str] = self._names  # type: ignore[attr-defined]
        return sorted({names[match.group(0)] for match in pattern.finditer(text)})


_registered: dict[str, str] = {}
_lock = threading.Lock()
_current: tuple[tuple[tuple[str, str], ...], Redactor] | None = None


def register_secret(name: str, value: str) -> None:
    """Treat `value` as a secret named `name` from now on (a `--header` value: the whole value, and its token after a scheme)."""
    value = value.strip()
    with _lock:
        if len(value) >= MIN_SECRET_LENGTH:
            _register(name, value)
        scheme, _, token = value.partition(" ")
        if token.strip() and scheme.isalpha() and len(token.strip()) >= MIN_SECRET_LENGTH:
            _register(f"{name} token", token.strip())


def _register(name: str, value: str) -> None:
    """`value` under `name`, or `name (2)`, ... when another value holds it: a second URL's password (`compare`'s
    candidate after its baseline) never unregisters the first's. The caller holds the lock."""
    key, count = name, 1
    while _registered.get(key, value) != value:
        count += 1
        key = f"{name} ({count})"
    _registered[key] = value


# Names (of a query parameter, an option, a variable set on a command line) whose values are credentials, compared
# lower-case with '-' as '_': these names, and any name ending in `_token`, `_secret`, `_password`, `_api_key`, ...
# (`x_auth_token`, `client_secret`), but not `max_tokens` or `tokenizer`.
CREDENTIAL_PARAMETERS = frozenset({"key", "token", "api_key", "apikey", "access_token", "secret", "password", "passwd", "auth", "sig", "signature"})
_CREDENTIAL_SUFFIX = re.compile(r"(?:^|_)(?:token|secret|password|passwd|api_?key|access_?key|credentials?)$")
_URL_IN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def _is_credential_word(word: str) -> bool:
    """Whether a parameter, option or variable name (`api_key`, `X-Auth-Token`, `--token`, `GITHUB_TOKEN`) names a credential."""
    normal = word.strip().lstrip("-").lower().replace("-", "_")
    return normal in CREDENTIAL_PARAMETERS or bool(_CREDENTIAL_SUFFIX.search(normal))


def url_secrets(url: str, label: str) -> dict[str, str]:
    """name -> value of the credentials written into `url`: its userinfo (user and password) and credential query parameters."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=False)
    except ValueError:  # a malformed URL is refused where it is used; it holds nothing we can name
        return {}
    found: dict[str, str] = {}
    if parts.password:
        found[f"{label} password"] = urllib.parse.unquote(parts.password)
    if parts.username:
        found[f"{label} user"] = urllib.parse.unquote(parts.username)
    for name, value in pairs:
        if _is_credential_word(name):
            found[f"{label} {name}"] = value
    return found


def command_secrets(argv: Iterable[str], label: str) -> dict[str, str]:
    """name -> value of the credentials in a command line: `--api-key X`, `--token=X`, `NAME=value` assignments whose
    name is a credential variable's (`env OPENAI_API_KEY=... server`, as `environment_secrets` reads names), and those
    of any URL among its arguments."""
    found: dict[str, str] = {}
    words = list(argv)
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option.startswith("-") and _is_credential_word(option):
            if equals:
                found[f"{label} {option}"] = value
            elif index + 1 < len(words) and not words[index + 1].startswith("-"):
                found[f"{label} {option}"] = words[index + 1]
        elif equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", option) and (_is_credential_word(option) or is_secret_name(option)):
            found[f"{label} {option}"] = value
        for url in _URL_IN_WORD.findall(word):
            found.update(url_secrets(url, label))
    return found


def register_url_secrets(url: str, label: str) -> None:
    """Treat the credentials written into `url` (`url_secrets`) as secrets from now on."""
    for name, value in url_secrets(url, label).items():
        register_secret(name, value)


def register_command_secrets(argv: Iterable[str], label: str) -> None:
    """Treat the credentials in a command line (`command_secrets`) as secrets from now on."""
    for name, value in command_secrets(argv, label).items():
        register_secret(name, value)


# This process's environment as last scanned (a copy of `os.environ`'s own mapping) and the credentials found in it.
_scanned: tuple[dict[Any, Any], dict[str, str]] | None = None


def _process_environment_secrets() -> dict[str, str]:
    """`environment_secrets()` of this process, scanned again only when `os.environ` changed: comparing its mapping
    with the copy kept is a C-level dict comparison, where a scan decodes and tests every variable (a redaction
    happens for every record written)."""
    global _scanned
    data = getattr(os.environ, "_data", None)  # os._Environ keeps the variables in a plain dict
    if not isinstance(data, dict):
        return environment_secrets()
    scanned = _scanned
    if scanned is not None and scanned[0] == data:
        return scanned[1]
    snapshot = dict(data)  # taken before the scan: a change meanwhile makes the next call scan again
    found = environment_secrets()
    _scanned = (snapshot, found)
    return found


def current() -> Redactor:
    """The redactor for this process's environment and registered secrets, rebuilt only when they changed."""
    global _current
    secrets = {**_process_environment_secrets(), **_registered}
    key = tuple(sorted(secrets.items()))
    with _lock:
        if _current is None or _current[0] != key:
            _current = (key, Redactor(secrets))
        return _current[1]


def redact(value: Any) -> Any:
    """`value` with every secret this process knows removed (see `Redactor.value`)."""
    return current().value(value)


CUT_MARK = "…"


def clip(text: str, limit: int) -> str:
    """`text` with every known secret redacted, then cut to at most `limit` characters, the cut marked by `CUT_MARK`.

    The one way evalcore shortens text that may hold a secret: redacting after the cut would miss a key cut in two.
    """
    redacted = current().text(text)
    if len(redacted) <= limit:
        return redacted
    return redacted[: max(0, limit - len(CUT_MARK))] + CUT_MARK


def without_secrets(environ: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """`environ` without its credential variables (but those in `keep`): the environment of a child that needs no key.

    A variable holding a registered secret (the `${VAR}` a `--header` value was read from) is left out too, whatever its name.
    """
    kept = set(keep)
    with _lock:
        registered = set(_registered.values())
    return {
        name: value for name, value in environ.items() if name in kept or (name not in environment_secrets({name: value}) and value.strip() not in registered)
    }


class RedactingStream:
    """A text stream (stdout, stderr: also a background job's log) that redacts each write before passing it on."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def redact_output_streams() -> None:
    """Route this process's stdout and stderr through the redactor (once)."""
    import sys

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))
