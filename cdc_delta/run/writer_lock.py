"""One writer per checkpoint and per table. `run` holds an exclusive lock on a file in the
checkpoint folder and in each path table's folder while it runs; the operating system drops the
lock when the process ends, so a killed run leaves nothing stale behind. The locks cover runs on
one machine; across machines Delta's optimistic concurrency fails a conflicting commit (the run
stops, the table stays whole) and the next run repeats the batch from the checkpoint (every
write is idempotent)."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from contextlib import ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import IO, Callable, ContextManager, Iterator

from ..config.models import PipelineConfig
from ..errors import WriterBusy
from ..frame import PREFIX
from ..infra.storage import local_path
from ..lake.tables import DeltaLocation

LOCK_FILE = f"{PREFIX}writer.lock"


@contextmanager
def exclusive(folder: str, what: str, pipeline: str) -> Iterator[None]:
    """Hold the lock of `folder` (created if missing) for the block, or raise WriterBusy."""
    handle = _acquire(Path(folder) / LOCK_FILE, what, pipeline)
    try:
        yield
    finally:
        handle.close()


def holding_all(folders: dict[str, str], pipeline: str) -> ExitStack:
    """Locks on several folders ({what: folder}); release them by closing the returned stack."""
    stack = ExitStack()
    try:
        for what, folder in sorted(folders.items(), key=lambda kv: kv[1]):
            stack.enter_context(exclusive(folder, what, pipeline))
    except BaseException:
        stack.close()
        raise
    return stack


def lock_tables(config: PipelineConfig, note: Callable[[str], None] | None = None) -> ExitStack:
    """The writer lock of each local path table of a pipeline (close the stack to release
    them): what the tables' sinks keep in the driver between batches holds only while no other
    process writes them. Tables on an object store can not be locked: `note`, when given, says so."""
    local = {what: where.local_folder for what, where in _targets(config).items() if where.local_folder}
    if note and (remote := _unlockable_tables(config)):
        note(unlocked_note(remote))
    return holding_all(local, config.pipeline)


def checkpoint_lock(config: PipelineConfig, note: Callable[[str], None] | None = None) -> ContextManager[None]:
    """One run per checkpoint: a lock on a local checkpoint folder. `note` says once what of
    the run (checkpoint, tables) is on an object store, where no lock can be held."""
    folder = local_path(config.checkpoint_path)
    remote = ([] if folder else [config.checkpoint_path]) + _unlockable_tables(config)
    if remote:
        (note or print_note)(unlocked_note(remote))
    if folder is None:
        return nullcontext()
    return exclusive(folder, f"checkpoint {config.checkpoint_path}", config.pipeline)


def _targets(config: PipelineConfig) -> dict[str, DeltaLocation]:
    return {f"table {t.name}": DeltaLocation.of(config.target_of(t)) for t in config.tables}


def _unlockable_tables(config: PipelineConfig) -> list[str]:
    return [where.path for where in _targets(config).values() if where.path and not where.local_folder]


def print_note(text: str) -> None:
    print(f"note: {text}", flush=True)


def unlocked_note(paths: list[str]) -> str:
    return (f"{', '.join(paths)} on an object store: no file lock can keep a second writer out there, so run "
            "one writer per pipeline; a second one's conflicting Delta commits fail (optimistic concurrency)")


def _acquire(path: Path, what: str, pipeline: str) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise WriterBusy(what, _describe(holder)) from None
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pipeline": pipeline, "pid": os.getpid(), "host": socket.gethostname(),
                             "since": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}))
    handle.flush()
    return handle


def _describe(holder: str) -> str:
    try:
        h = json.loads(holder)
        return f"pipeline {h['pipeline']}, pid {h['pid']} on {h['host']}, since {h['since']} UTC"
    except (ValueError, KeyError, TypeError):
        return holder
