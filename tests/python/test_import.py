"""Frame.from_planes: NumPy (DLPack), buffer-protocol and CAI producers, and
every refusal naming its field."""
import re

import numpy as np
import pytest

import handoff
from conftest import run_isolated


def pitched(h, w, dtype, pitch_elems, comps=None, fill=None):
    """A view with row stride pitch_elems inside a larger array, as decoders hand out."""
    shape = (h, pitch_elems) if comps is None else (h, pitch_elems // comps, comps)
    big = np.zeros(shape, dtype)
    view = big[:, :w] if comps is None else big[:, :w, :]
    if fill is not None:
        view[...] = fill
    return view


def rand(shape, dtype, top):
    rng = np.random.default_rng(1)
    return rng.integers(0, top, size=shape, dtype=dtype)


@pytest.mark.parametrize("fmt,dtype,top", [("nv12", np.uint8, 256), ("p010", np.uint16, 1 << 16)])
def test_round_trip_aliases_original_memory(fmt, dtype, top, no_leaks):
    luma = pitched(17, 33, dtype, 48, fill=rand((17, 33), dtype, top))
    chroma = pitched(9, 17, dtype, 40, comps=2, fill=rand((9, 17, 2), dtype, top))
    f = handoff.Frame.from_planes(luma, chroma, format=fmt,
                                  colorimetry=handoff.Colorimetry("bt601", "full"))
    assert (f.width, f.height, f.format, f.memory) == (33, 17, fmt, "host")
    assert f.colorimetry == handoff.Colorimetry("bt601", "full")
    assert f.luma.ptr == luma.ctypes.data
    assert f.chroma.ptr == chroma.ctypes.data
    assert f.luma.pitch == luma.strides[0]
    y = np.from_dlpack(f.luma)
    c = np.from_dlpack(f.chroma)
    assert y.ctypes.data == luma.ctypes.data and y.strides == luma.strides
    assert c.ctypes.data == chroma.ctypes.data and c.strides == chroma.strides
    np.testing.assert_array_equal(y, luma)
    np.testing.assert_array_equal(c, chroma)
    luma[0, 0] = 42  # the producer writes; the frame sees it (same memory)
    assert y[0, 0] == 42


def test_buffer_protocol_producer(no_leaks):
    raw = bytearray(range(256)) * 4
    luma = memoryview(raw)[: 6 * 10].cast("B", shape=[6, 10])
    chroma = memoryview(raw)[512: 512 + 3 * 10].cast("B", shape=[3, 5, 2])
    f = handoff.Frame.from_planes(luma, chroma)
    a = np.from_dlpack(f.luma)
    np.testing.assert_array_equal(a, np.asarray(luma))
    assert a.ctypes.data == np.frombuffer(raw, np.uint8).ctypes.data


class CaiProducer:
    """A CUDA Array Interface producer over host memory (no GPU here): checks
    the parsing and the CUDA frame description, not device access."""

    def __init__(self, array, strides=None, typestr=None, stream=None):
        self.array = array
        self.__cuda_array_interface__ = {
            "shape": array.shape, "typestr": typestr or array.dtype.str,
            "data": (array.ctypes.data, False),
            "strides": array.strides if strides is None else strides,
            "version": 3, "stream": stream,
        }


def test_cai_producer_gives_cuda_frame(no_leaks):
    luma = pitched(17, 33, np.uint16, 40)
    chroma = pitched(9, 17, np.uint16, 36, comps=2)
    f = handoff.Frame.from_planes(CaiProducer(luma), CaiProducer(chroma), "p010", device=0)
    assert f.memory == "cuda" and f.device == 0
    assert f.luma.ptr == luma.ctypes.data
    assert f.luma.__cuda_array_interface__["strides"] == (80, 2)
    assert f.__dlpack_device__() == (2, 0)


def test_cai_odd_strides_refused():
    buf = np.zeros(4096, np.uint8)
    luma = np.ndarray((17, 33), "<u2", buffer=buf, strides=(67, 2))
    chroma = pitched(9, 17, np.uint16, 36, comps=2)
    with pytest.raises(handoff.InvalidFrame, match=r"luma.strides.*not a whole number of 2-byte samples"):
        handoff.Frame.from_planes(CaiProducer(luma), CaiProducer(chroma), "p010")


def test_buffer_odd_strides_refused():
    buf = np.zeros(4096, np.uint8)
    luma = np.ndarray((17, 33), "<u2", buffer=buf, strides=(67, 2))
    chroma = pitched(9, 17, np.uint16, 36, comps=2)
    with pytest.raises(handoff.InvalidFrame, match=r"luma.strides.*67, 2.*2-byte samples"):
        handoff.Frame.from_planes(memoryview(luma), chroma, "p010")


def test_big_endian_arrays_refused_by_name():
    """NumPy cannot export big-endian samples over DLPack: the BufferError it raises becomes the bad frame,
    naming the plane and what is wrong, as every other bad array does."""
    with pytest.raises(handoff.InvalidFrame, match=r"frame.dtype: dtype >u2 is big-endian: .*astype\('<u2'\)"):
        handoff.Frame.from_arrays(np.zeros((4, 4), ">u2"))
    with pytest.raises(handoff.InvalidFrame, match=r"luma.dtype: dtype >u2 is big-endian"):
        handoff.Frame.from_planes(np.zeros((4, 4), ">u2"), np.zeros((2, 2, 2), np.uint16), "p010")


def test_wrong_dtype_refused():
    with pytest.raises(handoff.InvalidFrame, match=r"luma.dtype: dtype int16 does not fit nv12"):
        handoff.Frame.from_planes(np.zeros((4, 4), np.int16), np.zeros((2, 2, 2), np.uint8))
    with pytest.raises(handoff.InvalidFrame, match=r"chroma.dtype: dtype uint8 does not fit p010"):
        handoff.Frame.from_planes(np.zeros((4, 4), np.uint16), np.zeros((2, 2, 2), np.uint8), "p010")
    with pytest.raises(handoff.InvalidFrame, match=r"luma.dtype: dtype float32"):
        handoff.Frame.from_planes(np.zeros((4, 4), np.float32), np.zeros((2, 2, 2), np.uint8))


def test_wrong_shape_refused():
    with pytest.raises(handoff.InvalidFrame, match=r"chroma.shape: shape \(8, 17, 2\) does not fit nv12 33x17"):
        handoff.Frame.from_planes(np.zeros((17, 33), np.uint8), np.zeros((8, 17, 2), np.uint8))
    with pytest.raises(handoff.InvalidFrame, match=r"luma.ndim"):
        handoff.Frame.from_planes(np.zeros((17, 33, 1), np.uint8), np.zeros((9, 17, 2), np.uint8))
    with pytest.raises(handoff.InvalidFrame, match=r"chroma.ndim"):
        handoff.Frame.from_planes(np.zeros((17, 33), np.uint8), np.zeros((9, 34), np.uint8))
    with pytest.raises(handoff.InvalidFrame, match=r"luma.shape"):
        handoff.Frame.from_planes(np.zeros((0, 4), np.uint8), np.zeros((0, 2, 2), np.uint8))


def test_non_packed_rows_refused():
    big = np.zeros((17, 66), np.uint8)
    with pytest.raises(handoff.InvalidFrame, match=r"luma.strides.*packed rows"):
        handoff.Frame.from_planes(big[:, ::2], np.zeros((9, 17, 2), np.uint8))
    planar = np.zeros((2, 9, 17), np.uint8).transpose(1, 2, 0)  # U and V planes, not interleaved
    with pytest.raises(handoff.InvalidFrame, match=r"chroma.strides.*packed rows"):
        handoff.Frame.from_planes(np.zeros((17, 33), np.uint8), planar)


def test_negative_strides_refused():
    luma = np.zeros((17, 33), np.uint8)[::-1]
    with pytest.raises(handoff.InvalidFrame, match=r"luma.strides.*negative"):
        handoff.Frame.from_planes(luma, np.zeros((9, 17, 2), np.uint8))


def test_row_stride_below_packed_row_refused():
    buf = np.zeros(4096, np.uint8)
    luma = np.ndarray((17, 33), np.uint8, buffer=buf, strides=(20, 1))  # rows overlap
    with pytest.raises(handoff.InvalidFrame, match=r"luma.strides: row stride 20 elements is below"):
        handoff.Frame.from_planes(memoryview(luma), np.zeros((9, 17, 2), np.uint8))


class ForeignDevice:
    def __init__(self, array, device):
        self.array, self.device = array, device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        raise AssertionError("must be refused before asking for the tensor")


def test_foreign_device_refused():
    with pytest.raises(handoff.InvalidFrame, match=r"luma.device: device \(4, 0\) is not supported"):
        handoff.Frame.from_planes(ForeignDevice(np.zeros((4, 4), np.uint8), (4, 0)), np.zeros((2, 2, 2), np.uint8))


def test_mixed_devices_refused():
    luma = np.zeros((4, 4), np.uint8)
    chroma = np.zeros((2, 2, 2), np.uint8)
    with pytest.raises(handoff.InvalidFrame, match=r"chroma.device: chroma is on cuda:0, luma on cpu:0"):
        handoff.Frame.from_planes(luma, CaiProducer(chroma), device=0)


BAD_PROTOCOL = r"""
import ast, sys
import numpy as np
import handoff
case = sys.argv[1]
interface = {"shape": (4, 6), "typestr": "|u1", "version": 3}
class Interface:
    __array_interface__ = {**interface, "data": ast.literal_eval(case) if case.startswith("(") else ()}
class Cai:
    __cuda_array_interface__ = {**interface, "data": ()}
class Device:
    def __init__(self): self.a = np.zeros((4, 6), np.uint8)
    def __dlpack__(self, **kwargs): return self.a.__dlpack__(**kwargs)
    def __dlpack_device__(self): return ast.literal_eval(case.split(":")[1])
producer = Cai() if case == "cai" else Device() if case.startswith("device:") else Interface()
try:
    handoff.Frame.from_arrays(producer)
    print("accepted")
except Exception as e:
    print(type(e).__name__, e)
"""


@pytest.mark.parametrize("case,message", [
    ("()", r"InvalidFrame frame.data: __array_interface__ data \(\) is not a \(pointer, read_only\) tuple"),
    ("(4096,)", r"InvalidFrame frame.data: __array_interface__ data \(4096,\) is not a \(pointer, read_only\)"),
    ("cai", r"InvalidFrame frame.data: __cuda_array_interface__ data \(\) is not a \(pointer, read_only\)"),
    ("device:(1,)", r"TypeError frame.device: __dlpack_device__\(\) returned \(1,\), not a \(device_type, "
                    r"device_id\) tuple"),
    ("device:()", r"TypeError frame.device: __dlpack_device__\(\) returned \(\), not a"),
    ("device:[1, 0]", r"TypeError frame.device: __dlpack_device__\(\) returned \[1, 0\], not a"),
    ("device:('a', 0)", r"TypeError frame.device: __dlpack_device__\(\) returned \('a', 0\), not a \(device_type, "
                        r"device_id\) tuple")])
def test_short_protocol_tuples_refused_by_name(case, message):
    """An interface's data or __dlpack_device__() shorter than the protocol says was read past its end
    (a crash): refused, naming the attribute. In a process of its own, as a crash would end the tier."""
    assert re.fullmatch(message + ".*", run_isolated(BAD_PROTOCOL, case).strip())


def test_not_a_producer_refused():
    with pytest.raises(TypeError, match="luma: .*int.* is not a DLPack"):
        handoff.Frame.from_planes(3, np.zeros((2, 2, 2), np.uint8))
    with pytest.raises(ValueError, match="format"):
        handoff.Frame.from_planes(np.zeros((4, 4), np.uint8), np.zeros((2, 2, 2), np.uint8), "i420")


def test_read_only_producer_accepted():
    luma = np.zeros((4, 4), np.uint8)
    luma.flags.writeable = False
    chroma = np.zeros((2, 2, 2), np.uint8)
    f = handoff.Frame.from_planes(luma, chroma)
    assert f.luma.ptr == luma.ctypes.data


# --- every format: Frame.from_arrays and the ambiguity rule -----------------------------------
@pytest.mark.parametrize("fmt,shape,dtype", [
    ("rgb8", (5, 7, 3), np.uint8), ("bgr8", (5, 7, 3), np.uint8), ("rgba8", (5, 7, 4), np.uint8),
    ("bgra8", (5, 7, 4), np.uint8), ("yuyv", (5, 8, 2), np.uint8), ("uyvy", (5, 8, 2), np.uint8),
    ("gray8", (5, 7), np.uint8), ("gray16", (5, 7), np.uint16), ("gray32f", (5, 7), np.float32)])
def test_one_plane_formats_from_pitched_views_without_a_copy(fmt, shape, dtype, no_leaks):
    """A view into wider rows (a crop): the frame points at the array's memory with its pitch."""
    storage = np.arange(np.prod((5, 40) + shape[2:]), dtype=dtype).reshape((5, 40) + shape[2:])
    view = storage[:, 3:3 + shape[1]]
    f = handoff.Frame.from_arrays(view, format=fmt)
    assert f.format == fmt and (f.width, f.height) == (shape[1], shape[0])
    assert f.pixels.ptr == view.ctypes.data
    assert f.pixels.pitch == storage.strides[0]
    np.testing.assert_array_equal(np.from_dlpack(f.pixels), view)
    del view, storage  # the frame holds its producer
    assert np.from_dlpack(f.pixels).shape == shape


def test_i420_from_three_arrays():
    y = np.zeros((5, 16), np.uint8)[:, :7]
    u = np.full((3, 4), 1, np.uint8)
    v = np.full((3, 4), 2, np.uint8)
    f = handoff.Frame.from_arrays(y, u, v)  # three arrays: i420
    assert f.format == "i420" and (f.width, f.height) == (7, 5)
    assert f.luma.pitch == 16 and f.v.ptr == v.ctypes.data
    with pytest.raises(ValueError, match="v.shape"):
        handoff.Frame.from_arrays(y, u, np.zeros((3, 3), np.uint8))
    with pytest.raises(ValueError, match="'i420' takes three arrays"):
        handoff.Frame.from_arrays(np.zeros((9, 8), np.uint8), format="i420")


# The rule: without format=, the shape and dtype say the format; format= always wins.
@pytest.mark.parametrize("shape,dtype,default", [
    ((6, 8, 3), np.uint8, "rgb8"), ((6, 8, 4), np.uint8, "rgba8"), ((6, 8), np.uint8, "gray8"),
    ((6, 8, 1), np.uint8, "gray8"), ((6, 8), np.uint16, "gray16"), ((6, 8), np.float32, "gray32f")])
def test_default_format_of_one_array(shape, dtype, default):
    f = handoff.Frame.from_arrays(np.zeros(shape, dtype))
    assert f.format == default and (f.width, f.height) == (8, 6)


def test_format_wins_over_the_rule():
    a = np.zeros((9, 8), np.uint8)  # grey by default; also a stacked 8 x 6 NV12 frame
    assert handoff.Frame.from_arrays(a).format == "gray8"
    f = handoff.Frame.from_arrays(a, format="nv12")
    assert f.format == "nv12" and (f.width, f.height) == (8, 6)
    assert f.chroma.ptr == a.ctypes.data + 6 * 8
    b = np.zeros((9, 8), np.uint16)
    assert handoff.Frame.from_arrays(b).format == "gray16"
    assert handoff.Frame.from_arrays(b, format="p010").format == "p010"
    c = np.zeros((4, 6, 3), np.uint8)  # OpenCV's BGR
    assert handoff.Frame.from_arrays(c).format == "rgb8"
    assert handoff.Frame.from_arrays(c, format="bgr8").format == "bgr8"
    # A pair stays nv12 / p010 without format=.
    assert handoff.Frame.from_arrays(np.zeros((4, 4), np.uint8), np.zeros((2, 2, 2), np.uint8)).format == "nv12"


@pytest.mark.parametrize("array,fmt,message", [
    (np.zeros((4, 6, 3), np.uint8), "rgba8", r"pixels.shape: shape \(4, 6, 3\) does not fit rgba8: 4 channels"),
    (np.zeros((4, 6, 3), np.uint16), "rgb8", r"pixels.dtype: dtype uint16 does not fit rgb8 \(uint8 expected\)"),
    (np.zeros((4, 6), np.uint8), "rgb8", r"pixels.ndim: ndim 2 does not fit rgb8"),
    (np.zeros((4, 6), np.float64), "gray32f", r"pixels.dtype: dtype float64 does not fit gray32f"),
    (np.zeros((4, 5, 2), np.uint8), "yuyv", r"pixels.shape: .*width 5 is odd"),
    (np.zeros((3, 4, 6), np.uint8).transpose(1, 2, 0), "rgb8", r"pixels.strides: .*expected \(pitch, 3, 1\)"),
    (np.zeros((4, 6, 3), np.uint8), "yuv444", r"format: pixel format 'yuv444' is not one of"),
])
def test_arrays_that_do_not_fit_the_format(array, fmt, message):
    with pytest.raises(ValueError, match=message):
        handoff.Frame.from_arrays(array, format=fmt)


@pytest.mark.parametrize("array,desc", [
    (np.zeros((4, 6, 2), np.uint8), r"\(4, 6, 2\) uint8"), (np.zeros((4, 6, 3), np.float32), r"\(4, 6, 3\) float32"),
    (np.zeros((4, 6), np.int16), r"\(4, 6\) int16"), (np.zeros(5, np.uint8), r"\(5,\) uint8")])
def test_no_default_format_names_the_array(array, desc):
    with pytest.raises(ValueError, match=f"frame: a {desc} array has no default format.*pass format="):
        handoff.Frame.from_arrays(array)


def test_from_arrays_takes_other_protocols():
    """The rule reads shape and dtype through any protocol: a buffer-protocol object and a DLPack capsule."""
    rgb = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    assert handoff.Frame.from_arrays(memoryview(rgb)).format == "rgb8"
    cap = rgb.__dlpack__()
    f = handoff.Frame.from_arrays(cap)
    assert f.format == "rgb8" and f.pixels.ptr == rgb.ctypes.data
    depth = np.ones((4, 6), np.float32)
    g = handoff.Frame.from_arrays(CaiLessInterface(depth))
    assert g.format == "gray32f"


class CaiLessInterface:
    """Only NumPy's __array_interface__ (no buffer protocol, no DLPack)."""

    def __init__(self, array):
        self.array = array
        self.__array_interface__ = array.__array_interface__


def test_capsules_as_a_pair_without_format(no_leaks):
    """The rule reads the first array's dtype from a raw capsule without consuming it: the pair still imports."""
    luma = np.zeros((4, 6), np.uint16)
    chroma = np.zeros((2, 3, 2), np.uint16)
    f = handoff.Frame.from_arrays(luma.__dlpack__(), chroma.__dlpack__())
    assert f.format == "p010" and f.luma.ptr == luma.ctypes.data
