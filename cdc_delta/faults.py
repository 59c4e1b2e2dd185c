"""Fault injection for crash tests: the process kills itself with SIGKILL at a named point.

Off unless CDC_DELTA_FAULT is set to "<point>@<n>": die at the n-th visit of that point, one of
read (while a batch's records are read), merge (inside a table's MERGE and tombstone append),
quarantine (inside the quarantine append), committed (tables written, checkpoint not yet).
`point(name)` dies right there; `during(name)` dies at a random moment within its block
(CDC_DELTA_FAULT_SEED draws it), or right after the block if it ends first.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
from collections import Counter
from contextlib import contextmanager
from typing import Iterator

POINTS = ("read", "merge", "quarantine", "committed")
_NAME, _, _AT = os.environ.get("CDC_DELTA_FAULT", "").partition("@")
_RNG = random.Random(int(os.environ.get("CDC_DELTA_FAULT_SEED", "0")))
_visits: Counter[str] = Counter()


def _die(name: str) -> None:
    print(f"fault: killed at {name}", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def _due(name: str) -> bool:
    if name != _NAME:
        return False
    _visits[name] += 1
    return _visits[name] == int(_AT or 1)


def point(name: str) -> None:
    if _due(name):
        _die(name)


@contextmanager
def during(name: str, within_seconds: float = 1.5) -> Iterator[None]:
    timer = threading.Timer(_RNG.uniform(0.0, within_seconds), _die, args=(name,)) if _due(name) else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer:
            timer.cancel()
            _die(name)
