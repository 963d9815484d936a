"""handoff.Viewer from Python, headless (EGL): shown pixels against the colour
reference through snapshot(), overlays, show from 4 threads, ViewerClosed,
frames changing size and format, bad frames and overlay arrays, 10,000 show
calls with flat memory, the GIL released while show / wait block, acquire."""
import gc
import os
import signal
import threading
import weakref

import numpy as np
import pytest

import handoff
from conftest import run_isolated
from viewer_helpers import (assert_no_gl_errors, assert_quadrants, quadrant_planes, rss_bytes, solid_planes,
                            viewer, yuv_to_rgb8)
from viewer_helpers import v, watchdog  # noqa: F401  (fixtures)


def snap(v, kind="frame"):
    s = v.snapshot(kind)
    assert s is not None, "nothing displayed"
    return np.from_dlpack(s)


# --- colour ---------------------------------------------------------------------------
@pytest.mark.parametrize("matrix,range_", [("bt709", "limited"), ("bt601", "full"), ("bt2020", "limited")])
def test_nv12_pair_matches_the_colour_reference(v, matrix, range_):
    luma, chroma = quadrant_planes(96, 64, "nv12")
    v.show((luma, chroma), colorimetry=handoff.Colorimetry(matrix, range_))
    img = snap(v)
    assert img.shape == (64, 96, 4) and img.dtype == np.uint8
    assert_quadrants(img, "nv12", matrix, range_)


@pytest.mark.parametrize("matrix,range_", [("bt2020", "full"), ("bt709", "limited")])
def test_p010_stacked_array_matches_the_colour_reference(v, matrix, range_):
    luma, chroma = quadrant_planes(96, 64, "p010")
    stacked = np.concatenate([luma, chroma.reshape(32, 96)], axis=0)  # (H + H/2, W)
    v.show(stacked, format="p010", colorimetry=handoff.Colorimetry(matrix, range_))
    assert_quadrants(snap(v), "p010", matrix, range_)
    assert v.stream["format"] == "p010"  # (the stream is what is on display)


@pytest.mark.parametrize("convert", ["gpu", "cpu"])
def test_both_colour_paths_match_the_colour_reference(convert):
    """convert="cpu" converts at the size shown on the CPU (the default on a software rasteriser like
    this machine's llvmpipe), "gpu" in the fragment shader: the frame and the view both equal the
    reference at the quadrants' centres, and stream says which path drew them."""
    luma, chroma = quadrant_planes(96, 64, "nv12")
    with viewer(convert=convert, show_ui=False) as v:
        v.show((luma, chroma), colorimetry=handoff.Colorimetry("bt601", "full"))
        assert_quadrants(snap(v), "nv12", "bt601", "full")
        view = snap(v, "view")
        assert view.shape == (240, 320, 4)
        assert_quadrants(view[13:227], "nv12", "bt601", "full")  # fitted: 320x213 from row 13, letterboxed
        assert (view[:10] == view[0, 0]).all() and (view[230:] == view[0, 0]).all()  # the background bands
        assert v.stream["convert"].startswith(convert), v.stream["convert"]
        assert_no_gl_errors(v)


@pytest.mark.parametrize("convert", ["cpu", "gpu"])
def test_gray32f_data_at_float32s_ends_never_stops_the_viewer(convert):
    """A gray32f frame's automatic range comes from its data: a constant frame of any value is drawn mid grey
    (its value in the middle of its range), data spread over less than float32 tells apart (denormals) is
    drawn like a constant, and nothing a frame holds stops the display (the next show() works)."""
    tiny = np.tile(np.array([[0, 1e-45], [1e-45, 0]], np.float32), (4, 4))
    frames = [np.full((8, 8), c, np.float32) for c in (1e7, 1e16, 1e17, -1e20, 3.4e38, -3.4e38, 1e-45)] + [tiny]
    with viewer(convert=convert, show_ui=False) as v:
        for a in frames:  # each far from the last: the range jumps to the frame's own
            v.show(a)
            grey = snap(v)[..., 0].astype(int)
            assert np.abs(grey - 128).max() <= 1, (a[0, :2], grey[0, :2])
        v.show(np.full((8, 8, 3), 200, np.uint8))
        assert snap(v)[0, 0, 0] == 200
        assert_no_gl_errors(v)


def test_handoff_frame_is_shown_with_its_colorimetry(v):
    frame = handoff.Frame.allocate(96, 64, "p010", colorimetry=handoff.Colorimetry("bt601", "limited"))
    luma, chroma = quadrant_planes(96, 64, "p010")
    frame.luma.copy_from(luma)
    frame.chroma.copy_from(chroma)
    v.show(frame)
    assert_quadrants(snap(v), "p010", "bt601", "limited")
    with pytest.raises(ValueError, match="format / colorimetry"):
        v.show(frame, format="nv12")


def test_snapshot_readable_through_numpy_and_dlpack(v):
    assert v.snapshot() is None  # nothing displayed yet
    v.show(solid_planes(40, 30, 235))
    s = v.snapshot()
    a, b = np.asarray(s), np.from_dlpack(s)
    assert a.shape == b.shape == (30, 40, 4) and s.shape == (30, 40, 4)
    assert not b.flags.writeable
    assert np.array_equal(a, b) and (a[..., :3] == 255).all()
    own = np.from_dlpack(s, copy=True)  # DLPack: copy=True copies, and the copy is the consumer's
    assert own.flags.writeable and np.array_equal(own, a)
    own[:] = 0
    assert (np.from_dlpack(s)[..., :3] == 255).all(), "the snapshot is untouched"
    view = snap(v, "view")
    assert view.shape == (240, 320, 4)
    with pytest.raises(ValueError, match="kind"):
        v.snapshot("bogus")


# --- overlays -------------------------------------------------------------------------
def assert_box_edge(img, x, y, vertical, line, under, what):
    """A box edge where the geometry puts it: ImGui's anti-aliased 2-px AddRect
    strokes through the centres of the box's first and last columns and rows, a
    1-px solid core on that pixel, 1-px fringes covering the pixels either side
    by half, the frame untouched two pixels off (float64 blend, within 2 codes)."""
    line, under = np.asarray(line, float), np.asarray(under, float)
    half = np.round(0.5 * line + 0.5 * under)
    for d, want, tol, part in [(0, line, 2, "the line"), (-1, half, 2, "outer fringe"), (1, half, 2, "inner fringe"),
                               (-2, under, 1, "clear outside"), (2, under, 1, "clear inside")]:
        px = img[y, x + d] if vertical else img[y + d, x]
        assert (np.abs(px - want) <= tol).all(), f"{what}: {part} at offset {d}: {px} vs {want}"


def test_boxes_are_drawn_where_they_belong(v):
    grey = yuv_to_rgb8(126, 128, 128)
    v.show(solid_planes(96, 64, 126), boxes=np.array([[20, 10, 40, 30]], np.float32))  # xywh
    img = snap(v)[..., :3].astype(int)
    white = [255, 255, 255]
    assert_box_edge(img, 40, 10, False, white, grey, "the box's top edge")
    assert_box_edge(img, 20, 25, True, white, grey, "its left edge")
    assert_box_edge(img, 59, 25, True, white, grey, "its right edge")
    assert_box_edge(img, 40, 39, False, white, grey, "its bottom edge")
    assert (np.abs(img[25, 40] - grey) <= 1).all(), "inside the box"
    assert (np.abs(img[50, 80] - grey) <= 1).all(), "outside it"


@pytest.mark.parametrize("fmt,box,normalized", [
    ("xyxy", [20, 10, 60, 40], False),
    ("cxcywh", [40, 25, 40, 30], False),
    ("xywh", [20 / 96, 10 / 64, 40 / 96, 30 / 64], True),
])
def test_box_formats_draw_the_same_pixels(v, fmt, box, normalized):
    frame = solid_planes(96, 64, 126)
    v.show(frame, boxes=[[20, 10, 40, 30]])
    want = snap(v).copy()
    v.show(frame, boxes=np.array([box]), box_format=fmt, normalized=normalized)
    assert np.array_equal(snap(v), want)


def test_labels_scores_ids_and_keypoints_change_the_picture(v):
    frame = solid_planes(160, 120, 60)
    v.show(frame, boxes=[[20, 20, 60, 60]])
    plain = snap(v).copy()
    v.show(frame, boxes=[[20, 20, 60, 60]], labels=["person"], scores=[0.9], class_ids=[0], track_ids=[7],
           keypoints=np.array([[[30, 30, 1.0], [70, 70, 1.0], [40, 70, 0.5]]]), skeleton=[[0, 1], [1, 2]])
    full = snap(v)
    assert not np.array_equal(plain, full)
    # The skeleton's first edge runs from (30, 30) to (70, 70): its midpoint is drawn.
    assert not np.array_equal(full[50, 50], plain[50, 50])


def test_overlays_object_from_a_source_and_from_arrays(v):
    ov = handoff.Overlays.from_arrays(boxes=[[0.25, 0.25, 0.5, 0.5]], normalized=True, width=96, height=64,
                                      labels=["a"], scores=[0.5], class_ids=[3], track_ids=[4])
    assert len(ov) == 1
    assert ov.boxes.tolist() == [[24, 16, 72, 48]]
    assert ov.labels == ["a"] and ov.class_ids.tolist() == [3] and ov.track_ids.tolist() == [4]
    frame = solid_planes(96, 64, 126)
    v.show(frame, overlays=ov)
    with_object = snap(v).copy()
    v.show(frame, boxes=[[24, 16, 48, 32]], labels=["a"], scores=[0.5], class_ids=[3], track_ids=[4])
    assert np.array_equal(snap(v), with_object)
    with pytest.raises(ValueError, match="not both"):
        v.show(frame, overlays=ov, boxes=[[0, 0, 1, 1]])
    with pytest.raises(TypeError, match="Overlays"):
        v.show(frame, overlays={"boxes": []})


# --- threads, closing, changes ------------------------------------------------------------
def test_show_from_four_threads(v):
    errors = []
    colours = [40, 90, 140, 190]

    def produce(t):
        try:
            frame = solid_planes(64 + 16 * t, 48, colours[t])
            for i in range(40):
                v.show(frame, boxes=[[i, 0, 4, 4]])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=produce, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    img = snap(v)
    s = v.stats
    assert s.submitted == 160
    assert s.shown + s.dropped <= s.submitted and s.shown >= 1
    # The frame on display is one of the four threads' (its width says which).
    t = (img.shape[1] - 64) // 16
    assert img.shape == (48, 64 + 16 * t, 4)
    assert (np.abs(img[40, 2, :3].astype(int) - yuv_to_rgb8(colours[t], 128, 128)) <= 1).all()


def test_show_after_close_raises_viewer_closed():
    v = viewer()
    v.show(solid_planes(32, 32, 100))
    assert v.is_open()
    v.close()
    assert not v.is_open()
    with pytest.raises(handoff.ViewerClosed, match="closed"):
        v.show(solid_planes(32, 32, 100))
    with pytest.raises(handoff.ViewerClosed):
        v.acquire("nv12", 32, 32)
    assert issubclass(handoff.ViewerClosed, RuntimeError)
    assert v.wait_closed(timeout=0)
    v.close()  # idempotent


def test_context_manager_closes_the_viewer():
    with viewer() as v:
        v.show(solid_planes(16, 16, 100))
    assert not v.is_open()


def test_frames_change_size_and_format_mid_stream(v):
    for fmt, w, h, matrix in [("nv12", 96, 64, "bt709"), ("p010", 40, 30, "bt2020"), ("nv12", 128, 72, "bt601"),
                              ("p010", 96, 64, "bt709")]:
        v.show(quadrant_planes(w, h, fmt), colorimetry=handoff.Colorimetry(matrix, "limited"))
        img = snap(v)
        assert img.shape == (h, w, 4)
        assert_quadrants(img, fmt, matrix, "limited")
        assert v.stream["format"] == fmt and (v.stream["width"], v.stream["height"]) == (w, h)


# --- every format from NumPy: one snapshot per family, and the format rule on show() -----------------
def image_rgb(w, h):
    """Distinct, smooth colours: gradients in R and G, a checker in B."""
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([(x * 255) // (w - 1), (y * 255) // (h - 1), ((x // 8 + y // 8) % 2) * 200 + 30],
                    axis=-1).astype(np.uint8)


def test_rgb8_array_is_drawn_as_given(v):
    rgb = image_rgb(64, 48)
    v.show(rgb)  # (H, W, 3) uint8: rgb8 by default
    img = snap(v)
    assert v.stream["format"] == "rgb8"
    assert img.shape == (48, 64, 4)
    assert np.abs(img[..., :3].astype(int) - rgb).max() <= 1


def test_bgr8_array_from_opencv_is_drawn_in_its_order(v):
    rgb = image_rgb(64, 48)
    bgr = np.ascontiguousarray(rgb[..., ::-1])  # what cv2.imread hands out
    v.show(bgr, format="bgr8")
    assert np.abs(snap(v)[..., :3].astype(int) - rgb).max() <= 1
    assert v.stream["format"] == "bgr8"  # (once drawn: the stream is what is on display)
    v.show(bgr)  # without format= the same array is read as rgb8: the channels come out swapped
    assert np.abs(snap(v)[..., :3].astype(int) - bgr).max() <= 1
    assert v.stream["format"] == "rgb8"


def test_streams_are_tiles_side_by_side():
    # show(..., stream=): a tile per stream in a grid, each its newest frame; a 320x120 view
    # puts two 64x48 tiles side by side.
    with viewer(width=320, height=120) as view:
        left, right = image_rgb(64, 48), np.ascontiguousarray(image_rgb(64, 48)[::-1])
        view.show(left, stream="left")
        view.show(right, stream="right")
        img = snap(view)
        assert img.shape == (48, 128, 4)
        assert np.abs(img[:, :64, :3].astype(int) - left).max() <= 1
        assert np.abs(img[:, 64:, :3].astype(int) - right).max() <= 1
        grey = np.full((48, 64), 77, np.uint8)
        view.show(grey)  # unnamed: the first tile ("left")
        img = snap(view)
        assert np.abs(img[:, :64, :3].astype(int) - 77).max() <= 1
        assert np.abs(img[:, 64:, :3].astype(int) - right).max() <= 1
        with view.acquire("gray8", 64, 48, stream="third") as f:
            np.from_dlpack(f.pixels)[:] = 200
        img = snap(view)
        assert img.shape == (48, 3 * 64, 4)  # three tiles, largest in a row in a 320x120 view
        assert np.abs(img[:, 128:, :3].astype(int) - 200).max() <= 1
        assert view.stats.submitted == 4
        with pytest.raises(ValueError, match="longer than 64"):
            view.show(grey, stream="s" * 65)
        for bad, code in (("\0", "0x00"), ("a\nb", "0x0a")):  # a tile's title on screen
            with pytest.raises(ValueError, match=f"stream name has a control character \\({code}\\)"):
                view.show(grey, stream=bad)
        tiles = view.tiles
        assert [t["name"] for t in tiles] == ["left", "right", "third"], tiles
        assert all(t["frame"] >= 0 and not t["clock"] for t in tiles), tiles
        grid_view = np.from_dlpack(view.snapshot("view")).copy()
        view.focus_tile(2)  # "third" alone over the view; the composed frame keeps all three
        assert view.focused_tile == 2
        assert snap(view).shape == (48, 3 * 64, 4)
        focused = np.from_dlpack(view.snapshot("view"))
        assert focused.shape == grid_view.shape and np.abs(focused.astype(int) - grid_view).max() > 50
        with pytest.raises(ValueError, match=r"focus_tile\(3\): not in -1..2 \(3 tiles\)"):
            view.focus_tile(3)
        view.focus_tile(-1)
        assert view.focused_tile == -1
        assert_no_gl_errors(view)


def test_gray8_array_and_a_pitched_crop(v):
    y, x = np.mgrid[0:48, 0:96]
    storage = ((x * 2 + y) % 256).astype(np.uint8)
    crop = storage[:, 16:80]  # a view: rows 96 bytes apart
    v.show(crop)  # (H, W) uint8: gray8 by default (to handoff before, stacked NV12)
    img = snap(v).astype(int)
    assert v.stream["format"] == "gray8" and (v.stream["width"], v.stream["height"]) == (64, 48)
    for c in range(3):
        assert np.abs(img[..., c] - crop).max() <= 1
    assert (img[..., 3] == 255).all()


def test_gray16_array_over_its_full_range(v):
    y, x = np.mgrid[0:48, 0:64]
    depth = (x * 1000 + y * 20).astype(np.uint16)  # a depth map in millimetres
    v.show(depth)  # (H, W) uint16: gray16 by default
    want = depth.astype(np.float64) / 65535 * 255
    assert np.abs(snap(v)[..., 0] - want).max() <= 1
    assert v.stream["format"] == "gray16"


def test_format_wins_on_show(v):
    """The same 2-D uint8 array: grey without format=, a stacked NV12 frame with it."""
    luma, chroma = solid_planes(32, 24, 100)
    stacked = np.concatenate([luma, chroma.reshape(12, 32)])
    v.show(stacked)
    assert snap(v).shape == (36, 32, 4)
    assert v.stream["format"] == "gray8" and (v.stream["width"], v.stream["height"]) == (32, 36)
    v.show(stacked, format="nv12")
    assert snap(v).shape == (24, 32, 4)
    assert v.stream["format"] == "nv12" and (v.stream["width"], v.stream["height"]) == (32, 24)
    with pytest.raises(ValueError, match=r"pixels.shape: shape \(24, 32, 3\) does not fit rgba8"):
        v.show(np.zeros((24, 32, 3), np.uint8), format="rgba8")
    with pytest.raises(ValueError, match="pixels.dtype: dtype uint16 does not fit rgb8"):
        v.show(np.zeros((24, 32, 3), np.uint16), format="rgb8")
    with pytest.raises(ValueError, match="format: pixel format 'rgb' is not one of"):
        v.show(np.zeros((24, 32, 3), np.uint8), format="rgb")


# --- bad input -----------------------------------------------------------------------------
def test_bad_frames_are_refused_naming_the_field(v):
    luma, chroma = solid_planes(32, 24, 100)
    with pytest.raises(handoff.InvalidFrame, match="chroma"):
        v.show((luma, chroma[:, :8]))  # wrong chroma width
    with pytest.raises(handoff.InvalidFrame, match="luma"):
        v.show((luma.astype(np.float32), chroma))
    with pytest.raises(handoff.InvalidFrame, match="frame.shape"):
        v.show(np.zeros((37, 32), np.uint8), format="nv12")  # 37 rows is no H + ceil(H/2)
    with pytest.raises(handoff.InvalidFrame, match="frame.shape"):
        v.show(np.zeros((36, 31), np.uint8), format="nv12")  # odd width
    with pytest.raises(handoff.InvalidFrame, match="frame.shape"):
        v.show(np.zeros((4, 4, 4), np.uint8), format="nv12")
    with pytest.raises(ValueError, match=r"frame: a \(4, 4, 5\) uint8 array has no default format"):
        v.show(np.zeros((4, 4, 5), np.uint8))
    with pytest.raises(ValueError, match=r"frame: a \(8, 8\) bool array has no default format"):
        v.show(np.zeros((8, 8), bool))
    with pytest.raises(ValueError, match="pair"):
        v.show((luma, chroma, chroma, chroma))
    with pytest.raises(TypeError, match="str"):
        v.show("frame.y4m")
    with pytest.raises(ValueError, match="format"):
        v.show((luma, chroma), format="rgb")
    assert v.stats.submitted == 0  # nothing got through
    v.show((luma, chroma))  # and the viewer still works
    assert v.stats.submitted == 1


@pytest.mark.parametrize("kwargs,message", [
    (dict(boxes=np.zeros((3, 5))), r"boxes: shape \(3, 5\) is not \(N, 4\)"),
    (dict(boxes=np.zeros(4)), r"boxes: shape \(4,\)"),
    (dict(boxes=np.zeros((1, 4), np.complex64)), "boxes: dtype"),
    (dict(boxes=[["a", "b", "c", "d"]]), "boxes: dtype"),
    (dict(boxes=[[1, 2, 3], [1, 2]]), "boxes"),
    (dict(boxes=[[0, 0, 1, 1], [np.nan, 0, 1, 1]]), r"boxes\[1\]: NaN"),
    (dict(boxes=[[0, 0, np.inf, 1]]), r"boxes\[0\]: infinite"),
    (dict(boxes=[[0, 0, -1, 1]]), r"boxes\[0\]: negative width"),
    (dict(boxes=[[0, 0, 1, 1]], box_format="ltrb"), "box_format: 'ltrb'"),
    (dict(boxes=[[0, 0, 1, 1]], labels=["a", "b"]), "labels: length 2 does not match the 1 objects"),
    (dict(boxes=[[0, 0, 1, 1]], labels="a"), "labels: a single string"),
    (dict(boxes=[[0, 0, 1, 1]], labels=[3]), r"labels\[0\]: .*int.* is not a string"),
    (dict(boxes=[[0, 0, 1, 1]], scores=[0.5, 0.2]), "scores: length 2 does not match"),
    (dict(boxes=[[0, 0, 1, 1]], scores=[[0.5]]), r"scores: shape \(1, 1\) is not \(N,\)"),
    (dict(boxes=[[0, 0, 1, 1]], scores=[np.nan]), r"scores\[0\]: NaN"),
    (dict(boxes=[[0, 0, 1, 1]], class_ids=[1.5]), r"class_ids\[0\]: 1.5 is not an integer"),
    (dict(boxes=[[0, 0, 1, 1]], track_ids=[-2]), r"track_ids\[0\]: -2 is outside"),
    (dict(boxes=[[0, 0, 1, 1]], keypoints=np.zeros((1, 3, 4))), r"keypoints: shape \(1, 3, 4\)"),
    (dict(boxes=[[0, 0, 1, 1]], keypoints=np.zeros((2, 3, 2))), "keypoints: length 2 does not match"),
    (dict(keypoints=np.full((1, 2, 2), np.nan)), r"keypoints\[0\]: NaN"),
    (dict(keypoints=np.zeros((1, 2, 2)), skeleton=[[0, 2]]), r"skeleton\[0\]: keypoint index 2 is not an integer in 0..1$"),
    (dict(keypoints=np.zeros((1, 2, 2)), skeleton=[0, 1]), r"skeleton: shape \(2,\) is not \(E, 2\)"),
    (dict(skeleton=[[0, 1]]), "skeleton: given without keypoints"),
])
def test_bad_overlay_arrays_are_refused_naming_the_field(v, kwargs, message):
    frame = solid_planes(32, 24, 100)
    with pytest.raises(ValueError, match=message):
        v.show(frame, **kwargs)
    assert v.stats.submitted == 0


def test_overlay_arrays_accept_numpy_dtypes_and_sequences(v):
    frame = solid_planes(64, 48, 100)
    for boxes in ([[1, 2, 3, 4]], np.array([[1, 2, 3, 4]], np.int16), np.array([[1, 2, 3, 4]], np.float64),
                  np.array([[1, 2, 3, 4]], np.uint8), np.zeros((0, 4))):
        v.show(frame, boxes=boxes, scores=np.ones(len(boxes), np.float32))
    v.show(frame, boxes=np.arange(16, dtype=np.float32).reshape(4, 4)[::2] + [0, 0, 1, 1])  # strided rows
    v.show(frame, labels=["a", None])  # objects without boxes: labels only
    assert v.stats.submitted == 7


LISTS_CHANGED_WHILE_READ = r"""
import handoff
class Shrink:
    # A number whose conversion drops the rows after the first of the list it sits in.
    def __init__(self, outer, value):
        self.outer, self.value = outer, value
    def __float__(self):
        del self.outer[1:]
        return self.value
boxes = [[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 1.0, 1.0]]
boxes[0][2] = Shrink(boxes, 3.0)
keypoints = [[[0, 0], [1, 1]], [[2, 2], [3, 3]], [[4, 4], [5, 5]], [[6, 6], [7, 7]]]
keypoints[0][0][1] = Shrink(keypoints, 0.0)
o = handoff.Overlays.from_arrays(boxes=boxes, keypoints=keypoints, width=64, height=48)
print(o.boxes.tolist(), o.keypoint_counts.tolist())
"""


def test_overlay_lists_changed_while_read_give_what_was_counted():
    """A value's __float__ that shortened the list being read left fewer values than its shape said,
    and the boxes were read past them. The lists are read as they were when counted; in a process of
    its own, as a read past the end may crash."""
    assert run_isolated(LISTS_CHANGED_WHILE_READ).strip() == (
        "[[0.0, 0.0, 3.0, 2.0], [1.0, 1.0, 3.0, 3.0], [2.0, 2.0, 4.0, 4.0], [3.0, 3.0, 4.0, 4.0]] [2, 2, 2, 2]")


# --- memory, the GIL -------------------------------------------------------------------------
def test_ten_thousand_shows_keep_memory_flat(no_leaks):
    with viewer() as v:
        luma, chroma = solid_planes(64, 48, 100)
        boxes = np.array([[4, 4, 16, 16], [30, 20, 10, 10]], np.float32)
        for _ in range(1000):  # warm up: allocator pools, GL buffers at their size
            v.show((luma, chroma), boxes=boxes, labels=["a", "b"])
        gc.collect()
        before = rss_bytes()
        for _ in range(10_000):
            v.show((luma, chroma), boxes=boxes, labels=["a", "b"])
        gc.collect()
        grown = rss_bytes() - before
        assert v.stats.submitted == 11_000
        assert_no_gl_errors(v)
    # A leak of one frame or overlay per call would be >= 10,000 allocations: hundreds of KiB at least.
    assert grown < 4 << 20, f"RSS grew by {grown / 1e6:.1f} MB over 10,000 show calls"


def test_another_python_thread_runs_while_wait_closed_blocks(v):
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        assert v.wait_closed(timeout=0.3) is False  # still open: times out
        progressed = counter[0]
    finally:
        stop.set()
        t.join()
    # Holding the GIL through the wait would have kept the counter at (nearly) nothing.
    assert progressed > 1000, progressed


def test_wait_closed_timeouts(v):
    """timeout=0: whether it is closed now; None or +inf: no limit (inf and 1e300 overflowed into an at once
    False); NaN and negative numbers are a ValueError."""
    assert v.wait_closed(timeout=0) is False
    for bad in (float("nan"), -1.0):
        with pytest.raises(ValueError, match="timeout"):
            v.wait_closed(timeout=bad)
    closer = threading.Timer(0.2, v.close)
    closer.start()
    try:
        assert v.wait_closed(timeout=float("inf")) is True
    finally:
        closer.join()
    assert v.wait_closed(timeout=1e300) is True


def test_show_blocked_by_pause_runs_signal_handlers():
    """paused_show="block": a signal ends the wait (Ctrl-C's KeyboardInterrupt, here a SIGUSR1 handler's
    exception); show() waited without looking before. The viewer goes on: a step still releases a show."""
    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted()

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        with viewer(paused_show="block") as v:
            v.show(solid_planes(32, 32, 50))
            v.paused = True
            timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGUSR1))
            timer.start()
            try:
                with pytest.raises(Interrupted):
                    v.show(solid_planes(32, 32, 200))
            finally:
                timer.join()
            stepper = threading.Timer(0.2, v.step)
            stepper.start()
            v.show(solid_planes(32, 32, 120))
            stepper.join()
            assert (np.abs(snap(v)[5, 5, :3].astype(int) - yuv_to_rgb8(120, 128, 128)) <= 1).all()
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_show_blocked_by_pause_releases_the_gil():
    """paused_show="block": show() waits until a step; the step comes from another
    Python thread, which can only run if show() released the GIL."""
    with viewer(paused_show="block") as v:
        v.show(solid_planes(32, 32, 50))
        snap(v)
        v.paused = True
        assert v.paused
        returned = threading.Event()

        def stepper():
            while not returned.wait(0.02):
                v.step()

        t = threading.Thread(target=stepper)
        t.start()
        try:
            v.show(solid_planes(32, 32, 200))  # blocks until the stepper steps
        finally:
            returned.set()
            t.join()
        assert v.steps >= 1
        assert (np.abs(snap(v)[5, 5, :3].astype(int) - yuv_to_rgb8(200, 128, 128)) <= 1).all()
        v.paused = False
        assert_no_gl_errors(v)


def test_paused_keep_newest_returns_at_once_and_counts_drops():
    with viewer() as v:
        v.show(solid_planes(32, 32, 50))
        snap(v)
        v.paused = True
        for y in (60, 70, 80):
            v.show(solid_planes(32, 32, y))  # returns: the newest waits
        v.step()
        s = v.stats
        assert s.submitted == 4 and s.dropped >= 2
        assert (np.abs(snap(v)[5, 5, :3].astype(int) - yuv_to_rgb8(80, 128, 128)) <= 1).all()


# --- acquire --------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["nv12", "p010"])
def test_acquire_writes_through_dlpack_and_presents_on_exit(v, fmt):
    luma, chroma = quadrant_planes(96, 64, fmt)
    with v.acquire(fmt, 96, 64, colorimetry=handoff.Colorimetry("bt709", "full")) as f:
        assert f.memory == "host" and (f.width, f.height, f.format) == (96, 64, fmt)
        y = np.from_dlpack(f.luma)
        assert y.flags.writeable and y.shape == (64, 96)
        y[:] = luma
        before = np.from_dlpack(f.luma, copy=True)  # a copy of what is there now, not the buffer
        before[:] = 0
        assert np.array_equal(y, luma)
        np.asarray(f.chroma)[:] = chroma  # __array_interface__, writable
        f.index = 41
        f.set_overlays(boxes=[[2, 2, 10, 10]])
        del y
    assert_quadrants(snap(v), fmt, "bt709", "full")
    assert v.stats.last_index == 41
    with pytest.raises(ValueError, match="presented"):
        f.luma


def test_acquire_with_an_exception_gives_the_buffer_back_unshown(v):
    with pytest.raises(RuntimeError, match="producer failed"):
        with v.acquire("nv12", 32, 32) as f:
            np.from_dlpack(f.luma)[:] = 10
            raise RuntimeError("producer failed")
    assert v.stats.submitted == 0
    for _ in range(5):  # the ring's buffers all came back
        with v.acquire("nv12", 32, 32):
            pass
    assert v.stats.submitted == 5


def test_acquire_refuses_to_present_while_an_array_still_refers_to_it(v):
    with pytest.raises(BufferError, match="still refer"):
        with v.acquire("nv12", 32, 32) as f:
            kept = np.from_dlpack(f.luma)
            kept[:] = 1
    assert v.stats.submitted == 0
    kept[:] = 2  # the buffer stays mapped while the array lives
    del kept
    gc.collect()
    for _ in range(5):
        with v.acquire("nv12", 32, 32):
            pass
    assert v.stats.submitted == 5
    with pytest.raises(ValueError, match="format"):
        v.acquire("yuv444", 32, 32)
    with pytest.raises(handoff.InvalidFrame):
        v.acquire("nv12", 0, 32)


def test_a_viewer_holding_its_acquired_frame_is_collected():
    """viewer -> its __dict__ -> AcquiredFrame -> viewer: a cycle the collector frees (the frame's buffer
    going back first), not a viewer and its display thread left alive until exit."""
    class Holding(handoff.Viewer):
        pass

    held = Holding(title="pytest", width=320, height=240, headless=True, vsync=False)
    held.pending = held.acquire("nv12", 32, 32)
    gone = weakref.ref(held)
    del held
    gc.collect()
    assert gone() is None


def test_a_headless_viewer_says_it_has_no_window(v, monkeypatch):
    assert not v.windowed  # headless=True
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with viewer(headless=False, display="auto") as fallen_back:  # no display: headless, with a notice
        assert not fallen_back.windowed


def test_viewer_options_are_checked():
    with pytest.raises(ValueError, match="display"):
        handoff.Viewer(display="tv")
    with pytest.raises(ValueError, match="memory"):
        handoff.Viewer(memory="gpu")
    with pytest.raises(ValueError, match="paused_show"):
        handoff.Viewer(paused_show="maybe")
    with pytest.raises(ValueError, match="convert"):
        handoff.Viewer(convert="fpga")
    with pytest.raises(ValueError, match="ring"):
        handoff.Viewer(headless=True, ring=1)


@pytest.mark.parametrize("fmt,channels", [("rgba8", 4), ("gray8", None)])
def test_acquire_hands_out_one_plane_formats(v, fmt, channels):
    """acquire in host memory: the one plane is `pixels`, writable, HWC; what is written is drawn."""
    img = image_rgb(40, 24)
    src = np.concatenate([img, np.full((24, 40, 1), 255, np.uint8)], axis=-1) if channels else img[..., 1].copy()
    with v.acquire(fmt, 40, 24) as f:
        assert f.memory == "host"
        with pytest.raises(ValueError, match=f"a {fmt} frame has no luma plane; it has pixels"):
            f.luma
        a = np.from_dlpack(f.pixels)
        assert a.shape == src.shape and a.flags.writeable
        a[:] = src
        del a
    got = snap(v)
    want = src[..., :3] if channels else src[..., None]
    assert np.abs(got[..., :3].astype(int) - want).max() <= 1
