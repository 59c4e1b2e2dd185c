"""Secrets stay out of what cdc-delta prints. Config values that come from a secret file
(``${file:PATH}``), from an environment variable whose name looks secret, or sit in a Kafka
option that carries credentials are remembered here, and every line the CLI writes goes through
``redact``. No pyspark here."""

from __future__ import annotations

import re

SECRET_NAME = re.compile(r"(?i)(password|passwd|secret|token|credential|jaas|api[._-]?key|private[._-]?key|account[._-]?key)")
MASK = "***"
_known: set[str] = set()


def remember(value: str) -> None:
    if value and len(value) >= 4:
        _known.add(value)
        for m in re.finditer(r'password\s*=\s*"([^"]+)"', value):   # the password inside a JAAS line
            _known.add(m.group(1))


def remember_options(options: dict[str, str]) -> None:
    for key, value in options.items():
        if SECRET_NAME.search(key):
            remember(value)


def redact(text: str) -> str:
    for secret in sorted(_known, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
