"""The validated configuration: immutable settings for every table.

Built only by `rypsok.core.config.validate`; every value is in range and
every secret already resolved (or its absence recorded).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from rypsok.core import limits
from rypsok.core.config.admission import CATEGORIES, Admission, Endpoint
from rypsok.core.config.secrets import Secret
from rypsok.core.model import DisabledReason
from rypsok.core.net.proxy import Proxy as Proxy  # its home is net/; here for readers
from rypsok.core.net.rules import Rule

# Settings with a closed set of values: the type is the set, and the validator offers the
# words in this order (its messages list them so).
SafeSearch = Literal["off", "moderate", "strict"]
SecretDetection = Literal["off", "warn", "mask", "refuse"]
LogLevel = Literal["error", "warn", "info", "debug"]
StoreBackend = Literal["memory", "redis"]
SAFE_SEARCH: Final[tuple[SafeSearch, ...]] = get_args(SafeSearch)
SECRET_DETECTION: Final[tuple[SecretDetection, ...]] = get_args(SecretDetection)
LOG_LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)
STORE_BACKENDS: Final[tuple[StoreBackend, ...]] = get_args(StoreBackend)


@dataclass(frozen=True, slots=True)
class Caller:
    id: str
    token: Secret
    token_env: str | None  # the variable's name, shown only when it is a variable name
    world_readable: bool  # the token file can be read by everyone


def host_port(host: str, port: int) -> str:
    """host:port, an IPv6 address in brackets: how a bind is written and shown."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# The tools an OAuth scope may open, in the order the configuration names their keys.
OAUTH_TOOLS: Final = ("web_search", "web_fetch", "engine_status")
OAuthCallerClaim = Literal["sub", "client_id"]
OAUTH_CALLER_CLAIMS: Final[tuple[OAuthCallerClaim, ...]] = get_args(OAuthCallerClaim)


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """[service.http.oauth]: rypsok as an OAuth resource server of one issuer."""

    resource: str  # this MCP endpoint's canonical URI: the audience a token must name
    issuer: str
    jwks_uri: str  # "": read from the issuer's metadata
    introspection_endpoint: str  # "": read from the issuer's metadata (with a client_id)
    client_id: str  # "": opaque tokens are not introspected
    client_secret: Secret | None
    client_secret_env: str | None  # the variable's name, for messages
    algorithms: tuple[str, ...]
    caller_claim: OAuthCallerClaim
    scopes: tuple[tuple[str, str], ...]  # (tool, scope); "" opens the tool to any token
    leeway_s: int
    keys_refresh_s: int
    keys_max_age_s: int
    introspection_cache_s: int
    timeout_ms: int

    def scope_for(self, tool: str) -> str:
        return dict(self.scopes).get(tool, "")

    # The configuration's names for the three scopes.
    @property
    def search_scope(self) -> str:
        return self.scope_for("web_search")

    @property
    def fetch_scope(self) -> str:
        return self.scope_for("web_fetch")

    @property
    def status_scope(self) -> str:
        return self.scope_for("engine_status")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    bind_host: str
    bind_port: int
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    legacy_revisions: bool
    # The lane past the SDK's transport and its session hooks (protocol/sdk_private.py).
    fast_lane: bool
    max_connections: int
    max_request_bytes: int
    idle_timeout_s: int
    max_streams: int
    max_sessions: int
    request_timeout_s: int
    callers: tuple[Caller, ...]
    oauth: OAuthSettings | None = None

    @property
    def bind(self) -> str:
        return host_port(self.bind_host, self.bind_port)


@dataclass(frozen=True, slots=True)
class MetricsSettings:
    """[service.metrics]: /metrics, /healthz and /readyz on a listener of their own."""

    bind_host: str
    bind_port: int
    token: Secret | None  # a scrape presents it as a bearer token; None: none asked
    token_env: str | None
    per_caller: bool  # calls counted per caller too (LIM-T1 callers at most)

    @property
    def bind(self) -> str:
        return host_port(self.bind_host, self.bind_port)


@dataclass(frozen=True, slots=True)
class ServiceSettings:
    structured_content: bool
    user_agent_contact: str
    shutdown_ms: int
    http: HttpSettings
    metrics: MetricsSettings | None = None


@dataclass(frozen=True, slots=True)
class SearchSettings:
    languages: tuple[str, ...]
    region: str
    safe_search: SafeSearch
    max_results: int
    max_results_ceiling: int
    query_max_chars: int
    deadline_ms: int
    engine_timeout_ms: int
    connect_timeout_ms: int
    reserve_ms: int
    engines_per_request: int
    results_per_engine: int
    snippet_max_chars: int
    title_max_chars: int
    drop_flagged_results: bool
    engine_attribution: bool


@dataclass(frozen=True, slots=True)
class FetchSettings:
    max_chars: int
    max_chars_ceiling: int
    max_bytes: int
    deadline_ms: int
    connect_timeout_ms: int
    max_redirects: int
    ports: tuple[int, ...]
    robots_txt: bool
    follow_cross_host_redirects: bool
    strict_mode: bool
    # What is kept of a fetched page for the next part (continuation.py); ttl 0: nothing.
    continuation_ttl_s: int
    continuation_max_entries: int
    continuation_max_bytes: int
    # PDFs (fetch/pdf/): read at all, and the reader's bounds.
    pdf: bool
    pdf_max_pages: int
    pdf_max_chars: int
    pdf_memory_mib: int


@dataclass(frozen=True, slots=True)
class EgressSettings:
    allow_http: bool
    allow: tuple[Rule, ...]
    deny: tuple[Rule, ...]
    proxy: Proxy | None


@dataclass(frozen=True, slots=True)
class LimitsSettings:
    outbound_in_flight: int
    per_engine_in_flight: int
    fetches_in_flight: int
    parsing_in_flight: int
    web_search_per_minute: int
    web_fetch_per_minute: int
    engine_status_per_minute: int
    strict_mode_urls: int
    robots_cache_entries: int


@dataclass(frozen=True, slots=True)
class ResilienceSettings:
    failures_to_open: int
    first_cooldown_s: int
    max_cooldown_s: int


@dataclass(frozen=True, slots=True)
class PrivacySettings:
    secret_detection: SecretDetection


@dataclass(frozen=True, slots=True)
class LoggingSettings:
    level: LogLevel
    log_queries: bool


@dataclass(frozen=True, slots=True)
class StatusSettings:
    enabled: bool


@dataclass(frozen=True, slots=True)
class CacheSettings:
    enabled: bool
    ttl_s: int
    max_entries: int
    max_entry_bytes: int


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """Where replicas keep what they share ([store]). The URL may carry a password: it is
    a secret by reference, and only whether it came from a variable or a file is shown."""

    backend: StoreBackend
    url: Secret | None  # None with backend "memory"
    url_env: str | None  # the variable's name, shown by check
    key_prefix: str
    replicas: int
    timeout_ms: int
    max_connections: int


# The default: this process's memory, with nothing to install or reach.
MEMORY_STORE: Final = StoreSettings(
    "memory",
    None,
    None,
    "rypsok:",
    limits.default("LIM-D2"),
    limits.default("LIM-D1"),
    limits.default("LIM-D3"),
)


@dataclass(frozen=True, slots=True)
class ScrapingSettings:
    enabled: bool


@dataclass(frozen=True, slots=True)
class EngineSettings:
    id: str
    admission: Admission
    enabled: bool
    categories: tuple[str, ...]
    preference: int
    api_key_env: str | None
    api_key_file_set: bool  # the path itself is never kept for display
    endpoint: Endpoint | None
    base_url: str | None
    credential: Secret | None
    credential_problem: str | None  # why a keyed engine has no credential
    # An operator's instance (admission.operator_instance): the variable its base_url
    # came from, why it has none, and the operator's own rate and concurrency.
    base_url_env: str | None = None
    base_url_problem: str | None = None
    rate_per_minute: int | None = None
    concurrency: int | None = None

    @property
    def driver(self) -> str:
        return self.admission.driver

    @property
    def active(self) -> bool:
        return self.enabled and self.inactive_reason is None

    @property
    def inactive_reason(self) -> DisabledReason | None:
        """Why the engine is never asked, or None when it is active."""
        if not self.enabled:
            return "disabled"
        if self.admission.keyed and self.credential is None:
            return "no_credential"
        if self.admission.operator_instance and self.base_url is None:
            return "no_base_url"
        return None

    @property
    def rate(self) -> tuple[int, int, int]:
        """(requests per minute, burst, requests in flight) the engine's limiter admits:
        the record's, or the operator's for an instance of their own."""
        a = self.admission
        per_minute = self.rate_per_minute or a.rate_per_minute
        return per_minute, min(a.burst, per_minute), self.concurrency or a.concurrency


@dataclass(frozen=True, slots=True)
class Config:
    source: str  # how the file was found, for check's first line
    service: ServiceSettings
    search: SearchSettings
    fetch: FetchSettings
    egress: EgressSettings
    limits: LimitsSettings
    resilience: ResilienceSettings
    privacy: PrivacySettings
    logging: LoggingSettings
    status: StatusSettings
    cache: CacheSettings
    scraping: ScrapingSettings
    engines: tuple[EngineSettings, ...]  # in identifier order
    store: StoreSettings = field(default_factory=lambda: MEMORY_STORE)

    def time_ranges_served(self) -> bool:
        """Whether an active engine honours time ranges: only then is time_range a
        parameter of web_search (issue 20)."""
        return any(e.active and e.admission.time_ranges for e in self.engines)

    def categories_served(self) -> tuple[str, ...]:
        """Categories that an active engine serves, in the book's order."""
        served = {c for e in self.engines if e.active for c in e.categories}
        return tuple(c for c in CATEGORIES if c in served)
