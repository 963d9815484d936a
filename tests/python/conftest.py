import ctypes
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import handoff
from viewer_helpers import expected_pattern  # noqa: F401 (the tests import it from here)

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def capsule_name(cap):
    return _get_name(cap).decode()


class LegacyOnly:
    """A wrapper that asks for a legacy capsule, like a pre-1.0 consumer."""

    def __init__(self, producer):
        self.producer = producer

    def __dlpack_device__(self):
        return self.producer.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.producer.__dlpack__(stream=stream)


class CapsuleProducer:
    """Hands out one fixed capsule, every time it is asked."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule = capsule
        self.device = device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        return self.capsule


def run_isolated(code, *args, timeout=120):
    """Runs Python source `code` in a process of its own (in this folder: it imports conftest and the
    helpers) and returns its stdout. For calls a regression turns into memory errors (a use after free, a
    read past a tuple): a crash fails the test that asked, not the whole tier."""
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    return r.stdout


@pytest.fixture
def no_leaks():
    """Fails the test when frames or exported tensors outlive it."""
    gc.collect()
    before = handoff.live_objects()
    yield
    gc.collect()
    after = handoff.live_objects()
    assert after["frames"] == before["frames"], "frame storage leaked"
    assert after["dlpack_alive"] == before["dlpack_alive"], "exported DLPack tensors leaked"
