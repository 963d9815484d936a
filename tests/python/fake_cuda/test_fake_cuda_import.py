"""fakecuda tier: Frame.from_planes on CUDA producers with the fake CUDA
driver (HANDOFF_CUDA_DRIVER; its "device memory" is host memory). This checks
handoff's CUDA logic (primary context retained and exposed, context
synchronised, kDLCUDA / CAI paths), not a real GPU: tests/python/cuda does that."""
import ctypes
import gc
import os
import threading
import time

import numpy as np
import pytest

import handoff
import handoff_testing

pytestmark = pytest.mark.skipif("HANDOFF_CUDA_DRIVER" not in os.environ,
                                reason="HANDOFF_CUDA_DRIVER is not set (run through ctest -L fakecuda)")


class CaiProducer:
    def __init__(self, array, stream=None):
        self.array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": array.dtype.str, "data": (array.ctypes.data, False),
            "strides": array.strides, "version": 3, "stream": stream}


def test_driver_is_the_fake_and_usable():
    assert "unavailable" not in handoff.cuda_status(), handoff.cuda_status()


def test_cai_import_carries_primary_context():
    luma = np.zeros((17, 40), np.uint8)[:, :33]
    chroma = np.zeros((9, 17, 2), np.uint8)
    f = handoff.Frame.from_planes(CaiProducer(luma, stream=1), CaiProducer(chroma))
    assert f.memory == "cuda" and f.device == 0
    assert f.cuda_context is not None and f.cuda_context != 0
    assert f.luma.cuda_context == f.cuda_context
    assert f.luma.__cuda_array_interface__["data"] == (luma.ctypes.data, True)
    g = handoff.Frame.from_planes(CaiProducer(luma), CaiProducer(chroma))
    assert g.cuda_context == f.cuda_context  # one primary context per device


def test_dlpack_cuda_producer_round_trip():
    host = handoff.Frame.allocate(33, 17, "p010", alignment=64)
    cuda = handoff_testing.relabel_as_cuda(host, 0)  # a kDLCUDA producer over the fake's "device" memory
    f = handoff.Frame.from_planes(cuda.luma, cuda.chroma, "p010")
    assert f.memory == "cuda" and f.device == 0
    assert f.luma.ptr == host.luma.ptr and f.luma.pitch == 128
    assert f.cuda_context is not None
    live = handoff.live_objects()["frames"]
    del f
    gc.collect()
    assert handoff.live_objects()["frames"] == live - 1


class CaiDevice:
    """A CUDA Array Interface producer over fake device memory."""

    def __init__(self, ptr, shape, strides):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "|u1", "data": (ptr, False),
                                         "strides": strides, "version": 3, "stream": None}


def capsule_data(capsule):
    """DLTensor.data of an unconsumed legacy capsule (the first field of DLManagedTensor)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return ctypes.cast(get(capsule, b"dltensor"), ctypes.POINTER(ctypes.c_void_p))[0]


def test_frame_and_capsule_keep_the_context_when_the_producers_goes(fake):
    luma = bytes((7 * x + 13 * y) % 256 for y in range(17) for x in range(33))
    chroma = bytes((5 * i) % 256 for i in range(9 * 17 * 2))
    producer = fake.retain(0)  # a decoder's own primary context and device memory
    with fake.current(producer):
        luma_ptr, chroma_ptr = fake.alloc(luma), fake.alloc(chroma)
    f = handoff.Frame.from_planes(CaiDevice(luma_ptr, (17, 33), (33, 1)),
                                  CaiDevice(chroma_ptr, (9, 17, 2), (34, 2, 1)))
    resets = fake.context_resets(0)
    fake.release(0)  # the producer's last retain goes before the frame
    assert fake.context_resets(0) == resets, "the frame keeps its context retained"
    with fake.current(f.cuda_context):
        assert fake.read(f.luma.ptr, len(luma)) == (0, luma)

    capsule = f.chroma.__dlpack__()
    del f
    gc.collect()
    consumer = fake.retain(0)  # e.g. PyTorch, in the device's primary context
    with fake.current(consumer):
        assert fake.read(capsule_data(capsule), len(chroma)) == (0, chroma)
        fake.free(luma_ptr)
        fake.free(chroma_ptr)
    del capsule
    fake.release(0)
    assert fake.objects_lost_to_resets() == 0
    assert fake.primary_context_refs(0) == 0


def test_ordinal_outside_device_count_refused():
    luma = np.zeros((4, 4), np.uint8)
    chroma = np.zeros((2, 2, 2), np.uint8)
    with pytest.raises(handoff.InvalidFrame, match=r"luma.device: CUDA device 7 is not present"):
        handoff.Frame.from_planes(CaiProducer(luma), CaiProducer(chroma), device=7)


@pytest.mark.parametrize("entry", ["cuDevicePrimaryCtxRetain", "cuCtxSynchronize", "cuDevicePrimaryCtxRelease"])
def test_other_threads_run_python_while_a_driver_call_waits(fake, entry):
    """from_planes retains the primary context and synchronises it; dropping the
    frame releases it. Each can wait on the GPU, so none may hold the GIL: while
    one thread is inside the (held) driver call, this one runs Python."""
    luma = np.zeros((17, 33), np.uint8)
    chroma = np.zeros((9, 17, 2), np.uint8)
    frames = [] if entry != "cuDevicePrimaryCtxRelease" else [
        handoff.Frame.from_planes(CaiProducer(luma), CaiProducer(chroma))]
    errors = []

    def driver_work():
        try:
            if frames:
                frames.pop()  # the last reference: the frame's context is released
            else:
                handoff.Frame.from_planes(CaiProducer(luma, stream=1), CaiProducer(chroma))
        except BaseException as e:  # reported below, on the test's thread
            errors.append(e)

    fake.hold(entry, 3000)  # the bound only keeps a GIL-holding build from hanging
    worker = threading.Thread(target=driver_work)
    worker.start()
    seen_waiting = False
    for _ in range(10000):  # Python on this thread, while the worker is in the driver
        if fake.held_calls(entry) > 0:
            seen_waiting = True
            break
        time.sleep(0.001)
    fake.hold(entry, 0)
    worker.join()
    assert not errors, errors
    assert seen_waiting, f"no Python ran on another thread while {entry} was waiting: the GIL was held"
