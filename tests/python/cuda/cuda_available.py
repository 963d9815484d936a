"""The cuda tier's one decision: can its Python tests run here, and if not,
is that a skip (the GPU, its driver, or a CUDA-enabled PyTorch is absent) or
a failure (a GPU is here and PyTorch or handoff cannot use it)?

Whether a GPU is here is asked of the driver library itself (ctypes: dlopen,
cuInit, cuDeviceGetCount), not of handoff, which is under test. The
conftest.py beside this file applies require_gpu() to every test."""
import ctypes
import os

import pytest

import handoff

try:
    import torch
except ImportError:
    torch = None

CUDA_ERROR_STUB_LIBRARY = 34
CUDA_ERROR_NO_DEVICE = 100


def gpu_presence():
    """(present, what): the driver library handoff loads (HANDOFF_CUDA_DRIVER,
    else libcuda.so.1) and what it says. Present also where it loads and
    cuInit fails for another reason than the stub library or no device: a
    broken driver is no reason to skip."""
    path = os.environ.get("HANDOFF_CUDA_DRIVER") or "libcuda.so.1"
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        return False, "no CUDA driver library (%s)" % e
    r = lib.cuInit(0)
    if r == CUDA_ERROR_STUB_LIBRARY:
        return False, "%s is the CUDA toolkit's stub library, not a driver" % path
    if r == CUDA_ERROR_NO_DEVICE:
        return False, "%s sees no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)" % path
    if r != 0:
        return True, "%s loads and cuInit fails with CUresult %d" % (path, r)
    n = ctypes.c_int(0)
    r = lib.cuDeviceGetCount(ctypes.byref(n))
    if r != 0:
        return True, "%s initialises and cuDeviceGetCount fails with CUresult %d" % (path, r)
    if n.value <= 0:
        return False, "%s reports 0 CUDA devices" % path
    return True, "%s: %d CUDA device(s)" % (path, n.value)


def verdict():
    """None where the tier can run, else ("skip" | "fail", reason)."""
    present, what = gpu_presence()
    if not present:
        return "skip", "no CUDA GPU here: " + what
    if torch is None:
        return "skip", "PyTorch is not installed"
    if torch.version.cuda is None:
        return "skip", "PyTorch is a CPU-only build (torch %s)" % torch.__version__
    if not torch.cuda.is_available():
        return "fail", "a CUDA GPU is here (%s) and PyTorch %s (CUDA %s) sees none" % (
            what, torch.__version__, torch.version.cuda)
    status = handoff.cuda_status()
    if "unavailable" in status:
        return "fail", "a CUDA GPU is here (%s) and handoff cannot use it: %s" % (what, status)
    return None


def require_gpu():
    """Skips or fails the calling test as verdict() says."""
    v = verdict()
    if v is None:
        return
    kind, reason = v
    if kind == "skip":
        pytest.skip(reason)
    pytest.fail(reason, pytrace=False)
