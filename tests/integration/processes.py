"""`python -m cdc_delta ...` as a child process of a test, its output kept in files."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

from ..conftest import REPO

_numbers = itertools.count()


class CdcDeltaProcess(subprocess.Popen):
    """A run's stdout and stderr go to files, not pipes: a long run (or one whose JVM logs a
    stack trace) can print more than a pipe holds, and a child blocked writing to a full pipe
    stops processing while the test waits for it. `communicate` returns the files' text."""

    def __init__(self, *args: str, log_dir: Path, **kw):
        stem = log_dir / f"cdc-delta-{next(_numbers)}"
        self.out_path, self.err_path = stem.with_suffix(".out"), stem.with_suffix(".err")
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            super().__init__([sys.executable, "-m", "cdc_delta", *args], cwd=REPO, stdout=out, stderr=err,
                             text=True, **kw)

    def communicate(self, input=None, timeout=None):  # noqa: A002 - Popen's signature
        self.wait(timeout)
        return self.out_path.read_text(), self.err_path.read_text()
