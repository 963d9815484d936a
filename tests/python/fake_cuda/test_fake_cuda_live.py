"""fakecuda tier: handoff.Publisher(memory="cuda") / handoff.Subscriber across processes against
the fake CUDA driver, which emulates exported virtual memory with memfds and mmap (and enforces
the documented order of calls): frames arrive in imported device memory that is the publisher's
allocation (the subscriber's pointer lies in the shared memfd mapping: no copy), read back byte
for byte with cuMemcpyDtoH; the CUDA Array Interface and DLPack describe that same pointer; a
publisher's acquired CUDA slot is written through its writable CUDA Array Interface and read in
the subscriber process."""
import hashlib
import json
import os
import sys

import numpy as np
import pytest

import handoff

pytestmark = pytest.mark.skipif("HANDOFF_CUDA_DRIVER" not in os.environ,
                                reason="HANDOFF_CUDA_DRIVER is not set (run through ctest -L fakecuda)")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from viewer_helpers import expected_pattern  # noqa: E402
from live_helpers import live_dir, mapping_of, peers, wait_for_subscriber  # noqa: E402,F401

kDLCUDA = 2


def device_plane(fake, plane):
    """A CUDA plane's samples as a NumPy array, copied to the host with cuMemcpyDtoH."""
    shape = plane.shape
    dtype = np.dtype(plane.dtype)
    row = int(np.prod(shape[1:])) * dtype.itemsize
    with fake.current(plane.cuda_context):
        result, raw = fake.read(plane.ptr, plane.pitch * (shape[0] - 1) + row)
    assert result == 0, f"cuMemcpyDtoH returned {result}"
    rows = [np.frombuffer(raw[r * plane.pitch: r * plane.pitch + row], dtype) for r in range(shape[0])]
    return np.stack(rows).reshape(shape)


def test_cuda_slots_arrive_as_the_publishers_device_memory(fake, live_dir, peers):
    pub = peers("publish", "gpu0", "--memory", "cuda", "--width", 48, "--height", 30)
    _, memory = pub.wait_ready()
    assert memory == "cuda"
    with handoff.Subscriber("gpu0") as sub:
        for _ in range(3):
            f = sub.next(timeout=20)
            assert f is not None, sub.status.message
            with f:
                assert f.memory == "cuda" and f.slot["kind"] == "CUDA VMM fd"
                luma, chroma = f.luma, f.chroma
                want_luma, want_chroma = expected_pattern(48, 30, "nv12", f.index)
                np.testing.assert_array_equal(device_plane(fake, luma), want_luma)
                np.testing.assert_array_equal(device_plane(fake, chroma), want_chroma)
                # No copy: the imported pointer is the publisher's allocation, mapped here.
                assert mapping_of(luma.ptr).startswith("/memfd:handoff-fake-cuda-vmm"), mapping_of(luma.ptr)
                cai = luma.__cuda_array_interface__
                assert cai["data"] == (luma.ptr, True) and cai["shape"] == (30, 48)
                assert luma.__dlpack_device__() == (kDLCUDA, 0)
                assert f.cuda_event is not None  # the fake has interprocess events
                del luma, chroma, cai
        s = sub.status
        assert (s.memory, s.cuda_sync) == ("cuda", "interprocess event"), s
    assert pub.stop() == 0


def test_an_acquired_cuda_slot_is_read_by_a_subscriber_process(fake, live_dir, peers):
    with handoff.Publisher("gpu1", memory="cuda") as pub:
        assert pub.memory == "cuda", pub.stats.route
        sub = peers("subscribe", "gpu1", "--frames", 1)
        wait_for_subscriber(pub)
        luma, chroma = expected_pattern(32, 16, "nv12", 9)
        with pub.acquire("nv12", 32, 16) as a:
            assert a.memory == "cuda"
            for plane, host in ((a.luma, luma), (a.chroma, chroma)):
                cai = plane.__cuda_array_interface__
                assert cai["data"][1] is False, "writable"
                ptr, pitch = cai["data"][0], cai["strides"][0]
                row = host[0].nbytes
                with fake.current(fake.retain(0)):
                    for r in range(host.shape[0]):
                        fake.check(fake.lib.cuMemcpyHtoD_v2(ptr + r * pitch, host[r].tobytes(), row), "cuMemcpyHtoD")
                fake.release(0)
                del cai, plane  # nothing may refer to the slot when the block ends
            a.index = 9
            a.set_overlays(boxes=[[0, 0, 4, 4]], labels=["gpu"])
        got = json.loads(sub.line())
        assert sub.stop() == 0
        assert got["index"] == 9 and got["memory"] == "cuda" and got["labels"] == ["gpu"]
        assert got["luma"] == hashlib.sha256(luma.tobytes()).hexdigest()
        assert got["chroma"] == hashlib.sha256(chroma.tobytes()).hexdigest()


class CaiDevice:
    """A CUDA Array Interface producer over fake device memory."""

    def __init__(self, ptr, shape, typestr):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": None, "version": 3, "stream": None}


def test_cuda_layers_are_published_as_host_copies(fake, live_dir):
    """A model's CUDA output tensors as layers of a published frame: the subscriber (which cannot
    read the publisher's device memory) gets host arrays with the same samples, converted as
    show() converts them."""
    ids = ((np.arange(6 * 10, dtype=np.int32).reshape(6, 10) * 7) % 300).astype(np.int32)
    depth = np.linspace(-1.0, 4.0, 8 * 4, dtype=np.float32).reshape(4, 8)
    masks = np.zeros((2, 3, 5), dtype=np.uint8)
    masks[0, 1:, :2] = 1
    masks[1, 0, 4] = 1
    ctx = fake.retain(0)
    try:
        with fake.current(ctx):
            device = [fake.alloc(a.tobytes()) for a in (ids, depth, masks)]
        layers = [handoff.ClassMap(CaiDevice(device[0], ids.shape, "<i4"), transparent=[0], opacity=0.25),
                  handoff.ScalarMap(CaiDevice(device[1], depth.shape, "<f4"), colormap="magma", range=(-1.0, 4.0)),
                  handoff.InstanceMasks(CaiDevice(device[2], masks.shape, "|u1"))]
        frame = np.full((18, 32), 60, dtype=np.uint8)
        with handoff.Publisher("cudalayers") as pub, handoff.Subscriber("cudalayers") as sub:
            wait_for_subscriber(pub)
            copies = fake.call_count("cuMemcpy2DAsync")
            assert pub.publish(frame, format="gray8", boxes=[[0, 0, 4, 4], [5, 5, 4, 4]], layers=layers)
            assert fake.call_count("cuMemcpy2DAsync") - copies == 4  # one per layer image
            f = sub.next(timeout=20)
            assert f is not None, sub.status.message
            got = f.overlays.layers
            assert [type(layer).__name__ for layer in got] == ["ClassMap", "ScalarMap", "InstanceMasks"]
            np.testing.assert_array_equal(got[0].ids, ids)
            np.testing.assert_array_equal(got[1].values, depth)
            np.testing.assert_array_equal(got[2].masks, masks)
            del f, got
        with fake.current(ctx):
            for p in device:
                fake.free(p)
    finally:
        fake.release(0)
