"""An upstream over TLS: verified against the trust store httpx used, ``SSL_CERT_FILE`` first."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from slimtools.gateway import create_app
from slimtools.gateway._upstream import trust_store
from tests.gateway.gateway_upstream import FakeUpstream, create_upstream, serve


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[str, str]:
    """A key and a self-signed certificate for ``localhost`` (no store trusts it)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make a certificate (Debian's openssl package)")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    return str(key), str(cert)


def test_an_upstream_whose_ca_ssl_cert_file_names_is_reached(
    certificate: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A company's own CA, named by ``SSL_CERT_FILE``, verifies the upstream."""
    monkeypatch.setenv("SSL_CERT_FILE", certificate[1])
    with (
        serve(create_upstream(FakeUpstream()), tls=certificate) as upstream,
        serve(create_app(upstream)) as gateway,
    ):
        answer = httpx.get(gateway + "/v1/models")
    assert answer.status_code == 200
    assert answer.json()["path"] == "/v1/models"


def test_an_upstream_no_store_trusts_is_refused_with_its_cause(
    certificate: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without it the certificate is not trusted: 502 naming a failed TLS handshake."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with (
        serve(create_upstream(FakeUpstream()), tls=certificate) as upstream,
        serve(create_app(upstream)) as gateway,
    ):
        answer = httpx.get(gateway + "/v1/models")
    assert answer.status_code == 502
    assert "TLS handshake failed" in answer.json()["error"]["message"]


def test_without_ssl_cert_file_the_store_is_certifis_bundle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the system has no store (a python.org Python on macOS), certifi's verifies."""
    import certifi

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    store = trust_store()
    bundle = ssl.create_default_context(cafile=certifi.where())
    assert store.cert_store_stats()["x509_ca"] == bundle.cert_store_stats()["x509_ca"] > 0
    assert store.verify_mode == ssl.CERT_REQUIRED
    assert store.check_hostname
