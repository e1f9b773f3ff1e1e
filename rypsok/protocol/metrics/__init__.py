"""The operator's listener: Prometheus metrics, liveness and readiness ([service.metrics]).

- exposition: the text format, names and escaping
- collect: what a scrape shows, from the counters and the running service
- listener: /metrics, /healthz, /readyz on a bind of their own
"""
