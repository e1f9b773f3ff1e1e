"""Why an outbound request failed, in a fixed vocabulary of our own words.

The engine's error class (REQ-ENG-006) is what a caller sees and what the
circuit counts; it says little to the operator: `request_failure` covers a
name that does not resolve, a refused connection and a refused address alike.
The failure kind is the finer word the operator's log (`engine_failed`),
`check` and the one-call commands use. It is chosen by our code from what
happened, never from the provider's text, so it may be logged.
"""

from __future__ import annotations

from typing import Final, Literal

FailureKind = Literal[
    "dns",
    "connect",
    "tls",
    "egress",
    "proxy",
    "reset",
    "timeout",
    "bound",
    "protocol",
    "status",
    "content",
]

# kind: (what happened, with {host} for the engine's host; where to look). The
# first part is also the sentence `rypsok search` prints for a failed engine.
FAILURE_KINDS: Final[dict[FailureKind, tuple[str, str]]] = {
    "dns": (
        "{host} did not resolve",
        "the machine's DNS, or the engine's base_url",
    ),
    "connect": (
        "the connection to {host} was refused or failed",
        "the network or firewall between rypsok and the engine, or the engine's base_url port",
    ),
    "tls": (
        "the TLS handshake with {host} failed",
        "the trust store (SSL_CERT_FILE, SSL_CERT_DIR) or the clock; a proxy that inspects TLS",
    ),
    "egress": (
        "the egress policy refused every address of {host}",
        "[egress] allow, or the engine's base_url (a private instance needs an allow rule)",
    ),
    "proxy": (
        "the proxy could not be reached or refused the tunnel to {host}",
        "[egress] proxy and the proxy's own rules",
    ),
    "reset": (
        "{host} closed the connection before its answer was complete",
        "the engine's health; a middlebox that cuts connections",
    ),
    "timeout": (
        "{host} did not answer in time",
        "[search] engine_timeout_ms, connect_timeout_ms and deadline_ms",
    ),
    "bound": (
        "the answer of {host} was larger than allowed",
        "results_per_engine; an instance that answers with whole pages",
    ),
    "protocol": (
        "the answer of {host} was not valid HTTP",
        "the engine's base_url (is it the search service?), a proxy in between",
    ),
    "status": (
        "{host} answered with a status that is a failure",
        "the engine's key or plan, its rate, the engine's base_url; engine_failed's class",
    ),
    "content": (
        "the answer of {host} could not be read as results",
        "the engine's base_url (an error or login page in front of it), its output formats",
    ),
}


def failure_sentence(kind: FailureKind, host: str) -> str:
    """What happened, for a person: `wikipedia: en.wikipedia.org did not resolve`."""
    return FAILURE_KINDS[kind][0].format(host=host)


__all__ = ["FAILURE_KINDS", "FailureKind", "failure_sentence"]
