"""Debezium connectors on the local Kafka Connect worker: the repo's `connectors/*.json` with
overrides, registered through the REST API and waited on until their task runs."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CONNECTORS = Path(__file__).resolve().parents[2] / "connectors"


def connector_config(engine: str, **overrides: str) -> dict[str, Any]:
    """connectors/<engine>.json, with config keys replaced (e.g. topic.prefix, database.port)."""
    spec = json.loads((CONNECTORS / f"{engine}.json").read_text())
    spec["config"].update(overrides)
    return spec


def schemas_enabled(flag: bool) -> dict[str, str]:
    value = "true" if flag else "false"
    return {"key.converter.schemas.enable": value, "value.converter.schemas.enable": value}


def _request(url: str, method: str = "GET", body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
    return json.loads(text) if text else None


def register(connect_url: str, spec: dict[str, Any], timeout: float = 120.0) -> None:
    """Create or update the connector, then wait until it and its task run."""
    name = spec["name"]
    try:
        _request(f"{connect_url}/connectors/{name}/config", "PUT", spec["config"])
    except urllib.error.HTTPError as exc:
        raise RuntimeError(f"Kafka Connect refused connector {name}: {exc.read().decode()}") from None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = _request(f"{connect_url}/connectors/{name}/status")
        except urllib.error.HTTPError:
            status = None
        tasks = (status or {}).get("tasks", [])
        failed = [t for t in tasks if t["state"] == "FAILED"]
        if failed:
            raise RuntimeError(f"connector {name} failed: {failed[0].get('trace', '')[:2000]}")
        if tasks and all(t["state"] == "RUNNING" for t in tasks):
            return
        time.sleep(0.5)
    raise TimeoutError(f"connector {name} did not run within {timeout:.0f} s")


def delete(connect_url: str, name: str) -> None:
    try:
        _request(f"{connect_url}/connectors/{name}", "DELETE")
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise
