"""The client docs' examples are what the tests run: each code block of docs/clients.md marked
with ``<!-- example: PATH -->`` is an excerpt of that file, and every framework example file
is shown there."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[3]
MARKED = re.compile(r"<!-- example: (\S+) -->\n```\w*\n(.*?)```", re.S)


def excerpts():
    return MARKED.findall((ROOT / "docs" / "clients.md").read_text())


def test_each_marked_block_is_an_excerpt_of_its_file():
    found = excerpts()
    assert len(found) >= 6, found
    for path, block in found:
        assert block in (ROOT / path).read_text(), f"docs/clients.md shows {path} otherwise"


def test_every_framework_example_is_shown():
    shown = {path for path, _ in excerpts()}
    examples = ROOT / "bindings" / "python" / "examples"
    for example in sorted(examples.glob("*.py")):
        if example.name != "chat.py":
            assert f"bindings/python/examples/{example.name}" in shown, example.name


def test_a_block_that_drifts_is_caught():
    path, block = excerpts()[0]
    assert block.replace("memory", "memories", 1) not in (ROOT / path).read_text()
