"""Every metric the dashboard and the alert rules read is one ocrgw serves, or an external one named here."""

from __future__ import annotations

import pytest

from observability import metrics
from tests.unit.deploy.promql import (
    alert_expressions,
    dashboard_expressions,
    dashboard_variable_metrics,
    metric_names,
)

#: The metrics read that ocrgw does not serve, and what serves them.
EXTERNAL = {
    "up": "Prometheus itself, for every target it scrapes",
    "redis_memory_used_bytes": "redis_exporter (https://github.com/oliver006/redis_exporter)",
    "redis_memory_max_bytes": "redis_exporter: maxmemory, 0 when none is set",
}


def served_names() -> set[str]:
    """Every sample name ocrgw's metrics are exposed under (a histogram's buckets, sum and count)."""
    names = set()
    for metric in metrics.ALL:
        if metric.kind == "histogram":
            names |= {f"{metric.name}_bucket", f"{metric.name}_sum", f"{metric.name}_count"}
        else:
            names.add(metric.name)
    return names


def test_the_names_are_found_in_an_expression():
    expr = (
        'histogram_quantile(0.95, sum by (model, le) (rate(ocrgw_queue_wait_seconds_bucket{model=~"a|b"}[5m]))) > 1e3 '
        'unless on (model) up{job="x"} offset 5m or time() - max(ocrgw_jobs_sample_timestamp_seconds) > bool 10'
    )

    assert metric_names(expr) == {"ocrgw_queue_wait_seconds_bucket", "up", "ocrgw_jobs_sample_timestamp_seconds"}


@pytest.mark.parametrize(
    ("where", "expressions"), [("alerts", alert_expressions), ("dashboard", dashboard_expressions)]
)
def test_every_metric_read_is_served_or_external(where, expressions):
    known = served_names() | set(EXTERNAL)
    read = {name: query for query, expr in expressions().items() for name in metric_names(expr)}

    unknown = {name: query for name, query in read.items() if name not in known}

    assert read, f"no metric found in the {where}"
    assert unknown == {}, f"{where} reads metrics nobody serves"


def test_the_dashboard_s_variables_read_served_metrics():
    assert dashboard_variable_metrics() <= served_names()
    assert dashboard_variable_metrics()


def test_the_dashboard_shows_the_new_metrics_and_the_alerts_use_them():
    dashboard = set().union(*map(metric_names, dashboard_expressions().values()))
    alerts = set().union(*map(metric_names, alert_expressions().values()))

    for name in (
        "ocrgw_http_requests_total",
        "ocrgw_http_request_duration_seconds_bucket",
        "ocrgw_queue_wait_seconds_bucket",
        "ocrgw_webhook_delivery_lag_seconds_bucket",
        "ocrgw_workers",
        "redis_memory_used_bytes",
    ):
        assert name in dashboard, name
    for name in ("ocrgw_queue_wait_seconds_bucket", "ocrgw_workers", "ocrgw_webhook_attempts_total"):
        assert name in alerts, name
