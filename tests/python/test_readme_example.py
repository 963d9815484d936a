"""The NumPy example in README.md (the first python block) runs as written."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_numpy_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "no python example in README.md"
    exec(compile(blocks[0], str(README), "exec"), {"__name__": "readme_example"})
