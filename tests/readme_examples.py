"""The README's Python examples, taken from the README itself so the tests run them as written."""

from __future__ import annotations

import re

from .conftest import REPO


def python_examples(section: str = "## Use from Python") -> list[str]:
    text = (REPO / "README.md").read_text()
    body = text.split(section, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)
