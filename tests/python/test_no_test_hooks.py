"""The shipped module carries no test hooks: they live in the test-only module
handoff_testing (tests/python/module), which the wheel does not contain."""
import os
import pathlib
import subprocess

import pytest

import handoff
import handoff_testing
from handoff import _handoff

HOOKS = ["relabel_as_cuda", "skip_same_gpu_check_in_new_workers", "export_counts", "live_frames"]


@pytest.mark.parametrize("name", HOOKS)
def test_shipped_module_has_no_test_hook(name):
    for module in (handoff, _handoff):
        for spelling in (name, "_" + name):
            assert not hasattr(module, spelling), f"{module.__name__}.{spelling}"
    assert callable(getattr(handoff_testing, name))


def test_shipped_module_has_no_private_functions():
    private = [n for n in dir(_handoff) if n.startswith("_") and not n.startswith("__")]
    assert [n for n in private if callable(getattr(_handoff, n))] == []
    # The one private attribute: the library's table for C code (handoff_testing's way in).
    assert [n for n in private if not callable(getattr(_handoff, n))] == ["_library_hooks"]
    assert type(_handoff._library_hooks).__name__ == "PyCapsule"


def test_test_module_reads_the_shipped_modules_counters():
    before = handoff_testing.live_frames()
    frame = handoff.Frame.allocate(16, 16)
    assert handoff_testing.live_frames() == before + 1
    del frame
    assert handoff_testing.live_frames() == before


def test_wheel_contents_have_no_test_module(tmp_path):
    """What pip puts in the wheel: install component `python` (pyproject.toml),
    installed here from this build tree, which does have the test module built."""
    build, cmake = os.environ.get("HANDOFF_BUILD_DIR"), os.environ.get("HANDOFF_CMAKE")
    if not build or not cmake:
        pytest.skip("HANDOFF_BUILD_DIR / HANDOFF_CMAKE unset: run through ctest (tests/python/CMakeLists.txt)")
    assert pathlib.Path(handoff_testing.__file__).is_relative_to(build), "the test module is built in this tree"
    subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", str(tmp_path)], check=True,
                   capture_output=True)
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert "handoff/__init__.py" in files and any(f.startswith("handoff/_handoff") for f in files), files
    assert [f for f in files if "testing" in f] == [], files
