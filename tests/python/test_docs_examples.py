"""The Python examples in docs/python.md marked "run by tests/python/test_docs_examples.py" run
as written, each in a fresh folder (they write files) with a private XDG_RUNTIME_DIR."""
import os
import pathlib
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from live_helpers import live_dir  # noqa: E402,F401

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
MARK = "<!-- run by tests/python/test_docs_examples.py -->"


def marked_blocks():
    blocks = re.findall(re.escape(MARK) + r"\n```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 2, "docs/python.md lost a tested example"
    return blocks


@pytest.mark.parametrize("index", range(2))
def test_docs_example_runs(index, tmp_path, monkeypatch, live_dir):
    monkeypatch.chdir(tmp_path)
    exec(compile(marked_blocks()[index], str(DOC), "exec"), {"__name__": "docs_example"})
