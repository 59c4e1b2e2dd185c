"""Load a pipeline YAML: ${ENV} interpolation, then validation into frozen models."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..infra import secrets
from ..errors import ConfigError
from .models import PipelineConfig

ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
FILE_RE = re.compile(r"\$\{file:([^}]+)\}")


def load_config(path: str | os.PathLike[str]) -> PipelineConfig:
    """Read, interpolate and validate ``path``; every problem is a ConfigError naming the field."""
    file = str(path)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(file, "(file)", f"can not read the config: {exc.strerror}") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "(yaml)"
        raise ConfigError(file, where, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(raw, dict):
        raise ConfigError(file, "(top)", "the config must be a mapping of keys to values", type(raw).__name__)
    return parse_config(interpolate(raw, file, ""), file)


def parse_config(raw: dict[str, Any], file: str = "<config>") -> PipelineConfig:
    try:
        config = PipelineConfig.model_validate(raw)
    except ValidationError as exc:
        raise _first_error(exc, file) from None
    secrets.remember_options(getattr(config.source, "options", {}))
    secrets.remember_options(config.spark)     # fs.s3a.secret.key, fs.azure.account.key.…
    return config


def interpolate(node: Any, file: str, where: str) -> Any:
    """Replace ${VAR}, ${VAR:-default} and ${file:PATH} (a secret file's text) in every string value."""
    if isinstance(node, dict):
        return {k: interpolate(v, file, f"{where}.{k}" if where else str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [interpolate(v, file, f"{where}[{i}]") for i, v in enumerate(node)]
    if isinstance(node, str):
        return ENV_RE.sub(lambda m: _env_value(m, file, where), FILE_RE.sub(lambda m: _file_value(m, file, where), node))
    return node


def _file_value(m: re.Match[str], file: str, where: str) -> str:
    path = Path(m.group(1).strip()).expanduser()
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(file, where, f"secret file {path} can not be read: {exc.strerror}") from None
    secrets.remember(value)
    return value


def _env_value(m: re.Match[str], file: str, where: str) -> str:
    name, default = m.group(1), m.group(2)
    if name in os.environ:
        if secrets.SECRET_NAME.search(name):
            secrets.remember(os.environ[name])
        return os.environ[name]
    if default is not None:
        return default
    raise ConfigError(file, where, f"environment variable {name} is not set; export it or write ${{{name}:-default}}")


def _first_error(exc: ValidationError, file: str) -> ConfigError:
    err = exc.errors()[0]
    loc = _location(err["loc"])
    msg = err["msg"].removeprefix("Value error, ")
    kind = err["type"]
    value = err.get("input")
    if kind == "extra_forbidden":
        return ConfigError(file, loc, "unknown key; remove it or check its spelling")
    if kind == "missing":
        return ConfigError(file, loc, "required key is missing")
    if kind == "literal_error":
        allowed = (err.get("ctx") or {}).get("expected", "")
        return ConfigError(file, loc, "value not allowed", value, [a.strip(" '") for a in allowed.replace(" or ", ",").split(",")])
    if kind == "union_tag_invalid" or kind == "union_tag_not_found":
        return ConfigError(file, loc + ".kind", "unknown or missing source kind", None, ["files", "kafka"])
    shown = value if isinstance(value, (str, int, float, bool)) else None
    return ConfigError(file, loc, msg, shown)


def _location(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("files", "kafka", "ColumnSpec", "str") or str(part).startswith("function-"):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "(top)"
