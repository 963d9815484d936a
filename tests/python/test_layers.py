"""Dense layers from Python: v.show(..., layers=[handoff.ClassMap, ScalarMap, InstanceMasks]) from
NumPy arrays (and anything with __dlpack__ or the array interfaces), checked through snapshot():
blending at the layer's opacity within 2 codes of round(a * layer + (1 - a) * image), transparent
ids, NaN holes, dtypes, and every bad input a ValueError naming the argument."""

import numpy as np
import pytest

import handoff
from conftest import run_isolated
from viewer_helpers import assert_no_gl_errors, solid_planes, viewer, yuv_to_rgb8
from viewer_helpers import watchdog  # noqa: F401  (fixture)

W, H = 64, 48
GREY = 126


@pytest.fixture(params=["cpu", "gpu"])
def v(request):
    """A viewer on each colour path: "cpu" blends the layers into the converted frame (the default on a
    software GL), "gpu" draws them with the layer shaders."""
    with viewer(convert=request.param) as view:
        yield view
        assert_no_gl_errors(view)


def image():
    return yuv_to_rgb8(GREY, 128, 128)


def blend(colour, a):
    return np.round(a * np.array(colour, float) + (1 - a) * image()).astype(int)


def shown(v, **kwargs):
    v.show(solid_planes(W, H, GREY), **kwargs)
    return np.from_dlpack(v.snapshot())[..., :3].astype(int)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("opacity", [0.5, 0.3])
def test_class_map_blends_at_its_opacity(v, dtype, opacity):
    ids = np.zeros((H, W), dtype)
    ids[:, W // 2:] = 7
    img = shown(v, layers=[handoff.ClassMap(ids, colors={7: (250, 120, 10)}, transparent=[0], opacity=opacity)])
    assert np.abs(img[20, 8] - image()).max() <= 1, "transparent id 0"
    assert np.abs(img[20, 50] - blend((250, 120, 10), opacity)).max() <= 2


def test_class_map_colours_as_a_list_and_default_palette(v):
    ids = np.repeat(np.array([[0, 1, 2, 3]], np.uint8), H, axis=0).repeat(W // 4, axis=1)
    img = shown(v, layers=[handoff.ClassMap(ids, colors=["#ff0000", (0, 255, 0)], names=["bg", "a", "b", "c"],
                                            opacity=1.0)])
    assert np.abs(img[10, 4] - (255, 0, 0)).max() <= 1
    assert np.abs(img[10, 20] - (0, 255, 0)).max() <= 1
    # ids 2 and 3 take the default palette: distinct from each other and from the image
    assert np.abs(img[10, 36] - img[10, 52]).sum() > 60
    assert np.abs(img[10, 36] - image()).sum() > 30


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.uint16])
def test_scalar_map_through_its_colormap_with_holes(v, dtype):
    values = np.full((H // 4, W // 4), 50, dtype)
    if np.issubdtype(dtype, np.floating):
        values[:4, :4] = np.nan
    img = shown(v, layers=[handoff.ScalarMap(values, colormap="viridis", range=(0, 100), opacity=1.0)])
    assert np.abs(img[40, 32] - handoff.colormap("viridis")[128]).max() <= 1
    if np.issubdtype(dtype, np.floating):
        assert np.abs(img[4, 4] - image()).max() <= 1, "a NaN hole is not drawn"


def test_scalar_map_automatic_range_spans_the_data(v):
    values = np.tile(np.linspace(0.0, 5.0, W, dtype=np.float32), (H, 1))  # 0 .. 5 left to right
    img = shown(v, layers=[handoff.ScalarMap(values, colormap="gray", opacity=1.0)])
    assert img[24, 0].max() <= 10 and img[24, W - 1].min() >= 245, (img[24, 0], img[24, W - 1])


def test_scalar_map_ranges_beyond_float32_draw_on_both_paths(v):
    """Values at float32's ends and ranges beyond its span or below its resolution: the range is applied
    through a float32 offset and scale worked out in double (finite however wide or narrow), and huge values
    of opposite signs mix as a * (1 - w) + b * w, without overflowing into a hole."""
    huge = np.array([[1e38, -1e38], [3e38, -3e38]], np.float32)
    img = shown(v, layers=[handoff.ScalarMap(huge, colormap="gray", range=(-3e38, 3e38), opacity=1.0)])
    corners = np.array([img[0, 0, 0], img[0, W - 1, 0], img[H - 1, 0, 0], img[H - 1, W - 1, 0]])
    assert np.abs(corners - [170, 85, 255, 0]).max() <= 1, corners
    fx, fy = (W // 2 + 0.5) / (W / 2) - 0.5, (H // 2 + 0.5) / (H / 2) - 0.5  # the bilinear weights there
    h = huge.astype(float)
    mixed = (h[0, 0] * (1 - fy) + h[1, 0] * fy) * (1 - fx) + (h[0, 1] * (1 - fy) + h[1, 1] * fy) * fx
    assert abs(img[H // 2, W // 2, 0] - (mixed + 3e38) / 6e38 * 255) <= 1.5, "mixed, not a hole"
    wide = np.array([[0, 1], [2, 3]], np.float64)
    img = shown(v, layers=[handoff.ScalarMap(wide, colormap="gray", range=(-1e300, 1e300), opacity=1.0)])
    assert np.abs(img[..., 0] - 128).max() <= 1, "0..3 sit in the middle of (-1e300, 1e300)"
    img = shown(v, layers=[handoff.ScalarMap(wide, colormap="gray", range=(0, 1e300), opacity=1.0)])
    assert img[..., 0].max() <= 1, "0..3 sit at the bottom of (0, 1e300)"
    denormal = np.array([[0, 1e-45], [1e-45, 0]], np.float32)
    for rng in [(0.0, 1e-45), None]:
        img = shown(v, layers=[handoff.ScalarMap(denormal, colormap="gray", range=rng, opacity=1.0)])
        assert np.abs(img[..., 0] - 128).max() <= 1, f"{rng}: narrower than float32 tells apart: the middle"


@pytest.mark.parametrize("value", [1e7, 1e17, -1e20, 3.4e38])
def test_scalar_map_constant_of_any_size_in_the_colormaps_middle(v, value):
    values = np.full((H // 4, W // 4), value, np.float32)
    img = shown(v, layers=[handoff.ScalarMap(values, colormap="gray", opacity=1.0)])
    assert np.abs(img[..., 0] - 128).max() <= 1


def test_instance_masks_in_their_detections_colour(v):
    masks = np.zeros((2, H, W), bool)
    masks[0, 28:44, 12:28] = True
    masks[1, 28:44, 44:60] = True
    boxes = [[4, 8, 28, 38], [36, 8, 27, 38]]
    img = shown(v, boxes=boxes, class_ids=[1, 2], layers=[handoff.InstanceMasks(masks, opacity=0.5)])
    inside0, inside1 = img[36, 20], img[36, 52]
    assert np.abs(inside0 - image()).sum() > 30 and np.abs(inside1 - image()).sum() > 30
    assert np.abs(inside0 - inside1).sum() > 30, "each mask in its own detection's colour"
    assert np.abs(img[36, 34] - image()).max() <= 1, "between the masks"


def test_float_masks_with_a_threshold(v):
    masks = np.zeros((1, H, W), np.float32)
    masks[0, 28:44, 12:28] = 0.6
    boxes = [[4, 8, 28, 38]]
    low = shown(v, boxes=boxes, layers=[handoff.InstanceMasks(masks, threshold=0.5)])
    high = shown(v, boxes=boxes, layers=[handoff.InstanceMasks(masks, threshold=0.7)])
    assert np.abs(low[36, 20] - image()).sum() > 30
    assert np.abs(high[36, 20] - image()).max() <= 1


def test_no_masks_for_a_frame_without_detections(v):
    """A detector's frame with nothing found: N = 0 masks for 0 boxes (NumPy gives an empty array all-zero
    strides) draws no mask, and the other layers as usual."""
    ids = np.full((H, W), 1, np.uint8)
    for masks in (np.zeros((0, H, W), bool), np.zeros((0, H // 4, W // 4), np.float32)):
        img = shown(v, boxes=np.zeros((0, 4), np.float32), layers=[handoff.InstanceMasks(masks)])
        assert np.abs(img - image()).max() <= 1
        img = shown(v, layers=[handoff.InstanceMasks(masks), handoff.ClassMap(ids, colors={1: (0, 200, 0)}, opacity=1)])
        assert np.abs(img[10, 10] - (0, 200, 0)).max() <= 1
    with pytest.raises(ValueError, match=r"layers\[0\].masks: 0 masks for 1 boxes"):
        shown(v, boxes=[[0, 0, 4, 4]], layers=[handoff.InstanceMasks(np.zeros((0, H, W), bool))])


def test_arrays_are_free_when_show_returns(v):
    ids = np.full((H, W), 1, np.uint8)
    v.show(solid_planes(W, H, GREY), layers=[handoff.ClassMap(ids, colors={1: (0, 255, 0), 2: (255, 0, 255)},
                                                              opacity=1.0)])
    ids[:] = 2
    img = np.from_dlpack(v.snapshot())[..., :3].astype(int)
    assert np.abs(img[30, 30] - (0, 255, 0)).max() <= 1


def test_strided_views_are_read_in_place(v):
    big = np.zeros((H, 2 * W), np.uint8)
    big[:, :W] = 3
    img = shown(v, layers=[handoff.ClassMap(big[:, :W], colors={3: (0, 0, 255)}, opacity=1.0)])
    assert np.abs(img[30, 30] - (0, 0, 255)).max() <= 1


def test_layers_over_a_target_rectangle(v):
    """target=(x, y, w, h) in frame pixels: a 2 x 2 class map over (16, 8)..(48, 40), nearest; a 1 x 2 scalar
    map over the right half; a mask over the bottom-left quarter of its box."""
    ids = np.array([[1, 2], [3, 4]], np.uint8)
    colors = {i: (i * 60, 0, 0) for i in range(1, 5)}
    cm = handoff.ClassMap(ids, colors=colors, opacity=1.0, target=(16, 8, 32, 32))
    assert cm.target == (16.0, 8.0, 32.0, 32.0) and handoff.ClassMap(ids).target is None
    img = shown(v, layers=[cm])
    assert np.abs(img[4, 4] - image()).max() <= 1 and np.abs(img[44, 60] - image()).max() <= 1, "outside"
    for (y, x), want in {(9, 17): 60, (9, 47): 120, (39, 17): 180, (39, 47): 240, (23, 31): 60}.items():
        assert np.abs(img[y, x] - (want, 0, 0)).max() <= 1, (y, x, img[y, x])
    values = np.array([[1.0, 1.0]], np.float32)
    img = shown(v, layers=[handoff.ScalarMap(values, colormap="gray", range=(0, 1), opacity=1.0,
                                             target=(32, 0, 32, 48))])
    assert np.abs(img[24, 20] - image()).max() <= 1 and np.abs(img[24, 40] - 255).max() <= 1
    masks = np.ones((1, 2, 2), bool)
    img = shown(v, boxes=[[0, 0, 64, 48]], layers=[handoff.InstanceMasks(masks, opacity=0.5,
                                                                         target=(8, 28, 16, 12))])
    assert np.abs(img[34, 16] - image()).sum() > 30 and np.abs(img[14, 16] - image()).max() <= 1


# --- bad input: each a ValueError naming the argument, the viewer going on -----------------
def test_bad_layer_settings():
    ids = np.zeros((H, W), np.uint8)
    with pytest.raises(ValueError, match="opacity: opacity 1.5 is not in 0..1"):
        handoff.ClassMap(ids, opacity=1.5)
    with pytest.raises(ValueError, match="opacity: opacity nan is not in 0..1"):
        handoff.ScalarMap(ids, opacity=float("nan"))
    with pytest.raises(ValueError, match="colormap: colormap 'jet' is not one of"):
        handoff.ScalarMap(ids, colormap="jet")
    with pytest.raises(ValueError, match=r"range: range \(2, 1\) needs finite lo < hi"):
        handoff.ScalarMap(ids, range=(2, 1))
    with pytest.raises(ValueError, match=r"colors\[1\]: component 300 is not in 0..255"):
        handoff.ClassMap(ids, colors={1: (300, 0, 0)})
    with pytest.raises(ValueError, match=r"target: target \(0, 0, 0, 5\) needs a positive width and height"):
        handoff.ClassMap(ids, target=(0, 0, 0, 5))
    with pytest.raises(ValueError, match=r"target: target \(0, nan, 4, 5\) is not finite"):
        handoff.ScalarMap(ids, target=(0, float("nan"), 4, 5))
    with pytest.raises(ValueError, match=r"target: target \(0, 0, 4, -1\) needs a positive"):
        handoff.InstanceMasks(np.zeros((1, H, W), bool), target=(0, 0, 4, -1))
    with pytest.raises(TypeError):
        handoff.ClassMap(ids, target=(1, 2, 3))  # four numbers: (x, y, w, h)


@pytest.mark.parametrize("dtype, left, right", [
    (np.uint32, 3_000_000_000, 3_000_000_001),   # above 2**31: not negative
    (np.uint32, 2**32 - 1, 5),
    (np.int64, 2**40 + 7, 7),                      # the same low 32 bits: told apart
    (np.uint64, 2**64 - 1, 2**64 - 2),
    (np.uint64, 2**63 + 9, 9),
    (np.int8, -128, 127),
])
def test_class_ids_are_their_values(v, dtype, left, right):
    """Colours and transparent ids go by the ids' values, for every dtype and at any place in its range."""
    ids = np.full((H, W), right, dtype)
    ids[:, :W // 2] = left
    img = shown(v, layers=[handoff.ClassMap(ids, colors={left: (250, 0, 0)}, opacity=1.0)])
    assert np.abs(img[20, 8] - (250, 0, 0)).max() <= 1
    assert np.abs(img[20, 50] - (250, 0, 0)).max() > 30, "only the id given the colour"
    img = shown(v, layers=[handoff.ClassMap(ids, transparent=[left], opacity=1.0)])
    assert np.abs(img[20, 8] - image()).max() <= 1, "the transparent id"
    assert np.abs(img[20, 50] - image()).max() > 30, "only the transparent id"


def test_ids_a_dtype_cannot_hold_are_not_other_ids(v):
    """-1294967296 is not 3000000000 (its low 32 bits), nor -1 an id of a uint64 map: never drawn, and
    no limit of the palette applies to them."""
    ids = np.full((H, W), 3_000_000_000, np.uint32)
    plain = shown(v, layers=[handoff.ClassMap(ids, opacity=1.0)])
    img = shown(v, layers=[handoff.ClassMap(ids, colors={3_000_000_000 - 2**32: (255, 0, 0)}, opacity=1.0)])
    assert (img == plain).all()
    big = np.full((H, W), 2**64 - 1, np.uint64)
    plain = shown(v, layers=[handoff.ClassMap(big, opacity=1.0)])
    assert (shown(v, layers=[handoff.ClassMap(big, transparent=[-1], opacity=1.0)]) == plain).all()
    assert (shown(v, layers=[handoff.ClassMap(big, transparent=[2**64 - 1], opacity=1.0)])[20, 8] == image()).all()
    # -1 and 2**64 - 1 side by side: each stands for itself, whichever the dtype holds.
    both = dict(colors={-1: (250, 0, 0), 2**64 - 1: (0, 0, 250)}, names={-1: "minus", 2**64 - 1: "max"}, opacity=1.0)
    img = shown(v, layers=[handoff.ClassMap(big, **both)])
    assert np.abs(img[20, 8] - (0, 0, 250)).max() <= 1
    img = shown(v, layers=[handoff.ClassMap(np.full((H, W), -1, np.int64), **both)])
    assert np.abs(img[20, 8] - (250, 0, 0)).max() <= 1


def test_palette_span_is_said_with_the_argument_that_exceeds_it(v):
    frame = solid_planes(W, H, GREY)
    ids = np.zeros((H, W), np.uint32)
    with pytest.raises(ValueError, match=r"layers\[0\].transparent: ids given colours or made transparent run from "
                                         r"0 \(transparent\) to 4294967295 \(transparent\): they must lie within "
                                         r"65536 consecutive ids"):
        v.show(frame, layers=[handoff.ClassMap(ids, transparent=[0, 2**32 - 1])])
    with pytest.raises(ValueError, match=r"layers\[0\].colors: .* from 7 \(transparent\) to 3000000000 \(colors\)"):
        v.show(frame, layers=[handoff.ClassMap(ids, colors={3_000_000_000: "#fff"}, transparent=[7])])
    v.show(frame, layers=[handoff.ClassMap(ids, colors={3_000_000_000: "#fff"}, transparent=[3_000_065_535])])


def test_bad_class_ids_names_and_colours_name_the_argument():
    """Ids, names and colours of the wrong kind are a TypeError / ValueError naming the entry, never a bare
    C++ cast error or a name made of whatever str() gives."""
    ids = np.zeros((H, W), np.uint8)
    type_errors = [
        (dict(colors={1.5: (1, 2, 3)}), r"colors\[1.5\]: a class id is an integer, not float"),
        (dict(colors={"a": (1, 2, 3)}), r"colors\['a'\]: a class id is an integer, not str"),
        (dict(transparent=[0, 1.5]), r"transparent\[1\]: a class id is an integer, not float"),
        (dict(transparent=["a"]), r"transparent\[0\]: a class id is an integer, not str"),
        (dict(transparent=[None]), r"transparent\[0\]: a class id is an integer, not NoneType"),
        (dict(names={1.5: "x"}), r"names\[1.5\]: a class id is an integer, not float"),
        (dict(colors=5), r"colors: a list of colours \(index = id\) or a dict id -> colour, not int"),
        (dict(transparent=3), r"transparent: a list of ids, not int"),
        (dict(names=["bg", None]), r"names\[1\]: a name is a str, not NoneType"),
        (dict(names=[1.5]), r"names\[0\]: a name is a str, not float"),
        (dict(names=[b"x"]), r"names\[0\]: a name is a str, not bytes"),
        (dict(names={3: None}), r"names\[3\]: a name is a str, not NoneType"),
        (dict(names="abc"), r"names: a list of names \(index = id\) or a dict id -> name, not str"),
    ]
    for kwargs, message in type_errors:
        with pytest.raises(TypeError, match=message):
            handoff.ClassMap(ids, **kwargs)
    with pytest.raises(ValueError, match=r"colors\[18446744073709551616\]: id 18446744073709551616 is not a 64-bit"):
        handoff.ClassMap(ids, colors={2**64: (1, 1, 1)})
    with pytest.raises(ValueError, match=r"transparent\[0\]: id -9223372036854775809 is not a 64-bit"):
        handoff.ClassMap(ids, transparent=[-2**63 - 1])
    # Every integer kind is an id: NumPy's, bool, and the whole 64-bit range both signs.
    handoff.ClassMap(ids, colors={np.int64(3): "#fff", np.uint64(2**64 - 1): "#000"}, transparent=[2**64 - 1, -2**63],
                     names={np.uint8(1): "one"})


def test_bad_layer_arrays(v):
    frame = solid_planes(W, H, GREY)
    with pytest.raises(ValueError, match=r"layers\[0\].ids: class ids are integers, not f32"):
        v.show(frame, layers=[handoff.ClassMap(np.zeros((H, W), np.float32))])
    with pytest.raises(ValueError, match=r"layers\[0\].values: shape \(3, 48, 64\) is 3-D"):
        v.show(frame, layers=[handoff.ScalarMap(np.zeros((3, H, W), np.float32))])
    with pytest.raises(ValueError, match=r"layers\[1\].masks: 2 masks for 1 boxes"):
        v.show(frame, boxes=[[0, 0, 4, 4]], layers=[handoff.ScalarMap(np.zeros((H, W))),
                                                    handoff.InstanceMasks(np.zeros((2, H, W), bool))])
    with pytest.raises(ValueError, match=r"layers\[0\].ids: its rows are not contiguous"):
        v.show(frame, layers=[handoff.ClassMap(np.zeros((H, 2 * W), np.uint8)[:, ::2])])
    with pytest.raises(ValueError, match=r"layers\[0\].ids.width: width is 0"):
        v.show(frame, layers=[handoff.ClassMap(np.zeros((H, 0), np.uint8))])
    with pytest.raises(ValueError, match=r"layers\[0\].ids.height: height is 0"):  # not its all-0 strides
        v.show(frame, layers=[handoff.ClassMap(np.zeros((0, W), np.uint8))])
    with pytest.raises(ValueError, match=r"layers\[0\].masks.height: height is 0"):
        v.show(frame, layers=[handoff.InstanceMasks(np.zeros((0, 0, W), bool))])
    with pytest.raises(ValueError, match=r"layers\[0\].ids: dtype complex64 is not"):
        v.show(frame, layers=[handoff.ClassMap(np.zeros((H, W), np.complex64))])
    # NumPy arrays nanobind cannot take: what is wrong is said (not "a ndarray is not an array").
    with pytest.raises(ValueError, match=r"layers\[0\].ids: dtype >u2 is big-endian: .*astype\('<u2'\)"):
        v.show(frame, layers=[handoff.ClassMap(np.zeros((H, W), ">u2"))])
    with pytest.raises(ValueError, match=r"layers\[0\].values: dtype >f4 is big-endian"):
        v.show(frame, layers=[handoff.ScalarMap(np.zeros((H, W), ">f4"))])
    with pytest.raises(ValueError, match=r"layers\[0\].ids: dtype object is not an integer, float or bool type"):
        v.show(frame, layers=[handoff.ClassMap(np.zeros((H, W), object))])
    with pytest.raises(TypeError, match=r"layers\[0\]: a int is not a handoff.ClassMap"):
        v.show(frame, layers=[3])
    assert v.is_open()
    img = shown(v)
    assert np.abs(img[10, 10] - image()).max() <= 1


class Cai:
    """A CUDA Array Interface producer that is only its dict (never read: each is refused first)."""

    def __init__(self, **cai):
        self.__cuda_array_interface__ = cai


def test_bad_cuda_array_interface_layers(v):
    frame = solid_planes(W, H, GREY)
    good = dict(shape=(H, W), typestr="|u1", data=(0x1000, False), strides=None, version=3)
    cases = [
        (Cai(**{**good, "typestr": ">u2"}), r"typestr '>u2' is not a little-endian integer, float or bool type"),
        (Cai(**{**good, "typestr": "<c8"}), r"typestr '<c8' is not a little-endian"),
        (Cai(**{**good, "mask": (0x2000, False)}), r"masked arrays are not taken"),
        (Cai(**{**good, "typestr": "<u2", "strides": (2 * W + 1, 2)}), r"stride 129 is not a whole number of 2-byte"),
        (Cai(**{**good, "strides": (W,)}), r"strides and shape differ in length"),
        (Cai(**{**good, "shape": (2, H, W)}), r"shape \(2, 48, 64\) is 3-D, not"),
        (Cai(shape=(H, W), data=(0x1000, False)), r"__cuda_array_interface__: "),
    ]
    for array, message in cases:
        with pytest.raises(ValueError, match=r"layers\[0\].ids: .*" + message):
            v.show(frame, layers=[handoff.ClassMap(array)])
    s = Cai()
    s.__cuda_array_interface__ = [1, 2]
    with pytest.raises(ValueError, match=r"is not a dict with shape, typestr and data"):
        v.show(frame, layers=[handoff.ClassMap(s)])
    if "unavailable" in handoff.cuda_status():
        with pytest.raises(ValueError, match=r"layers\[0\].ids: the array is in CUDA memory, but CUDA is unavailable"):
            v.show(frame, layers=[handoff.ClassMap(Cai(**good))])
    assert v.is_open()


SHORT_CAI_DATA = r"""
import numpy as np
import handoff
from viewer_helpers import viewer
class Cai:
    __cuda_array_interface__ = dict(shape=(48, 64), typestr="|u1", data=(), version=3)
with viewer() as v:
    try:
        v.show(np.zeros((48, 64, 3), np.uint8), layers=[handoff.ClassMap(Cai())])
    except ValueError as e:
        print(e)
"""


def test_cuda_array_interface_data_shorter_than_a_pair():
    """data=() was read past the tuple's end (a crash): in a process of its own."""
    assert run_isolated(SHORT_CAI_DATA).strip() == (
        "layers[0].ids: __cuda_array_interface__ data () is not a (pointer, read_only) tuple")


# The layer array's only owner is what show() reads it through: a raw capsule, or the fresh export of a
# producer that makes a new array each call (a computed tensor). Large enough for a mapping of its own,
# so that once freed a read of it crashes rather than finds the old values.
ONLY_THE_CALL_HOLDS = r"""
import sys
import numpy as np
import handoff
from viewer_helpers import viewer
N = 2048
class Fresh:
    def __dlpack__(self, **kwargs):
        return np.full((N, N), 2, np.uint8).__dlpack__(**kwargs)
    def __dlpack_device__(self):
        return (1, 0)
ids = np.full((N, N), 2, np.uint8).__dlpack__() if sys.argv[1] == "capsule" else Fresh()
with viewer() as v:
    v.show(np.zeros((48, 64, 3), np.uint8), layers=[handoff.ClassMap(ids, colors={2: (0, 0, 255)}, opacity=1.0)])
    print(np.from_dlpack(v.snapshot())[20, 30, :3].tolist())
"""


@pytest.mark.parametrize("owner", ["capsule", "fresh"])
def test_layer_arrays_held_for_the_call(owner):
    """show() read the array after its only owner was freed (when reading it had ended)."""
    assert run_isolated(ONLY_THE_CALL_HOLDS, owner).strip() == "[0, 0, 255]"


def test_the_panel_shows_the_layers():
    """The view with its panel (a toggle, an opacity slider, a legend and a colour bar per layer) draws
    without a GL error, and the panel grows by the Layers section (a view tall enough to hold it)."""
    frame = solid_planes(W, H, GREY)
    with viewer(width=480, height=1000) as tall:
        tall.show(frame)
        without = np.from_dlpack(tall.snapshot("view"))
        ids = np.zeros((H, W), np.uint8)
        # At opacity 0 the layers draw nothing over the frame: what changes is the panel.
        tall.show(frame, layers=[handoff.ClassMap(ids, names=["road"], opacity=0.0),
                                 handoff.ScalarMap(np.ones((H, W), np.float32), opacity=0.0)])
        with_layers = np.from_dlpack(tall.snapshot("view"))
        assert_no_gl_errors(tall)
    assert (with_layers != without).any(axis=2).sum() > 500


class DlpackOnly:
    """An array that offers nothing but __dlpack__ / __dlpack_device__ (as PyTorch and CuPy tensors do)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_layers_from_any_dlpack_producer(v):
    ids = np.full((H, W), 4, np.int32)
    values = np.full((H, W), 1.0, np.float32)
    img = shown(v, layers=[handoff.ScalarMap(DlpackOnly(values), colormap="gray", range=(0, 1), opacity=1.0),
                           handoff.ClassMap(DlpackOnly(ids), colors={4: (0, 0, 255)}, opacity=0.5)])
    # The class map (drawn second) at half opacity over the white scalar map.
    assert np.abs(img[30, 30] - (128, 128, 255)).max() <= 2, img[30, 30]


def test_layer_objects_say_what_they_were_given():
    ids = np.zeros((4, 4), np.uint64)
    c = handoff.ClassMap(ids, names=["bg", "car"], colors={1: "#ff0000", 2**64 - 1: (1, 2, 3)}, transparent=[0, 2**63])
    assert c.names == {0: "bg", 1: "car"}  # a list given comes back keyed by index
    assert c.colors == {1: (255, 0, 0), 2**64 - 1: (1, 2, 3)}
    assert c.transparent == (0, 2**63)
    assert handoff.ClassMap(ids).names == {} and handoff.ClassMap(ids).transparent == ()
    assert handoff.ScalarMap(np.zeros((2, 2), np.float32), range=(0, 10)).range == (0.0, 10.0)
    assert handoff.ScalarMap(np.zeros((2, 2), np.float32)).range is None
    assert handoff.InstanceMasks(np.zeros((1, 2, 2), bool), threshold=0.25).threshold == 0.25


# A key whose __index__ empties its dict (freeing the other keys and values) while it is read.
DICT_EMPTIED_WHILE_READ = r"""
import numpy as np
import handoff
class Key:
    def __init__(self, i, d):
        self.i, self.d = i, d
    def __index__(self):
        self.d.clear()
        return self.i
    def __hash__(self):
        return self.i
    def __eq__(self, other):
        return self is other
names, colors = {}, {}
for i in range(3):
    names[Key(i, names)] = f"class {i}"
    colors[Key(i, colors)] = (i, 2 * i, 3 * i)
c = handoff.ClassMap(np.zeros((2, 2), np.uint8), names=names, colors=colors)
print(c.names, c.colors)
"""


def test_class_map_dicts_changed_while_read_are_read_safely():
    """names / colors are read over a copy of their items (it read freed entries: a crash), so the map holds
    what the dicts held when given. In a process of its own."""
    assert run_isolated(DICT_EMPTIED_WHILE_READ).strip() == (
        "{0: 'class 0', 1: 'class 1', 2: 'class 2'} {0: (0, 0, 0), 1: (1, 2, 3), 2: (2, 4, 6)}")
