"""fakecuda tier: handoff.Viewer's CUDA paths from Python against the fake CUDA
driver (its "device memory" is host memory; every documented rule of the API is
enforced): a CUDA frame is copied device to device into the registered GL
buffers (no host round trip), acquire hands out CUDA pointers that
__cuda_array_interface__ / DLPack expose writable, and overlay arrays in CUDA
memory are read with one copy each. tests/python/cuda runs the same on a GPU."""
import ctypes
import gc
import os

import numpy as np
import pytest

import handoff
import handoff_testing

pytestmark = pytest.mark.skipif("HANDOFF_CUDA_DRIVER" not in os.environ,
                                reason="HANDOFF_CUDA_DRIVER is not set (run through ctest -L fakecuda)")

import sys  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from viewer_helpers import assert_no_gl_errors, assert_quadrants, quadrant_planes  # noqa: E402

kDLCUDA = 2


class CaiDevice:
    """A CUDA Array Interface producer over fake device memory."""

    def __init__(self, ptr, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": 3, "stream": None}


class DLPackDevice:
    """A kDLCUDA DLPack producer: NumPy's capsule for `like`, its data pointer and
    device replaced by fake device memory (DLTensor: data at 0, device at 8)."""

    def __init__(self, like, ptr, device=0):
        self.capsule = like.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        tensor = get(self.capsule, b"dltensor")
        ctypes.c_void_p.from_address(tensor).value = ptr
        ctypes.c_int32.from_address(tensor + 8).value = kDLCUDA
        ctypes.c_int32.from_address(tensor + 12).value = device
        self.device = device
        self.like = like  # the capsule's deleter frees NumPy's side; keep the array alive with it

    def __dlpack_device__(self):
        return (kDLCUDA, self.device)

    def __dlpack__(self, **kwargs):
        return self.capsule


@pytest.fixture
def gl_gpu(fake):
    """The fake's device 0 made the GL device: its UUID set to the one a
    headless GL context reports (llvmpipe's here), so the viewer's same-GPU
    check runs and passes, as on one real GPU. The fake's own UUID after."""
    uuid = handoff_testing.gl_device_uuid()
    assert uuid, "GL reports no device UUID (GL_EXT_memory_object): the same-GPU check would not run"
    fake.set_uuid(uuid)
    try:
        yield uuid
    finally:
        fake.set_uuid(None)


@pytest.fixture
def cuda_viewer(fake, gl_gpu):
    """A viewer whose ring is CUDA-registered; once it is gone, nothing stays
    registered, mapped or allocated. (Tests take it through the holder, so the
    fixture's reference is the last one.)"""
    # convert="gpu": the layer shaders draw host and CUDA layers alike, so snapshots
    # compare exactly (a software GL's CPU path composites host layers only, within
    # a code or two of the shaders: test_layers.py compares those).
    holder = [handoff.Viewer(title="fake-cuda", width=320, height=240, headless=True, memory="cuda",
                             gl_debug=True, convert="gpu")]
    yield holder
    assert_no_gl_errors(holder[0])
    holder.clear()
    gc.collect()
    assert fake.live() == {"mappings": 0, "registrations": 0, "streams": 0, "allocations": 0}


def other_uuid(uuid):
    """The same UUID with its first byte changed (fake device 1 differs in the last)."""
    first = (int(uuid[:2], 16) + 1) % 256
    return f"{first:02x}{uuid[2:]}"


def test_a_cuda_device_that_is_not_the_gl_device_is_refused(fake):
    """The check the fixture passes can fail: with the fake on another GPU, a
    viewer asked for CUDA memory refuses it, naming both devices."""
    gl = handoff_testing.gl_device_uuid()
    assert gl, "GL reports no device UUID"
    fake.set_uuid(other_uuid(gl))
    try:
        v = handoff.Viewer(title="other-gpu", width=320, height=240, headless=True, memory="cuda")
        try:
            with pytest.raises(RuntimeError) as refused:
                v.show(handoff.Frame.allocate(64, 64))
            message = str(refused.value)
            assert "is not the GL device" in message, message
            assert other_uuid(gl) in message and gl in message, message
        finally:
            v.close()
    finally:
        fake.set_uuid(None)
    gc.collect()
    assert fake.live() == {"mappings": 0, "registrations": 0, "streams": 0, "allocations": 0}


def test_cuda_frame_is_copied_device_to_device(fake, cuda_viewer):
    (v,) = cuda_viewer
    ctx = fake.retain(0)
    try:
        for fmt, typestr in [("nv12", "|u1"), ("p010", "<u2")]:
            luma, chroma = quadrant_planes(96, 64, fmt)
            with fake.current(ctx):
                lp, cp = fake.alloc(luma.tobytes()), fake.alloc(chroma.tobytes())
            before = {e: fake.call_count(e) for e in ("cuMemcpy2DAsync", "cuMemcpy2D", "cuMemcpyDtoH")}
            v.show((CaiDevice(lp, luma.shape, typestr), CaiDevice(cp, chroma.shape, typestr)),
                   colorimetry=handoff.Colorimetry("bt709", "limited"))
            assert fake.call_count("cuMemcpy2DAsync") == before["cuMemcpy2DAsync"] + 2, "one copy per plane"
            assert fake.call_count("cuMemcpy2D") == before["cuMemcpy2D"], "no synchronous copy"
            assert fake.call_count("cuMemcpyDtoH") == before["cuMemcpyDtoH"], "no host round trip"
            assert_quadrants(np.from_dlpack(v.snapshot()), fmt, "bt709", "limited")
            with fake.current(ctx):  # show() returned: the viewer holds nothing of the frame
                fake.free(lp)
                fake.free(cp)
        assert "CUDA" in v.stream["memory"], v.stream["memory"]
    finally:
        fake.release(0)


def test_acquire_hands_out_writable_cuda_planes(fake, cuda_viewer):
    (v,) = cuda_viewer
    luma, chroma = quadrant_planes(96, 64, "nv12")
    with v.acquire("nv12", 96, 64) as f:
        assert f.memory == "cuda"
        cai = f.luma.__cuda_array_interface__
        assert cai["data"][1] is False, "writable"
        assert f.luma.__dlpack_device__() == (kDLCUDA, 0)
        lp, cp = f.luma.__cuda_array_interface__["data"][0], f.chroma.__cuda_array_interface__["data"][0]
        ctx = fake.retain(0)
        with fake.current(ctx):  # a CUDA producer writes the viewer's buffer (pitched rows)
            for row in range(64):
                fake.lib.cuMemcpyHtoD_v2(lp + row * f.luma.pitch, luma[row].tobytes(), 96)
            for row in range(32):
                fake.lib.cuMemcpyHtoD_v2(cp + row * f.chroma.pitch, chroma[row].tobytes(), 96)
        fake.release(0)
        with pytest.raises(AttributeError, match="CUDA memory"):
            f.luma.__array_interface__
    assert_quadrants(np.from_dlpack(v.snapshot()), "nv12", "bt709", "limited")


def test_overlay_arrays_in_cuda_memory_are_read_once(fake, cuda_viewer):
    """boxes, scores, class and track ids and keypoints (N x K x 2) as CUDA arrays: one device-to-host copy
    each, drawn as the same host arrays are."""
    (v,) = cuda_viewer
    arrays = {
        "boxes": np.array([[20, 10, 40, 30], [50, 30, 30, 20]], np.float32),
        "scores": np.array([0.75, 0.5], np.float32),
        "class_ids": np.array([1, 7], np.int64),
        "track_ids": np.array([3, 12], np.int32),
        "keypoints": np.array([[[25, 15], [30, 20], [35, 25]], [[55, 35], [60, 40], [70, 45]]], np.float32),
    }
    ctx = fake.retain(0)
    try:
        with fake.current(ctx):
            pointers = {k: fake.alloc(a.tobytes()) for k, a in arrays.items()}
        frame = quadrant_planes(96, 64, "nv12")
        v.show(frame, **arrays)
        want = np.from_dlpack(v.snapshot()).copy()
        v.show(frame)
        assert not np.array_equal(np.from_dlpack(v.snapshot()), want), "the overlays are drawn"
        reads = fake.call_count("cuMemcpyDtoH")
        v.show(frame, **{k: DLPackDevice(a, pointers[k]) for k, a in arrays.items()})
        assert fake.call_count("cuMemcpyDtoH") == reads + len(arrays), "one copy per array"
        assert np.array_equal(np.from_dlpack(v.snapshot()), want)
        with fake.current(ctx):
            for p in pointers.values():
                fake.free(p)
    finally:
        fake.release(0)


def test_layers_from_cuda_arrays_show_as_from_host_arrays_with_no_host_copy(fake, cuda_viewer):
    """ClassMap / ScalarMap / InstanceMasks take CUDA arrays (DLPack) in place: the
    viewer copies them device to device, and the snapshot is the host arrays' one."""
    (v,) = cuda_viewer
    rng = np.random.default_rng(3)
    ids = rng.integers(-1, 5, (24, 33)).astype(np.int32)
    values = rng.random((24, 33)).astype(np.float32) * 50
    masks = rng.random((2, 24, 33)) > 0.6
    boxes = np.array([[2, 2, 40, 30], [20, 10, 60, 44]], np.float32)
    luma, chroma = quadrant_planes(96, 64, "nv12")

    def layers(wrap):
        return [handoff.ClassMap(wrap(ids), colors={-1: (250, 0, 0)}, transparent=[0], opacity=0.6),
                handoff.ScalarMap(wrap(values), colormap="turbo", opacity=0.7),
                handoff.ScalarMap(wrap(values), colormap="gray", range=(10, 40), opacity=0.3),
                handoff.InstanceMasks(wrap(masks), opacity=0.5)]

    ctx = fake.retain(0)
    try:
        with fake.current(ctx):
            lp, cp = fake.alloc(luma.tobytes()), fake.alloc(chroma.tobytes())
            device = {id(a): fake.alloc(a.tobytes()) for a in (ids, values, masks)}
        frame = (CaiDevice(lp, luma.shape, "|u1"), CaiDevice(cp, chroma.shape, "|u1"))
        v.show(frame, boxes=boxes, layers=layers(lambda a: a))
        want = np.from_dlpack(v.snapshot()).copy()
        host_copies, reads = fake.host_copies(), fake.call_count("cuMemcpyDtoH")
        v.show(frame, boxes=boxes, layers=layers(lambda a: DLPackDevice(a, device[id(a)])))
        assert fake.host_copies() == host_copies, "no copy from or to host memory"
        assert fake.call_count("cuMemcpyDtoH") == reads
        assert np.array_equal(np.from_dlpack(v.snapshot()), want)
        with fake.current(ctx):  # show() returned: the viewer holds nothing of the arrays
            for p in [lp, cp, *device.values()]:
                fake.free(p)
    finally:
        fake.release(0)


@pytest.mark.parametrize("dtype, left, right", [(np.uint32, 3_000_000_000, 3_000_000_001),
                                                (np.uint64, 2**64 - 1, 2**64 - 2)])
def test_wide_class_ids_from_cuda_arrays_are_their_values(fake, cuda_viewer, dtype, left, right):
    """Ids above 2**31 (and 2**63) from a CUDA array: coloured and made transparent by their values, as
    from a host array."""
    (v,) = cuda_viewer
    ids = np.full((24, 33), right, dtype)
    ids[:, :16] = left
    luma, chroma = quadrant_planes(96, 64, "nv12")
    frame = handoff.Frame.from_planes(luma, chroma)

    def shown(array):
        v.show(frame, layers=[handoff.ClassMap(array, colors={left: (250, 0, 0)}, transparent=[right], opacity=1.0)])
        return np.from_dlpack(v.snapshot()).copy()

    host = shown(ids)
    ctx = fake.retain(0)
    try:
        with fake.current(ctx):
            p = fake.alloc(ids.tobytes())
        on_device = shown(DLPackDevice(ids, p))
        assert np.array_equal(on_device, host)
        assert (np.abs(host[10, 5, :3].astype(int) - (250, 0, 0)) <= 1).all()
        with fake.current(ctx):
            fake.free(p)
    finally:
        fake.release(0)


def test_layers_from_cuda_arrays_in_a_viewer_without_cuda_are_refused(fake):
    v = handoff.Viewer(title="host", width=320, height=240, headless=True, memory="host")
    try:
        ids = np.zeros((8, 8), np.uint8)
        ctx = fake.retain(0)
        with fake.current(ctx):
            p = fake.alloc(ids.tobytes())
        with pytest.raises(handoff.InvalidFrame, match=r"layers\[0\].memory: .*no CUDA"):
            v.show(quadrant_planes(32, 32, "nv12"), layers=[handoff.ClassMap(DLPackDevice(ids, p))])
        v.show(quadrant_planes(32, 32, "nv12"), layers=[handoff.ClassMap(ids)])  # it goes on
        with fake.current(ctx):
            fake.free(p)
        fake.release(0)
    finally:
        v.close()


def test_cuda_frame_on_another_device_is_refused(fake, cuda_viewer):
    host = handoff.Frame.allocate(32, 32)
    other = handoff_testing.relabel_as_cuda(host, 1)
    with pytest.raises(handoff.InvalidFrame, match="device"):
        cuda_viewer[0].show(other)


@pytest.mark.parametrize("fmt", ["rgb8", "gray16", "i420", "nv12"])
def test_cuda_frame_on_another_device_is_named_whatever_the_format(fake, cuda_viewer, fmt):
    """Before the ring's own checks (which refuse formats it cannot draw yet), a CUDA frame on another
    device than the viewer's is refused naming the frame and both devices."""
    other = handoff_testing.relabel_as_cuda(handoff.Frame.allocate(32, 32, fmt), 1)
    with pytest.raises(handoff.InvalidFrame, match="frame.device: a CUDA frame on device 1; this viewer is on "
                                                   "CUDA device 0"):
        cuda_viewer[0].show(other)


@pytest.mark.parametrize("fmt,shape,typestr", [
    ("rgb8", (6, 10, 3), "|u1"), ("bgra8", (6, 10, 4), "|u1"), ("yuyv", (6, 10, 2), "|u1"),
    ("gray16", (6, 10), "<u2"), ("gray32f", (6, 10), "<f4")])
def test_cuda_one_plane_arrays_import_and_export_without_a_copy(fake, fmt, shape, typestr):
    """A pitched CUDA array (CAI) becomes a CUDA frame over the same device memory, and exports the same
    shape back through __cuda_array_interface__ (metadata: the fake's memory is not read here)."""
    ctx = fake.retain(0)
    try:
        item = int(typestr[2:])
        pitch = 64 * item * (shape[2] if len(shape) == 3 else 1)
        with fake.current(ctx):
            ptr = fake.alloc(bytes(pitch * shape[0]))
        strides = (pitch, item * shape[2], item) if len(shape) == 3 else (pitch, item)
        f = handoff.Frame.from_arrays(CaiDevice(ptr, shape, typestr, strides), format=fmt, device=0)
        assert f.memory == "cuda" and f.format == fmt and f.pixels.ptr == ptr and f.pixels.pitch == pitch
        cai = f.pixels.__cuda_array_interface__
        assert cai["shape"] == shape and cai["strides"] == strides and cai["typestr"] == typestr
        assert cai["data"] == (ptr, True)
        del f
        gc.collect()
        with fake.current(ctx):
            fake.free(ptr)
    finally:
        fake.release(0)


@pytest.mark.parametrize("fmt,shape,typestr", [("gray16", (6, 10), "<u2"), ("rgb8", (5, 7, 3), "|u1")])
def test_a_cuda_plane_asked_for_on_the_host_is_copied_to_it(fake, fmt, shape, typestr):
    """DLPack's dl_device=(kDLCPU, 0) (NumPy's from_dlpack(device="cpu")) on a CUDA plane: a host copy,
    made device to host from the pitched rows, writable, flagged IS_COPIED; never with copy=False."""
    want = (np.arange(int(np.prod(shape))) * 7 % 251).astype(np.dtype(typestr)).reshape(shape)
    item = want.itemsize
    row = item * int(np.prod(shape[1:]))
    pitch = 128
    rows = np.zeros((shape[0], pitch), np.uint8)
    rows[:, :row] = want.reshape(shape[0], -1).view(np.uint8)
    strides = (pitch, item * shape[2], item) if len(shape) == 3 else (pitch, item)
    ctx = fake.retain(0)
    try:
        with fake.current(ctx):
            ptr = fake.alloc(rows.tobytes())
        f = handoff.Frame.from_arrays(CaiDevice(ptr, shape, typestr, strides), format=fmt, device=0)
        before = fake.call_count("cuMemcpy2D") + fake.call_count("cuMemcpy2DAsync")
        got = np.from_dlpack(f.pixels, device="cpu")
        assert fake.call_count("cuMemcpy2D") + fake.call_count("cuMemcpy2DAsync") > before, "copied by CUDA"
        np.testing.assert_array_equal(got, want)
        assert got.flags.writeable and got.flags.c_contiguous
        with pytest.raises(BufferError, match="copy=False"):
            f.pixels.__dlpack__(dl_device=(1, 0), copy=False)
        with pytest.raises(BufferError, match=r"dl_device \(2, 1\) is neither"):
            f.pixels.__dlpack__(dl_device=(2, 1))
        del f, got
        gc.collect()
        with fake.current(ctx):
            fake.free(ptr)
    finally:
        fake.release(0)


def test_a_layer_on_another_device_is_refused_and_the_viewer_goes_on(fake, cuda_viewer):
    (v,) = cuda_viewer
    ids = np.ones((24, 33), np.uint8)
    frame = quadrant_planes(96, 64, "nv12")
    ctx = fake.retain(0)
    try:
        with fake.current(ctx):
            p = fake.alloc(ids.tobytes())
        with pytest.raises(ValueError, match=r"layers\[0\]\.ids\.device"):
            v.show(frame, layers=[handoff.ClassMap(DLPackDevice(ids, p, device=1), opacity=1.0)])
        v.show(frame, layers=[handoff.ClassMap(DLPackDevice(ids, p), colors={1: (0, 255, 0)}, opacity=1.0)])
        assert np.abs(np.from_dlpack(v.snapshot())[30, 40, :3].astype(int) - (0, 255, 0)).max() <= 1
        with fake.current(ctx):
            fake.free(p)
    finally:
        fake.release(0)
