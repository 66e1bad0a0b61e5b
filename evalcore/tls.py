"""TLS verification whose CA bundle is read at the first TLS connection, not when an HTTP client is made.

An HTTP client is made with its SSL context, and reading a CA bundle (certifi's: some 150 certificates)
costs 15-30 ms of CPU. A run makes an HTTP client for the server under test and one for its
model calls, and on loopback (the reference server, a local model endpoint) neither ever opens a TLS
connection. `verifying_context` gives the context `ssl.create_default_context(cafile=..., capath=...)`
would, with the same settings, except that the bundle is loaded just before the first handshake.
"""

from __future__ import annotations

import functools
import os
import ssl
import sys
import threading
from collections.abc import Mapping
from typing import Any

import certifi


class _LazyVerifyingContext(ssl.SSLContext):
    """A client context that verifies certificates and host names against `cafile`/`capath`, loaded on first use."""

    _lazy_lock: threading.Lock
    _lazy_locations: tuple[str | None, str | None] | None

    def _load_locations(self) -> None:
        with self._lazy_lock:
            if self._lazy_locations is not None:
                cafile, capath = self._lazy_locations
                self.load_verify_locations(cafile, capath)
                self._lazy_locations = None

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._load_locations()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._load_locations()
        return super().wrap_bio(*args, **kwargs)

    def get_ca_certs(self, binary_form: bool = False) -> Any:
        self._load_locations()
        return super().get_ca_certs(binary_form)

    def cert_store_stats(self) -> dict[str, int]:
        self._load_locations()
        return super().cert_store_stats()


@functools.cache
def _context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    context = _LazyVerifyingContext(ssl.PROTOCOL_TLS_CLIENT)
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = True
    context._lazy_lock = threading.Lock()
    context._lazy_locations = (cafile, capath)
    keylog = os.environ.get("SSLKEYLOGFILE")  # as ssl.create_default_context does
    if keylog and not sys.flags.ignore_environment:
        context.keylog_filename = keylog
    return context


def verifying_context(*, trust_env: bool = False, environ: Mapping[str, str] | None = None) -> ssl.SSLContext:
    """The context httpx would build for `verify=True` (certifi's bundle, or with `trust_env` the bundle that
    `SSL_CERT_FILE` or `SSL_CERT_DIR` names), built once per bundle and loaded at its first handshake."""
    environ = os.environ if environ is None else environ
    if trust_env and environ.get("SSL_CERT_FILE"):
        return _context(environ["SSL_CERT_FILE"], None)
    if trust_env and environ.get("SSL_CERT_DIR"):
        return _context(None, environ["SSL_CERT_DIR"])
    return _context(certifi.where(), None)
