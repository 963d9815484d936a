"""cuda tier (real GPU only): handoff.Viewer with PyTorch CUDA tensors: frames
shown from device memory (device-to-device copy), acquire + torch.from_dlpack
writing the viewer's own buffer, overlay arrays on the GPU, the PyTorch example.
Skips, saying why, without a GPU, a CUDA driver or torch."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import handoff

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from viewer_helpers import assert_no_gl_errors, assert_quadrants, quadrant_planes, viewer  # noqa: E402

from cuda_available import torch  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "examples" / "python"


def cuda_quadrants():
    luma, chroma = quadrant_planes(96, 64, "nv12")
    return torch.from_numpy(luma).cuda(), torch.from_numpy(chroma).cuda()


def test_torch_cuda_frame_is_shown():
    with viewer(memory="cuda") as v:
        v.show(cuda_quadrants(), colorimetry=handoff.Colorimetry("bt709", "limited"))
        assert_quadrants(np.from_dlpack(v.snapshot()), "nv12", "bt709", "limited")
        assert "CUDA" in v.stream["memory"], v.stream["memory"]
        assert_no_gl_errors(v)


def test_acquire_and_torch_from_dlpack_write_the_viewers_buffer():
    luma, chroma = cuda_quadrants()
    with viewer(memory="cuda") as v:
        with v.acquire("nv12", 96, 64) as f:
            assert f.memory == "cuda"
            torch.from_dlpack(f.luma).copy_(luma)
            torch.from_dlpack(f.chroma).copy_(chroma)
        assert_quadrants(np.from_dlpack(v.snapshot()), "nv12", "bt709", "limited")
        assert_no_gl_errors(v)


def test_overlay_arrays_on_the_gpu_draw_like_host_arrays():
    boxes = torch.tensor([[20, 10, 40, 30]], dtype=torch.float32)
    with viewer(memory="cuda") as v:
        frame = cuda_quadrants()
        v.show(frame, boxes=boxes, scores=torch.tensor([0.5]))
        want = np.from_dlpack(v.snapshot()).copy()
        v.show(frame, boxes=boxes.cuda(), scores=torch.tensor([0.5], device="cuda"))
        assert np.array_equal(np.from_dlpack(v.snapshot()), want)


def test_frame_on_another_device_is_refused():
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device: no other device to refuse")
    with viewer(memory="cuda", cuda_device=0) as v:
        luma, chroma = (t.to("cuda:1") for t in cuda_quadrants())
        with pytest.raises(handoff.InvalidFrame, match="device"):
            v.show((luma, chroma))


def test_torch_example_runs():
    r = subprocess.run([sys.executable, str(EXAMPLES / "torch_acquire.py"), "--headless", "--frames", "20",
                        "--width", "640", "--height", "360"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "20 frames presented" in r.stdout
