"""The deployment files can not run here (no Databricks workspace, cluster or Docker engine), so
their structure is checked against what does run: the wheel, the CLI's parser, the config
loader, the compose file and the scripts."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from cdc_delta.cli import _parser
from cdc_delta.config import load_config

from ..conftest import REPO

DEPLOY = REPO / "deploy"
BUNDLE = yaml.safe_load((DEPLOY / "databricks" / "databricks.yml").read_text())
K8S = {p.stem: yaml.safe_load(p.read_text()) for p in (DEPLOY / "k8s").glob("*.yaml")}
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
IMAGE = f"cdc-delta:{PROJECT['version']}"


def accepted_by_the_cli(args: list[str]) -> None:
    parsed = _parser().parse_args(args)        # argparse exits on what it does not accept
    assert parsed.command == args[0]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel the bundle's artifact builds, with the command the bundle runs."""
    out = tmp_path_factory.mktemp("dist")
    build = BUNDLE["artifacts"]["cdc_delta_wheel"]["build"].split()
    subprocess.run([sys.executable, *build[1:], "--outdir", str(out)], cwd=REPO, check=True,
                   capture_output=True)
    (found,) = out.glob("*.whl")
    return found


def test_the_bundle_job_runs_an_entry_point_of_the_wheel_with_arguments_the_cli_takes(wheel):
    (job,) = BUNDLE["resources"]["jobs"].values()
    (task,) = job["tasks"]
    wheel_task = task["python_wheel_task"]
    with zipfile.ZipFile(wheel) as z:
        entry_points = next(z.read(n).decode() for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))
        packages = {n.split("/")[0] for n in z.namelist()}
    assert re.search(rf"^{re.escape(wheel_task['entry_point'])} = cdc_delta.cli:main$", entry_points, re.M)
    assert wheel_task["package_name"] in packages
    config_path = BUNDLE["variables"]["config_path"]["default"]
    params = [config_path if p == "${var.config_path}" else p for p in wheel_task["parameters"]]
    accepted_by_the_cli(params)
    assert params[:2] == ["run", "--config"] and params[params.index("--trigger") + 1] == "available-now"
    assert task["libraries"] == [{"whl": "../../dist/*.whl"}]
    assert (DEPLOY / "databricks" / BUNDLE["artifacts"]["cdc_delta_wheel"]["path"]).resolve() == REPO
    assert job["max_concurrent_runs"] == 1 and job["schedule"]["quartz_cron_expression"]


def test_the_bundle_takes_kafka_credentials_from_a_secret_scope_that_the_config_names(monkeypatch):
    (job,) = BUNDLE["resources"]["jobs"].values()
    env = job["job_clusters"][0]["new_cluster"]["spark_env_vars"]
    assert env["KAFKA_PASSWORD"] == "{{secrets/${var.secret_scope}/kafka-password}}"
    text = (DEPLOY / "databricks" / "shop.yaml").read_text()
    assert "${KAFKA_PASSWORD}" in text and "${KAFKA_BOOTSTRAP}" in text and "KAFKA_BOOTSTRAP" in env
    monkeypatch.setenv("KAFKA_PASSWORD", "p4ss-word")
    monkeypatch.setenv("KAFKA_BOOTSTRAP", "b:9093")
    config = load_config(DEPLOY / "databricks" / "shop.yaml")
    assert config.lake.startswith("/Volumes/") and config.checkpoint_path.startswith("/Volumes/")


def containers(kind: str) -> list[dict]:
    spec = K8S[kind]["spec"]
    pod = spec["jobTemplate"]["spec"]["template"]["spec"] if kind == "cronjob" else spec["template"]["spec"]
    return [(c, pod) for c in pod["containers"]]


@pytest.mark.parametrize("kind,trigger", [("cronjob", "available-now"), ("deployment", "30 seconds")])
def test_manifests_run_the_image_with_the_cli_and_the_config_they_mount(kind, trigger, tmp_path):
    ((container, pod),) = containers(kind)
    assert container["image"] == IMAGE == COMPOSE["x-cdc-delta"]["image"]
    args = container["args"]
    accepted_by_the_cli(args)
    assert args[args.index("--trigger") + 1] == trigger
    config_file = Path(args[args.index("--config") + 1])
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    config_volume = next(n for n, v in volumes.items() if "configMap" in v)
    assert str(config_file.parent) == mounts[config_volume]
    configmap = K8S["configmap"]
    assert volumes[config_volume]["configMap"]["name"] == configmap["metadata"]["name"]
    assert config_file.name in configmap["data"]
    secret_volume = next(n for n, v in volumes.items() if "secret" in v)
    assert volumes[secret_volume]["secret"]["secretName"] == K8S["secret"]["metadata"]["name"]
    assert container["resources"]["limits"]["memory"] and container["resources"]["requests"]["cpu"]

    # the config loads, its ${file:…} secrets being keys of the Secret at the mounted path
    text = configmap["data"][config_file.name]
    secret_dir = mounts[secret_volume]
    named = set(re.findall(rf"\$\{{file:{re.escape(secret_dir)}/([\w.-]+)\}}", text))
    assert named and named <= set(K8S["secret"]["stringData"])
    for key in named:
        (tmp_path / key).write_text(f"value-of-{key}")
    (tmp_path / "pipeline.yaml").write_text(text.replace(secret_dir, str(tmp_path)))
    config = load_config(tmp_path / "pipeline.yaml")
    assert config.lake.startswith("s3a://") and config.checkpoint_path.startswith("s3a://")


def test_the_service_has_time_to_finish_a_batch_and_runs_alone():
    deployment = K8S["deployment"]["spec"]
    assert deployment["replicas"] == 1 and deployment["strategy"]["type"] == "Recreate"
    assert deployment["template"]["spec"]["terminationGracePeriodSeconds"] >= 120
    assert K8S["cronjob"]["spec"]["concurrencyPolicy"] == "Forbid"


def test_the_image_has_java_17_python_the_jars_and_the_cli_as_entry():
    text = (REPO / "Dockerfile").read_text()
    python = re.search(r"^ARG PYTHON_IMAGE=python:(\d+\.\d+)", text, re.M).group(1)
    assert f">={python}" == PROJECT["requires-python"]
    assert re.search(r"^ARG JAVA_IMAGE=eclipse-temurin:17-", text, re.M)
    assert "spark_jars(('s3a',))" in text and "CDC_DELTA_CACHE=/opt/cdc-delta/cache" in text
    assert 'ENTRYPOINT ["cdc-delta"]' in text and "cdc-delta" in PROJECT["scripts"]
    assert '".[local,sandbox]"' in text


def test_compose_waits_for_healthy_services_and_lets_the_host_reach_kafka():
    services = COMPOSE["services"]
    for name, service in services.items():
        for needed, how in (service.get("depends_on") or {}).items():
            assert how == {"condition": "service_healthy"}, name
            assert "healthcheck" in services[needed], needed
    env = services["kafka"]["environment"]
    assert "PLAINTEXT://localhost:9092" in env["KAFKA_ADVERTISED_LISTENERS"]
    assert COMPOSE["x-cdc-delta"]["environment"]["KAFKA_BOOTSTRAP"] == "kafka:29092"
    assert "INTERNAL://kafka:29092" in env["KAFKA_ADVERTISED_LISTENERS"]
    assert COMPOSE["x-cdc-delta"]["build"] == "."


def test_the_wheel_carries_the_samples_and_the_log_settings_the_session_points_at(wheel):
    from cdc_delta.infra.session import LOG4J

    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert LOG4J.is_file()
    assert LOG4J.relative_to(REPO).as_posix() in names
    assert any(n.startswith("cdc_delta/samples/") for n in names)
