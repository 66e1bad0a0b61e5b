"""TLS verification of evalcore's HTTP clients (aiohttp): as httpx's default, with the CA bundle read at the first handshake."""

from __future__ import annotations

import asyncio
import datetime
import http.server
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from evalcore.tls import verifying_context


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


class _Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def https_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on loopback with a self-signed certificate for localhost: its URL and the certificate."""
    cert, key = _self_signed(tmp_path_factory.mktemp("tls"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{server.server_address[1]}/", cert
    finally:
        server.shutdown()
        server.server_close()


def _get(url: str, verify: ssl.SSLContext) -> int | str:
    async def go() -> int | str:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=verify)) as client:
            try:
                async with client.get(url, timeout=aiohttp.ClientTimeout(total=30)) as response:
                    return response.status
            except aiohttp.ClientConnectorError as exc:
                return str(exc)

    return asyncio.run(go())


def test_an_unknown_certificate_is_refused(https_server: tuple[str, Path]) -> None:
    url, cert = https_server
    assert "CERTIFICATE_VERIFY_FAILED" in str(_get(url, verifying_context()))
    # SSL_CERT_FILE counts only where httpx would read it (trust_env, the model clients)
    assert "CERTIFICATE_VERIFY_FAILED" in str(_get(url, verifying_context(environ={"SSL_CERT_FILE": str(cert)})))


def test_the_bundle_is_read_at_the_first_handshake_and_trusted(https_server: tuple[str, Path]) -> None:
    url, cert = https_server
    context = verifying_context(trust_env=True, environ={"SSL_CERT_FILE": str(cert)})
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert ssl.SSLContext.cert_store_stats(context)["x509"] == 0  # nothing read yet
    assert _get(url, context) == 200
    assert ssl.SSLContext.cert_store_stats(context)["x509_ca"] == 1
    assert verifying_context(trust_env=True, environ={"SSL_CERT_FILE": str(cert)}) is context  # one per bundle


def test_the_openai_wire_route_names_a_refused_certificate_at_once(https_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose certificate no bundle trusts: a connection error that says so, not a timeout after the whole
    timeout (the SDK's aiohttp transport answered that way, which is why the route keeps its httpx one)."""
    from evalcore.models import openai_route
    from evalcore.models.provider_errors import APIConnectionError
    from evalcore.models.types import ModelSpec

    url, _ = https_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    route = openai_route.route_of(ModelSpec("hosted_vllm/m", api_base=f"{url}v1"), {})
    assert route is not None

    async def call() -> dict:
        try:
            return await openai_route.send(route, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, 30)
        finally:
            await openai_route.aclose()

    with pytest.raises(APIConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(call())
