"""The Python examples in README.md run as written: the viewer quick start (the
first python block) and the NumPy frames example (the second)."""
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_blocks():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "README.md lost a python example"
    return blocks


def test_viewer_quick_start_runs_and_shows_the_frame():
    scope = {"__name__": "readme_example"}
    exec(compile(python_blocks()[0], str(README), "exec"), scope)
    v = scope["v"]
    try:
        img = np.from_dlpack(v.snapshot())  # what the quick start showed: its frame, with the box
        assert img.shape == (720, 1280, 4)
        assert v.stats.submitted == 1
        assert (img[80, 180, :3] != img[300, 600, :3]).any(), "the box's top edge is drawn"
    finally:
        v.close()


def test_numpy_example_runs():
    exec(compile(python_blocks()[1], str(README), "exec"), {"__name__": "readme_example"})
