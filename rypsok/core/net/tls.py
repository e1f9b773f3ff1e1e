"""The trust store of every outbound HTTPS connection, built once at start.

The operating system's roots, or those named by SSL_CERT_FILE / SSL_CERT_DIR
(and then only those). A context that trusts nothing stops the process at
start rather than failing every fetch later.
"""

from __future__ import annotations

import os
import ssl
import threading
from collections.abc import Mapping


class TrustStoreError(Exception):
    """No usable CA certificate; the message is ours and names no path."""


def _has_entries(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(entry.is_file() for entry in entries)
    except OSError:
        return False


def client_context(env: Mapping[str, str] | None = None) -> ssl.SSLContext:
    """A verifying TLS client context, or TrustStoreError."""
    env = os.environ if env is None else env
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    cafile = env.get("SSL_CERT_FILE") or None
    capath = env.get("SSL_CERT_DIR") or None
    try:
        if cafile is not None or capath is not None:
            if cafile is not None:
                if not os.path.isfile(cafile):
                    raise TrustStoreError("SSL_CERT_FILE names a file that does not exist")
                context.load_verify_locations(cafile=cafile)
            lazy_dirs = [d for d in (capath or "").split(os.pathsep) if d and _has_entries(d)]
            for directory in lazy_dirs:
                context.load_verify_locations(capath=directory)
            if context.cert_store_stats()["x509_ca"] == 0 and not lazy_dirs:
                raise TrustStoreError(
                    "no CA certificate could be loaded from SSL_CERT_FILE or SSL_CERT_DIR"
                )
            return context
        defaults = ssl.get_default_verify_paths()
        if defaults.cafile:
            context.load_verify_locations(cafile=defaults.cafile)
        lazy = bool(defaults.capath) and _has_entries(defaults.capath)
        if lazy:
            context.load_verify_locations(capath=defaults.capath)
    except ssl.SSLError:
        raise TrustStoreError("the CA certificates could not be loaded") from None
    except OSError:
        raise TrustStoreError("the CA certificates could not be read") from None
    if context.cert_store_stats()["x509_ca"] == 0 and not lazy:
        raise TrustStoreError("the system has no CA certificate")
    return context


class TrustStoreBuild:
    """client_context(env), built in a thread from the moment serve starts.

    Reading the CA bundle takes about 35 ms and lets go of the interpreter lock, so it
    runs while the configuration and the SDK are imported instead of after them. The
    outcome is taken, and a failure reported, at the same point of start-up as before.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = dict(env)
        self._context: ssl.SSLContext | None = None
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._build, name="rypsok-trust-store")
        self._thread.start()

    def _build(self) -> None:
        try:
            self._context = client_context(self._env)
        except Exception as exc:  # handed to the thread that asks for the context
            self._error = exc

    def result(self) -> ssl.SSLContext:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._context is not None
        return self._context
