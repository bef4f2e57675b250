"""deploy/kubernetes/: every manifest is valid against Kubernetes' own schemas (kubernetes-validate,
offline: the schemas are in the package, strict: an unknown field fails), and says what the processes
need: intake and worker Deployments probed on /health and /ready, a termination grace that leaves the
shutdown grace room for the handover, a PodDisruptionBudget for each."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from core.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "deploy/kubernetes"
KUBERNETES_VERSION = "1.30.0"
HANDOVER_S = 5  # beyond COUNCIL_SHUTDOWN_GRACE_S: the handover, closing the platform and the database


def documents() -> list[tuple[str, dict]]:
    found = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        found += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
    return found


def resources() -> list[tuple[str, dict]]:
    return [(name, doc) for name, doc in documents() if doc["kind"] != "Kustomization"]


def of_kind(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for _, doc in resources() if doc["kind"] == kind}


@pytest.mark.parametrize("name,resource", resources(), ids=lambda v: v if isinstance(v, str) else v["kind"])
def test_each_manifest_is_valid_against_the_kubernetes_schemas(name, resource):
    kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)


def test_kustomization_lists_every_manifest():
    [kustomization] = [doc for _, doc in documents() if doc["kind"] == "Kustomization"]
    listed = set(kustomization["resources"])
    assert listed == {p.name for p in MANIFESTS.glob("*.yaml")} - {"kustomization.yaml"}


def _container(deployment: dict) -> dict:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return container


def test_intake_and_workers_run_the_serving_commands_under_an_init():
    deployments = of_kind("Deployment")
    commands = {name: _container(d)["command"] for name, d in deployments.items()}
    assert commands["llm-council-intake"][:6] == ["/usr/bin/tini", "--", "council", "slack", "--http", "--no-worker"]
    assert commands["llm-council-worker"][:4] == ["/usr/bin/tini", "--", "council", "worker"]
    for deployment in deployments.values():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_probes_ask_health_for_liveness_and_ready_for_readiness_on_a_served_port():
    for name, deployment in of_kind("Deployment").items():
        container = _container(deployment)
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        for probe, path in (("livenessProbe", "/health"), ("readinessProbe", "/ready"), ("startupProbe", "/health")):
            get = container[probe]["httpGet"]
            assert get["path"] == path and get["port"] in ports, (name, probe)
        port = ports[container["readinessProbe"]["httpGet"]["port"]]
        command = container["command"]
        served = int(command[command.index("--port") + 1]) if "--port" in command else None
        metrics = int(command[command.index("--metrics-port") + 1]) if "--metrics-port" in command else None
        assert port in (served, metrics), (name, port)


def test_the_termination_grace_covers_the_shutdown_grace_and_the_handover():
    [config] = of_kind("ConfigMap").values()
    grace = Settings(_env_file=None, **config["data"]).serving.shutdown_grace_s
    for name, deployment in of_kind("Deployment").items():
        termination = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert grace + HANDOVER_S <= termination, (name, grace, termination)
        sources = {s.get("configMapRef", {}).get("name") for s in _container(deployment)["envFrom"]}
        assert config["metadata"]["name"] in sources, name


def test_a_disruption_budget_keeps_each_deployment_serving():
    budgets = of_kind("PodDisruptionBudget").values()
    for name, deployment in of_kind("Deployment").items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        covering = [b for b in budgets if b["spec"]["selector"]["matchLabels"].items() <= labels.items()]
        assert len(covering) == 1, name
        assert covering[0]["spec"].get("maxUnavailable") == 1 or covering[0]["spec"].get("minAvailable"), name
