"""deploy/prometheus/alerts.yml: Prometheus loads it (promtool check config), every rule fires on the
series that should fire it and not on its healthy neighbour (promtool test rules), it asks only for
metrics the processes export, and each runbook link lands on a section of docs/operating-faults.md.
promtool is Debian's `prometheus` package (.ci/run installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.optional import needs
from tests.test_deploy import exported_names

ROOT = Path(__file__).resolve().parent.parent
PROMETHEUS = ROOT / "deploy/prometheus"
RULES = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text(encoding="utf-8"))
PROMTOOL = shutil.which("promtool")
needs_promtool = needs(None if PROMTOOL else "promtool is not installed (apt-get install prometheus)")


def rules() -> list[dict]:
    return [rule for group in RULES["groups"] for rule in group["rules"]]


def promtool(*args: str) -> str:
    assert PROMTOOL is not None
    done = subprocess.run([PROMTOOL, *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@needs_promtool
def test_prometheus_loads_the_rules_named_in_its_configuration():
    out = promtool("check", "config", "prometheus.yml")
    assert "1 rule files found" in out and f"{len(rules())} rules found" in out, out


@needs_promtool
def test_every_rule_fires_when_it_should_and_only_then():
    out = promtool("test", "rules", "alerts_test.yml")
    assert "SUCCESS" in out, out
    tested = set(re.findall(r"alertname: (\w+)", (PROMETHEUS / "alerts_test.yml").read_text(encoding="utf-8")))
    assert tested == {rule["alert"] for rule in rules()}  # none left untested


def test_the_rules_cover_what_an_operator_is_woken_for():
    assert {rule["alert"] for rule in rules()} >= {
        "CouncilsFailing",
        "CouncilProviderErrors",
        "CouncilQueueNotDraining",
        "CouncilProcessNotReady",
        "CouncilLocalRuntimeCrashLoop",
        "CouncilWorkspaceNearBudget",
    }


def test_the_rules_ask_only_for_exported_metrics():
    asked = {name for rule in rules() for name in re.findall(r"\bcouncil_[a-z_]+", rule["expr"])}
    assert asked and asked <= exported_names(), asked - exported_names()


def test_each_runbook_link_is_a_section_of_the_faults_page():
    page = (ROOT / "docs/operating-faults.md").read_text(encoding="utf-8")
    anchors = {slug(line.lstrip("#").strip()) for line in page.splitlines() if line.startswith("## ")}
    for rule in rules():
        target, _, anchor = rule["annotations"]["runbook_url"].partition("#")
        assert target == "docs/operating-faults.md" and anchor in anchors, (rule["alert"], anchor, sorted(anchors))


def slug(title: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) makes of a heading."""
    text = re.sub(r"[^\w\s-]", "", title.lower())
    return re.sub(r"[-\s]+", "-", text).strip("-")
