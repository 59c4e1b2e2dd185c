"""Hooks a batch calls at its named points, injected into the batch handler: nothing happens by
default; the crash tests inject `KillAt`, which SIGKILLs the process at one point.

Points: read (while a batch's records are read), merge (inside a table's MERGE and tombstone
append), quarantine (inside the quarantine append), route (inside a route's Kafka transaction,
before its table is written), committed (tables written, checkpoint not yet). `point(name)` is a moment; `during(name)` a block (KillAt dies at a random moment within
it, or right after it if it ends first).
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
from contextlib import contextmanager, nullcontext
from typing import ContextManager, Iterator, Mapping

from .errors import ConfigError

POINTS = ("read", "merge", "quarantine", "route", "committed")
FAULT_VARIABLE = "CDC_DELTA_FAULT"


class Hooks:
    """The default: every point passes."""

    def point(self, name: str) -> None:
        pass

    def during(self, name: str) -> ContextManager[None]:
        return nullcontext()


class KillAt(Hooks):
    """SIGKILL at the `visit`-th visit of `name` (within a `during` block: at a moment drawn from
    `seed`, at most `within_seconds` into it)."""

    def __init__(self, name: str, visit: int = 1, seed: int = 0, within_seconds: float = 1.5) -> None:
        if name not in POINTS:
            raise ConfigError(FAULT_VARIABLE, FAULT_VARIABLE, "unknown fault point", name, POINTS)
        self.name, self.visit, self.within_seconds = name, visit, within_seconds
        self.visits = 0
        self.rng = random.Random(seed)
        self.lock = threading.Lock()     # tables of a batch are applied from several threads

    def point(self, name: str) -> None:
        if self._due(name):
            _die(name)

    @contextmanager
    def during(self, name: str) -> Iterator[None]:
        timer = threading.Timer(self.rng.uniform(0.0, self.within_seconds), _die, args=(name,)) if self._due(name) else None
        if timer:
            timer.daemon = True
            timer.start()
        try:
            yield
        finally:
            if timer:
                timer.cancel()
                _die(name)

    def _due(self, name: str) -> bool:
        if name != self.name:
            return False
        with self.lock:
            self.visits += 1
            return self.visits == self.visit


def from_environment(env: Mapping[str, str] = os.environ) -> Hooks:
    """`CDC_DELTA_FAULT=<point>@<n>` (and `CDC_DELTA_FAULT_SEED`), read once by the CLI at start;
    unset or empty: no hooks."""
    text = env.get(FAULT_VARIABLE, "")
    if not text:
        return Hooks()
    name, _, visit = text.partition("@")
    if not (visit or "1").isdigit():
        raise ConfigError(FAULT_VARIABLE, FAULT_VARIABLE, "expected <point>@<visit number>", text, POINTS)
    return KillAt(name, int(visit or 1), int(env.get("CDC_DELTA_FAULT_SEED", "0")))


def _die(name: str) -> None:
    print(f"fault: killed at {name}", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
