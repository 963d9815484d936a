"""Export: NumPy consumes handoff planes through both capsule kinds, the buffer
protocol and __array_interface__, as views of the same memory."""
import ctypes

import numpy as np
import pytest

import handoff
import handoff_testing
from conftest import CapsuleProducer, LegacyOnly, capsule_name, expected_pattern

SIZES = [(33, 17), (64, 48), (1, 1), (2, 3)]


@pytest.mark.parametrize("fmt", ["nv12", "p010"])
@pytest.mark.parametrize("kind", ["versioned", "legacy"])
@pytest.mark.parametrize("size", SIZES)
def test_numpy_from_dlpack_views_same_memory(fmt, kind, size, no_leaks):
    w, h = size
    f = handoff.Frame.allocate(w, h, fmt, alignment=64)
    f.fill_test_pattern(seed=3)
    want_luma, want_chroma = expected_pattern(w, h, fmt, 3)
    for plane, want in ((f.luma, want_luma), (f.chroma, want_chroma)):
        src = plane if kind == "versioned" else LegacyOnly(plane)
        a = np.from_dlpack(src)
        assert a.__array_interface__["data"][0] == plane.ptr  # same address: a view, no copy
        assert a.shape == plane.shape == want.shape
        assert a.strides == plane.strides
        assert a.strides[0] == plane.pitch
        assert a.dtype == (np.uint8 if fmt == "nv12" else np.uint16)
        # Versioned capsules carry the read-only flag (NumPy >= 2.1 honours it);
        # NumPy 2.x also makes arrays from legacy capsules read-only.
        assert not a.flags.writeable
        np.testing.assert_array_equal(a, want)


def test_pitch_above_row():
    f = handoff.Frame.allocate(33, 17, "p010", alignment=256)
    assert f.luma.pitch == 256
    assert f.luma.strides == (256, 2)
    assert f.chroma.strides == (256, 4, 2)
    assert f.chroma.shape == (9, 17, 2)


@pytest.mark.parametrize("max_version,name", [
    (None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"),
    ((1, 3), "dltensor_versioned"), ((2, 0), "dltensor_versioned")])
def test_capsule_kind_negotiation(max_version, name, no_leaks):
    f = handoff.Frame.allocate(8, 8)
    cap = f.luma.__dlpack__(max_version=max_version)
    assert capsule_name(cap) == name


def test_dlpack_device_host():
    f = handoff.Frame.allocate(8, 8)
    assert f.luma.__dlpack_device__() == (1, 0)
    assert f.__dlpack_device__() == (1, 0)


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def versioned_flags(cap):
    """DLManagedTensorVersioned::flags: after version (8 bytes), manager_ctx and deleter."""
    return ctypes.c_uint64.from_address(_get_pointer(cap, b"dltensor_versioned") + 24).value


@pytest.mark.parametrize("fmt", ["nv12", "p010", "yuyv", "rgb8", "gray16", "gray32f"])
def test_copy_true_makes_a_writable_copy(fmt, no_leaks):
    """DLPack: copy=True "must always copy (performed by the producer)", and the copy says so
    (DLPACK_FLAG_BITMASK_IS_COPIED); it is the consumer's own, so not read-only."""
    f = handoff.Frame.allocate(33, 17, fmt, alignment=64)
    f.fill_test_pattern(seed=5)
    for plane in f.planes:
        view = np.from_dlpack(plane)
        own = np.from_dlpack(plane, copy=True)
        assert own.__array_interface__["data"][0] != plane.ptr
        assert own.flags.writeable and own.flags.c_contiguous
        np.testing.assert_array_equal(own, view)
        own[...] = 0
        assert (view != 0).any(), "the plane is untouched"
        assert versioned_flags(plane.__dlpack__(max_version=(1, 0), copy=True)) == 2  # IS_COPIED, not READ_ONLY
        assert versioned_flags(plane.__dlpack__(max_version=(1, 0))) == 1  # READ_ONLY
        legacy = np.from_dlpack(CapsuleProducer(plane.__dlpack__(copy=True)))
        np.testing.assert_array_equal(legacy, view)
        plane.__dlpack__(copy=False)  # no copy needed: accepted


def test_bad_dlpack_arguments_are_type_errors_naming_them():
    f = handoff.Frame.allocate(8, 8)

    class Falsy:
        def __bool__(self):
            raise ValueError("no truth here")

    with pytest.raises(ValueError, match="no truth here"):  # copy's own __bool__ error
        f.luma.__dlpack__(copy=Falsy())
    for kw, word in [(dict(dl_device=[1, 0]), "dl_device"), (dict(dl_device=("a", 0)), "dl_device"),
                     (dict(dl_device=(1,)), "dl_device"), (dict(max_version=[1, 0]), "max_version"),
                     (dict(max_version=(1.0, 0)), "max_version"), (dict(max_version=()), "max_version"),
                     (dict(max_version=(2 ** 70, 0)), "max_version")]:
        with pytest.raises(TypeError, match=word):
            f.luma.__dlpack__(**kw)
    c = handoff_testing.relabel_as_cuda(f, 0)
    with pytest.raises(TypeError, match="stream"):
        c.luma.__dlpack__(stream="1")


def test_foreign_dl_device_refused():
    f = handoff.Frame.allocate(8, 8)
    with pytest.raises(BufferError, match=r"dl_device \(2, 0\)"):
        f.chroma.__dlpack__(dl_device=(2, 0))
    f.chroma.__dlpack__(dl_device=(1, 0))  # its own device: fine


def test_stream_rules():
    f = handoff.Frame.allocate(8, 8)
    with pytest.raises(ValueError, match="stream"):
        f.luma.__dlpack__(stream=1)  # CPU has no streams
    c = handoff_testing.relabel_as_cuda(f, 0)
    for ok in (None, -1, 1, 2, 0x7F00_0000):
        c.luma.__dlpack__(stream=ok)
    for bad in (0, -2):
        with pytest.raises(ValueError, match="stream"):
            c.luma.__dlpack__(stream=bad)


def test_keyword_only_arguments():
    f = handoff.Frame.allocate(8, 8)
    with pytest.raises(TypeError):
        f.luma.__dlpack__(None)


def test_buffer_protocol_read_only_view():
    f = handoff.Frame.allocate(33, 17, "p010", alignment=128)
    f.fill_test_pattern(seed=9)
    want_luma, want_chroma = expected_pattern(33, 17, "p010", 9)
    m = memoryview(f.chroma)
    assert m.readonly
    assert m.shape == (9, 17, 2)
    assert m.strides == (128, 4, 2)
    a = np.asarray(f.chroma)
    assert a.__array_interface__["data"][0] == f.chroma.ptr
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, want_chroma)
    np.testing.assert_array_equal(np.asarray(memoryview(f.luma)), want_luma)
    assert bytes(f.luma) == np.from_dlpack(f.luma).tobytes()  # strided request, packed by Python


def test_buffer_protocol_simple_request_on_packed_plane():
    f = handoff.Frame.allocate(16, 2, "nv12", alignment=16)  # pitch == row: packed
    f.fill_test_pattern(seed=0)
    assert bytes(f.luma) == np.from_dlpack(f.luma).tobytes()


class PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
                ("internal", ctypes.c_void_p)]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(PyBuffer), ctypes.c_int]
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(PyBuffer)]
PYBUF_STRIDES, PYBUF_C_CONTIGUOUS, PYBUF_F_CONTIGUOUS, PYBUF_ANY_CONTIGUOUS = 0x18, 0x38, 0x58, 0x98


def buffer_strides(obj, flags):
    """PyObject_GetBuffer(obj, flags) as a C consumer asks: the strides it got (BufferError raised)."""
    view = PyBuffer()
    _get_buffer(obj, ctypes.byref(view), flags)
    try:
        return tuple(view.strides[i] for i in range(view.ndim))
    finally:
        _release_buffer(ctypes.byref(view))


def test_buffer_protocol_contiguity_requests_are_met_or_refused():
    """The buffer protocol: "If the exporter cannot provide a buffer of the exact type, it MUST raise
    BufferError". A pitched plane is not C-contiguous; a packed one is, and never in Fortran order."""
    pitched = handoff.Frame.allocate(6, 4, "gray8", alignment=256)
    assert buffer_strides(pitched.pixels, PYBUF_STRIDES) == (256, 1)
    for flags in (PYBUF_C_CONTIGUOUS, PYBUF_ANY_CONTIGUOUS, PYBUF_F_CONTIGUOUS):
        with pytest.raises(BufferError, match="not contiguous"):
            buffer_strides(pitched.pixels, flags)
    packed = handoff.Frame.allocate(16, 2, "nv12", alignment=16)
    assert buffer_strides(packed.luma, PYBUF_C_CONTIGUOUS) == (16, 1)
    assert buffer_strides(packed.chroma, PYBUF_ANY_CONTIGUOUS) == (16, 2, 1)
    with pytest.raises(BufferError, match="not Fortran order"):
        buffer_strides(packed.luma, PYBUF_F_CONTIGUOUS)
    row = handoff.Frame.allocate(16, 1, "gray8", alignment=16)  # one row: both orders at once
    assert buffer_strides(row.pixels, PYBUF_F_CONTIGUOUS) == (16, 1)


def test_array_interface_host():
    f = handoff.Frame.allocate(10, 6, "nv12", alignment=16)
    d = f.luma.__array_interface__
    assert d == {"shape": (6, 10), "typestr": "|u1", "data": (f.luma.ptr, True),
                 "strides": (16, 1), "version": 3}
    assert not hasattr(f.luma, "__cuda_array_interface__")


def test_cuda_array_interface_on_cuda_planes():
    # Host memory described as CUDA memory (no GPU here): checks the dict and the
    # DLPack device, not that any CUDA consumer can read it.
    f = handoff_testing.relabel_as_cuda(handoff.Frame.allocate(33, 17, "p010", alignment=64), 1)
    d = f.chroma.__cuda_array_interface__
    assert d == {"shape": (9, 17, 2), "typestr": "<u2", "data": (f.chroma.ptr, True),
                 "strides": (128, 4, 2), "version": 3, "stream": None}
    assert f.luma.__dlpack_device__() == (2, 1)
    assert f.memory == "cuda" and f.device == 1
    assert not hasattr(f.luma, "__array_interface__")
    with pytest.raises(BufferError):
        memoryview(f.luma)
    with pytest.raises((BufferError, RuntimeError)):
        np.from_dlpack(f.luma)  # NumPy refuses a CUDA tensor
    # The host asked for: a copy, which needs CUDA (the fakecuda tier copies for real)...
    with pytest.raises(BufferError, match=r"the copy to the host \(copy=True or dl_device \(1, 0\)\) failed"):
        f.luma.__dlpack__(dl_device=(1, 0))
    # ... and never with copy=False.
    with pytest.raises(BufferError, match=r"dl_device \(1, 0\) with copy=False"):
        f.luma.__dlpack__(dl_device=(1, 0), copy=False)
    # DLPack: a copy is made on the device asked for (None: the array's own), and
    # handoff copies to the host only: never a host tensor for a CUDA request.
    for request in ({"copy": True}, {"copy": True, "dl_device": (2, 1)},
                    {"copy": True, "dl_device": (2, 1), "max_version": (1, 0)}):
        with pytest.raises(BufferError, match=r"copy=True of an array in CUDA memory: .* dl_device=\(1, 0\)"):
            f.luma.__dlpack__(**request)
    # A stream is for CUDA consumers: none for an export to the host.
    with pytest.raises(ValueError, match=r"stream: must be None for an export to the host"):
        f.luma.__dlpack__(dl_device=(1, 0), stream=1)


def test_stacked_frame_exports_whole():
    f = handoff.Frame.allocate(10, 5, "nv12", alignment=16)
    f.fill_test_pattern(seed=1)
    assert f.is_stacked
    a = np.from_dlpack(f)
    assert a.shape == (5 + 3, 10)
    want_luma, want_chroma = expected_pattern(10, 5, "nv12", 1)
    np.testing.assert_array_equal(a[:5], want_luma)
    np.testing.assert_array_equal(a[5:].reshape(3, 5, 2), want_chroma)
    odd = handoff.Frame.allocate(11, 5)
    assert not odd.is_stacked
    with pytest.raises(BufferError, match="stacked"):
        np.from_dlpack(odd)


def test_copy_from_writes_plane():
    f = handoff.Frame.allocate(5, 3, "p010", alignment=32)
    src = (np.arange(15, dtype=np.uint16).reshape(3, 5) << 6)
    f.luma.copy_from(src)
    np.testing.assert_array_equal(np.from_dlpack(f.luma), src)
    with pytest.raises(ValueError, match="shape"):
        f.luma.copy_from(np.zeros((3, 4), np.uint16))
    g = handoff.Frame.from_planes(np.from_dlpack(f.luma), np.from_dlpack(f.chroma), "p010")
    with pytest.raises(ValueError, match="writable"):
        g.luma.copy_from(src)  # imported frames belong to their producer


def test_properties_and_colorimetry():
    c = handoff.Colorimetry(matrix="bt2020", range="full", siting="topleft")
    f = handoff.Frame.allocate(4, 4, "p010", colorimetry=c)
    assert f.colorimetry == c
    assert (f.colorimetry.matrix, f.colorimetry.range, f.colorimetry.siting) == ("bt2020", "full", "topleft")
    assert f.format == "p010" and f.width == 4 and f.height == 4
    assert f.memory == "host" and f.device == -1 and f.cuda_context is None
    assert f.index == 0 and f.timestamp == 0.0
    assert [p.name for p in f.planes] == ["luma", "chroma"]
    with pytest.raises(ValueError, match="matrix"):
        handoff.Colorimetry(matrix="bt999")
    with pytest.raises(ValueError, match="format"):
        handoff.Frame.allocate(4, 4, "yuv420")


def test_allocate_refusals():
    with pytest.raises(handoff.InvalidFrame, match="width is 0"):
        handoff.Frame.allocate(0, 4)
    with pytest.raises(handoff.InvalidFrame, match="height 40000 exceeds"):
        handoff.Frame.allocate(4, 40000)
    with pytest.raises(ValueError, match="alignment"):
        handoff.Frame.allocate(4, 4, alignment=3)


# --- every format ----------------------------------------------------------------------------
# (name, planes as (rows, cols, channels or None), numpy dtype) for a W x H frame.
def format_planes(fmt, w, h):
    ch, cw = (h + 1) // 2, (w + 1) // 2
    return {
        "nv12": ([(h, w, None), (ch, cw, 2)], np.uint8),
        "p010": ([(h, w, None), (ch, cw, 2)], np.uint16),
        "i420": ([(h, w, None), (ch, cw, None), (ch, cw, None)], np.uint8),
        "yuyv": ([(h, 2 * cw, 2)], np.uint8),
        "uyvy": ([(h, 2 * cw, 2)], np.uint8),
        "rgb8": ([(h, w, 3)], np.uint8),
        "bgr8": ([(h, w, 3)], np.uint8),
        "rgba8": ([(h, w, 4)], np.uint8),
        "bgra8": ([(h, w, 4)], np.uint8),
        "gray8": ([(h, w, None)], np.uint8),
        "gray16": ([(h, w, None)], np.uint16),
        "gray32f": ([(h, w, None)], np.float32),
    }[fmt]


ALL_FORMATS = ["nv12", "p010", "i420", "yuyv", "uyvy", "rgb8", "bgr8", "rgba8", "bgra8", "gray8", "gray16",
               "gray32f"]
PLANE_NAMES = {"nv12": ("luma", "chroma"), "p010": ("luma", "chroma"), "i420": ("luma", "u", "v")}


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("kind", ["versioned", "legacy"])
def test_every_format_exports_its_planes_hwc(fmt, kind, no_leaks):
    """Each plane: shape (rows, cols[, channels]), the frame's pitch as the row stride, the format's dtype,
    the same memory; what copy_from wrote is what NumPy reads."""
    w, h = 7, 5
    f = handoff.Frame.allocate(w, h, fmt, alignment=64)
    shapes, dtype = format_planes(fmt, w, h)
    names = PLANE_NAMES.get(fmt, ("pixels",))
    assert [p.name for p in f.planes] == list(names)
    rng = np.random.default_rng(7)
    for (rows, cols, c), name, plane in zip(shapes, names, f.planes):
        want_shape = (rows, cols) if c is None else (rows, cols, c)
        src = (rng.random(want_shape, np.float32) if dtype == np.float32
               else rng.integers(0, np.iinfo(dtype).max, want_shape, dtype=dtype))
        plane.copy_from(src)
        a = np.from_dlpack(plane if kind == "versioned" else LegacyOnly(plane))
        assert a.shape == want_shape == plane.shape
        assert a.dtype == dtype and plane.dtype == np.dtype(dtype).name
        assert a.strides[0] == plane.pitch == 64
        assert a.strides[1:] == np.empty(want_shape, dtype).strides[1:]  # packed inside the row
        assert a.__array_interface__["data"][0] == plane.ptr
        assert not a.flags.writeable
        np.testing.assert_array_equal(a, src)
        # The buffer protocol and __array_interface__ say the same.
        b = np.asarray(plane)
        assert b.shape == want_shape and b.strides == a.strides and b.dtype == dtype
        assert np.asarray(memoryview(plane)).dtype == dtype
        np.testing.assert_array_equal(b, src)
        assert getattr(f, name).ptr == plane.ptr


@pytest.mark.parametrize("fmt", ["yuyv", "uyvy", "rgb8", "bgr8", "rgba8", "bgra8", "gray8", "gray16", "gray32f"])
def test_one_plane_frame_exports_itself(fmt, no_leaks):
    f = handoff.Frame.allocate(6, 4, fmt, alignment=32)
    f.fill_test_pattern(seed=2)
    a = np.from_dlpack(f)
    assert a.__array_interface__["data"][0] == f.pixels.ptr
    np.testing.assert_array_equal(a, np.from_dlpack(f.pixels))
    with pytest.raises(ValueError, match=f"frame.luma: a {fmt} frame has no luma plane; it has frame.pixels"):
        f.luma
    with pytest.raises(ValueError, match="has no chroma plane"):
        f.chroma


def test_i420_has_no_stacked_tensor():
    f = handoff.Frame.allocate(8, 4, "i420", alignment=16)
    assert not f.is_stacked
    with pytest.raises(BufferError, match="i420 frame has no stacked tensor"):
        np.from_dlpack(f)
    assert f.u.shape == f.v.shape == (2, 4)
    with pytest.raises(ValueError, match="has no pixels plane; it has frame.luma, frame.u, frame.v"):
        f.pixels
