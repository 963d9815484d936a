"""Shared by the viewer, live and recording tests: the colour reference (ITU-R BT.601 / 709 /
2020, as docs/media.md states it, computed here in float64 independently of the viewer's
shader), test frames as NumPy planes, the test pattern fill_test_pattern writes (computed
independently), and viewer options for tests."""
import faulthandler
import os

import numpy as np
import pytest

import handoff

KR_KB = {"bt601": (0.299, 0.114), "bt709": (0.2126, 0.0722), "bt2020": (0.2627, 0.0593)}


def yuv_to_rgb8(y, cb, cr, matrix="bt709", range_="limited", bits=8):
    """Codes -> 8-bit R'G'B' (rounded, clamped), the reference the viewer must match."""
    kr, kb = KR_KB[matrix]
    kg = 1.0 - kr - kb
    s = 2 ** (bits - 8)
    half = 2 ** (bits - 1)
    if range_ == "limited":
        yn, pb, pr = (y - 16 * s) / (219 * s), (cb - half) / (224 * s), (cr - half) / (224 * s)
    else:
        top = 2 ** bits - 1
        yn, pb, pr = y / top, (cb - half) / top, (cr - half) / top
    r = yn + 2 * (1 - kr) * pr
    b = yn + 2 * (1 - kb) * pb
    g = (yn - kr * r - kb * b) / kg
    return np.clip(np.round(np.array([r, g, b]) * 255), 0, 255).astype(int)


# Four (Y, Cb, Cr) colours as 8-bit codes, inside the RGB gamut for every matrix and range
# (no channel clips, so each matrix gives other pixels): orange, green, blue, grey.
QUADRANTS_8 = [(100, 110, 160), (140, 100, 100), (70, 170, 120), (126, 128, 128)]


def quadrant_planes(width, height, fmt="nv12"):
    """(luma, chroma) NumPy planes with one colour per quadrant (even quadrant sizes)."""
    dtype = np.uint8 if fmt == "nv12" else np.uint16
    shift = 0 if fmt == "nv12" else 8  # 8-bit codes -> 10-bit codes (x4) -> stored << 6
    luma = np.zeros((height, width), dtype)
    chroma = np.zeros(((height + 1) // 2, (width + 1) // 2, 2), dtype)
    hw, hh = width // 2, height // 2
    for i, (y, cb, cr) in enumerate(QUADRANTS_8):
        xs = slice(0, hw) if i % 2 == 0 else slice(hw, width)
        ys = slice(0, hh) if i < 2 else slice(hh, height)
        cxs = slice(xs.start // 2, (xs.stop + 1) // 2)
        cys = slice(ys.start // 2, (ys.stop + 1) // 2)
        luma[ys, xs] = y << shift
        chroma[cys, cxs] = (cb << shift, cr << shift)
    return luma, chroma


def quadrant_reference(fmt, matrix, range_):
    bits = 8 if fmt == "nv12" else 10
    scale = 1 if fmt == "nv12" else 4
    return [yuv_to_rgb8(y * scale, cb * scale, cr * scale, matrix, range_, bits) for y, cb, cr in QUADRANTS_8]


def assert_quadrants(rgba, fmt, matrix, range_, tolerance=1):
    h, w = rgba.shape[:2]
    want = quadrant_reference(fmt, matrix, range_)
    for i, (x, y) in enumerate([(w // 4, h // 4), (3 * w // 4, h // 4), (w // 4, 3 * h // 4), (3 * w // 4, 3 * h // 4)]):
        got = rgba[y, x, :3].astype(int)
        assert np.all(np.abs(got - want[i]) <= tolerance), \
            f"{fmt} {matrix} {range_} quadrant {i} at ({x}, {y}): {got.tolist()} != reference {want[i].tolist()}"


def solid_planes(width, height, y, cb=128, cr=128, fmt="nv12"):
    dtype = np.uint8 if fmt == "nv12" else np.uint16
    shift = 0 if fmt == "nv12" else 6
    luma = np.full((height, width), y << shift, dtype)
    chroma = np.empty(((height + 1) // 2, (width + 1) // 2, 2), dtype)
    chroma[..., 0] = cb << shift
    chroma[..., 1] = cr << shift
    return luma, chroma


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


def window_available():
    return bool(os.environ.get("DISPLAY"))


def viewer(**kwargs):
    """A headless viewer with GL debug output on (KHR_debug errors are counted)."""
    opts = dict(title="pytest", width=320, height=240, headless=True, vsync=False, gl_debug=True)
    opts.update(kwargs)
    return handoff.Viewer(**opts)


def assert_no_gl_errors(v):
    d = v.diagnostics
    assert d["gl_errors"] == 0, d["first_gl_error"]


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# Fixtures of the viewer test modules (imported there by name, so pytest finds them).
@pytest.fixture(autouse=True)
def watchdog():
    """A hang (e.g. a call that kept the GIL while it waited) fails loudly instead of blocking the tier."""
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def v():
    with viewer() as view:
        yield view
        assert_no_gl_errors(view)
