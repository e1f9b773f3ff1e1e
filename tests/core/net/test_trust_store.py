"""The TLS trust store is built at start; a broken one stops serve (Deployment page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trustme

from rypsok.core.net.tls import TrustStoreBuild, TrustStoreError, client_context
from tests.support.run import check, clean_env, cli


def test_system_store_loads() -> None:
    assert client_context({}).verify_mode.name == "CERT_REQUIRED"


def test_ssl_cert_file_naming_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TrustStoreError):
        client_context({"SSL_CERT_FILE": str(tmp_path / "absent.pem")})


def test_ssl_cert_file_with_no_certificate_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pem"
    empty.write_text("")
    with pytest.raises(TrustStoreError):
        client_context({"SSL_CERT_FILE": str(empty)})


def test_ssl_cert_file_replaces_the_system_store(tmp_path: Path) -> None:
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    context = client_context({"SSL_CERT_FILE": str(bundle)})
    assert context.cert_store_stats()["x509_ca"] == 1


def test_trust_store_built_in_a_thread_gives_the_same_context_and_errors(tmp_path: Path) -> None:
    # serve begins the build before its imports; what it hands back is client_context's.
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    built = TrustStoreBuild({"SSL_CERT_FILE": str(bundle)}).result()
    assert (
        built.cert_store_stats()
        == client_context({"SSL_CERT_FILE": str(bundle)}).cert_store_stats()
    )
    assert built.verify_mode.name == "CERT_REQUIRED" and built.check_hostname
    failed = TrustStoreBuild({"SSL_CERT_FILE": str(tmp_path / "absent.pem")})
    with pytest.raises(TrustStoreError, match="does not exist"):
        failed.result()


def test_serve_exits_1_when_the_http_client_cannot_be_built(tmp_path: Path) -> None:
    run = cli("serve", env=clean_env(SSL_CERT_FILE=str(tmp_path / "absent.pem")))
    assert run.code == 1 and run.out == ""
    events = [json.loads(line) for line in run.err.splitlines()]
    assert any("the HTTP client could not be built" in str(e.get("message")) for e in events)
    assert str(tmp_path) not in run.err


def test_check_reports_the_broken_trust_store_as_an_error(tmp_path: Path) -> None:
    run = check(None, clean_env(SSL_CERT_FILE=str(tmp_path / "absent.pem")))
    assert run.code == 1
    assert (
        "rypsok: error: trust store: the HTTP client could not be built: SSL_CERT_FILE "
        "names a file that does not exist"
    ) in run.lines
