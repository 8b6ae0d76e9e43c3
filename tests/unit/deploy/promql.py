"""The alert rules and the dashboard read as data: their PromQL expressions and the metric names in them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
ALERTS_TEST = ROOT / "deploy" / "prometheus" / "alerts_test.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "ocrgw.json"

#: What Grafana puts in an expression before it reaches Prometheus, with a value of the right kind.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__range": "1h", "$__interval": "1m", "$model": ".*"}

_KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "inf", "nan",
}  # fmt: skip
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPINGS = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def alert_expressions() -> dict[str, str]:
    """Each alert's name and expression."""
    rules = yaml.safe_load(ALERTS.read_text())
    return {rule["alert"]: rule["expr"] for group in rules["groups"] for rule in group["rules"]}


def dashboard_expressions() -> dict[str, str]:
    """Each query of the dashboard (by panel title and ref id), Grafana's variables given values."""
    dashboard = json.loads(DASHBOARD.read_text())
    found = {}
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            found[f"{panel['title']} {target['refId']}"] = with_grafana_values(target["expr"])
    return found


def dashboard_variable_metrics() -> set[str]:
    """The metrics the dashboard's variables take their values from (``label_values(metric, label)``)."""
    dashboard = json.loads(DASHBOARD.read_text())
    found = set()
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        text = query.get("query", "") if isinstance(query, dict) else str(query or "")
        found |= set(re.findall(r"label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,", text))
    return found


def with_grafana_values(expr: str) -> str:
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    return expr


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects: what is left once strings, matchers, ranges, groupings,
    function calls, keywords and numbers are taken out."""
    text = _STRINGS.sub(" ", expr)
    text = _MATCHERS.sub(" ", text)
    text = _RANGES.sub(" ", text)
    text = _GROUPINGS.sub(" ", text)
    names = set()
    for found in _NAME.finditer(text):
        following = text[found.end() :].lstrip()
        if following.startswith("(") or found.group().lower() in _KEYWORDS:
            continue  # a function, an aggregation, or a keyword
        if found.start() > 0 and (text[found.start() - 1].isdigit() or text[found.start() - 1] == "."):
            continue  # the exponent or unit of a number (1e3)
        names.add(found.group())
    return names
