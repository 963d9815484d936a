"""The shipped module carries no test hooks: they live in the test-only module
handoff_testing (tests/python/module), which the wheel does not contain."""
import os
import pathlib
import subprocess

import pytest

import handoff
import handoff_testing
from handoff import _handoff

HOOKS = ["relabel_as_cuda", "gl_device_uuid"]  # handoff_testing's
# Gone for good: the old hooks into the shipped module's library copy (the
# counts are public now, handoff.live_objects(); the same-GPU waiver gave way to
# a fake CUDA driver on the GL device's UUID) and the capsule they went through.
GONE = ["skip_same_gpu_check_in_new_workers", "export_counts", "live_frames", "library_hooks"]


@pytest.mark.parametrize("name", HOOKS + GONE)
def test_shipped_module_has_no_test_hook(name):
    for module in (handoff, _handoff):
        for spelling in (name, "_" + name):
            assert not hasattr(module, spelling), f"{module.__name__}.{spelling}"
    assert callable(getattr(handoff_testing, name, None)) == (name in HOOKS), f"handoff_testing.{name}"


def test_shipped_module_has_no_private_attributes():
    """Nothing private at all: no function, and no capsule or other opaque way in."""
    private = [n for n in dir(_handoff) if n.startswith("_") and not n.startswith("__")]
    assert private == []


def test_test_module_holds_no_library_state():
    """handoff_testing reaches nothing of the shipped module's library copy: its
    hooks are stateless, and the counts a test reads are the public ones."""
    assert sorted(n for n in dir(handoff_testing) if not n.startswith("__")) == sorted(HOOKS)
    before = handoff.live_objects()["frames"]
    frame = handoff.Frame.allocate(16, 16)
    handoff_testing.relabel_as_cuda(frame, 0)  # shares frame's storage: no new one
    assert handoff.live_objects()["frames"] == before + 1
    del frame
    assert handoff.live_objects()["frames"] == before


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
