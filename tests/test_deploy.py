"""deploy/ (issue 25) stays consistent with the code: the Grafana dashboard asks only for metrics
the process exports, and Prometheus scrapes the ports compose.yaml serves them on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client.metrics import MetricWrapperBase

from core.telemetry import metrics

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = json.loads((ROOT / "deploy/grafana/dashboards/llm-council.json").read_text(encoding="utf-8"))
PROMETHEUS = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text(encoding="utf-8"))
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
SUFFIXES = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count")}


def exported_names() -> set[str]:
    names = set()
    for attribute in metrics.__annotations__:  # the metrics are made on first use (core/telemetry/metrics.py)
        metric = getattr(metrics, attribute)
        if isinstance(metric, MetricWrapperBase):
            names.update(metric._name + suffix for suffix in SUFFIXES[metric._type])
    return names


def test_every_metric_the_dashboard_asks_for_is_exported():
    exprs = [t["expr"] for panel in DASHBOARD["panels"] for t in panel["targets"]]
    exprs += [v["definition"] for v in DASHBOARD["templating"]["list"] if "definition" in v]
    asked = {name for expr in exprs for name in re.findall(r"\bcouncil_[a-z_]+", expr)}
    assert asked and asked <= exported_names(), asked - exported_names()
    # The list: councils, model calls, tokens, cost, durations, first token, gauges, writes.
    assert {
        "council_councils_finished_total",
        "council_model_calls_total",
        "council_model_tokens_total",
        "council_model_cost_usd_total",
        "council_duration_seconds_bucket",
        "council_stage_duration_seconds_bucket",
        "council_model_call_duration_seconds_bucket",
        "council_first_token_seconds_bucket",
        "council_councils_running",
        "council_queue_depth",
        "council_slots_in_use",
        "council_platform_writes_total",
    } <= asked


def test_prometheus_scrapes_the_ports_compose_serves_metrics_on():
    services = COMPOSE["services"]
    jobs = {job["job_name"]: job for job in PROMETHEUS["scrape_configs"]}
    static = jobs["council-bot"]["static_configs"][0]["targets"]
    bots = [n for n, s in services.items() if s.get("command", [""])[:3] == ["council", "slack", "--http"]]
    assert sorted(static) == sorted(f"{name}:{services[name]['command'][-1]}" for name in bots)
    for job, service in (("council-worker", "worker"), ("council-discord", "discord")):
        [dns] = jobs[job]["dns_sd_configs"]
        command = services[service]["command"]
        assert dns["names"] == [service] and str(dns["port"]) == command[command.index("--metrics-port") + 1]
    monitoring = {n for n, s in services.items() if "monitoring" in s.get("profiles", [])}
    assert monitoring == {"prometheus", "grafana"}
