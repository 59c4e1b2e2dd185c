"""One benchmark at a time on this machine. Two at once share its two cores, so neither's
seconds can be compared; and those with a broker of their own share its port, so the first to
end stops the other's broker under it."""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
from pathlib import Path
from typing import IO

LOCK = Path(tempfile.gettempdir()) / "cdc-delta-benchmark.lock"
_held: list[IO[str]] = []


def alone(lock: Path = LOCK) -> None:
    """Hold the machine's benchmark lock until this process ends (the system lets go of it
    then, however the process ends); exit naming the holder when another benchmark holds it."""
    handle = open(lock, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "a process that did not say"
        raise SystemExit(f"another benchmark is running ({holder}): wait for it to end; two at once "
                         "share the machine's cores and the benchmark broker's port")
    handle.truncate(0)
    handle.write(f"pid {os.getpid()}: {' '.join(sys.argv)}")
    handle.flush()
    _held.append(handle)
