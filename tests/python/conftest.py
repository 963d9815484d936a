import ctypes
import gc

import numpy as np
import pytest

import handoff

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def capsule_name(cap):
    return _get_name(cap).decode()


def expected_pattern(width, height, fmt, seed):
    """What handoff's fill_test_pattern writes (host_frame.hpp), computed independently."""
    m = 256 if fmt == "nv12" else 1024
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    luma = (7 * x + 13 * y + seed) % m
    ch, cw = (height + 1) // 2, (width + 1) // 2
    y, x = np.mgrid[0:ch, 0:cw].astype(np.int64)
    u = (5 * x + 3 * y + seed + 64) % m
    v = (11 * x + 2 * y + seed + 128) % m
    chroma = np.stack([u, v], axis=-1)
    if fmt == "nv12":
        return luma.astype(np.uint8), chroma.astype(np.uint8)
    return (luma << 6).astype(np.uint16), (chroma << 6).astype(np.uint16)


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


@pytest.fixture
def no_leaks():
    """Fails the test when frames or exported tensors outlive it."""
    gc.collect()
    frames = handoff._live_frames()
    exports = handoff._export_counts()["live"]
    yield
    gc.collect()
    assert handoff._live_frames() == frames, "frame storage leaked"
    assert handoff._export_counts()["live"] == exports, "exported DLPack tensors leaked"
