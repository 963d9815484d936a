"""handoff.Viewer in a window (Xvfb under scripts/test; skipped without a DISPLAY):
shown pixels against the colour reference, overlays, the view with the UI, closing."""
import numpy as np
import pytest

import handoff
from viewer_helpers import assert_no_gl_errors, assert_quadrants, quadrant_planes, solid_planes, viewer, window_available

pytestmark = pytest.mark.skipif(not window_available(), reason="no DISPLAY: the window tests run under xvfb-run")


def test_window_shows_frames_equal_to_the_reference():
    with viewer(display="window", headless=False, title="pytest window") as v:
        for fmt, matrix in [("nv12", "bt709"), ("p010", "bt2020")]:
            v.show(quadrant_planes(96, 64, fmt), colorimetry=handoff.Colorimetry(matrix, "limited"),
                   boxes=[[70, 40, 20, 20]])
            img = np.from_dlpack(v.snapshot())
            assert img.shape == (64, 96, 4)
            assert_quadrants(img, fmt, matrix, "limited")
            assert (img[40, 80, :3] >= 240).all(), "the box's top edge"  # a white outline (no class)
        view = np.from_dlpack(v.snapshot("view"))
        assert view.shape == (240, 320, 4)
        assert v.stats.shown >= 2
        assert v.windowed
        assert_no_gl_errors(v)
    assert not v.is_open()
    with pytest.raises(handoff.ViewerClosed):
        v.show(solid_planes(16, 16, 100))
