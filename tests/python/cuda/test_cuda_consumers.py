"""cuda tier (real GPU only): PyTorch and CuPy consume handoff's CUDA planes
without a copy, and Frame.from_planes takes their CUDA tensors. Skips, saying
why, where there is no GPU, no CUDA driver, or no torch / cupy."""
import gc

import numpy as np
import pytest

import handoff

from cuda_available import torch

try:
    import cupy
except ImportError:  # only the CuPy tests skip
    cupy = None


def pitched_cuda(h, w, dtype, pitch, comps=None):
    shape = (h, pitch) if comps is None else (h, pitch // comps, comps)
    big = torch.zeros(shape, dtype=dtype, device="cuda")
    return big[:, :w] if comps is None else big[:, :w, :]


def torch_pair(fmt):
    assert fmt == "nv12"  # torch's uint16 support is partial; P010 is tested through CuPy
    luma = pitched_cuda(17, 33, torch.uint8, 64)
    chroma = pitched_cuda(9, 17, torch.uint8, 64, comps=2)
    luma.copy_(torch.arange(17 * 33, device="cuda").reshape(17, 33).to(torch.uint8))
    chroma.copy_(torch.arange(9 * 17 * 2, device="cuda").reshape(9, 17, 2).to(torch.uint8))
    return luma, chroma


def test_from_planes_takes_torch_cuda_tensors_without_copy():
    luma, chroma = torch_pair("nv12")
    f = handoff.Frame.from_planes(luma, chroma)
    assert f.memory == "cuda" and f.device == luma.device.index
    assert f.luma.ptr == luma.data_ptr()
    assert f.chroma.ptr == chroma.data_ptr()
    assert f.luma.pitch == 64
    assert f.cuda_context is not None  # the device's primary context, shared with PyTorch


def test_torch_from_dlpack_aliases_device_pointer():
    luma, chroma = torch_pair("nv12")
    f = handoff.Frame.from_planes(luma, chroma)
    t = torch.from_dlpack(f.luma)
    assert t.is_cuda
    assert t.data_ptr() == luma.data_ptr()  # same device memory: no copy
    assert t.stride() == (64, 1)
    assert torch.equal(t, luma)
    c = torch.from_dlpack(f.chroma)
    assert c.data_ptr() == chroma.data_ptr()
    assert torch.equal(c, chroma)


@pytest.mark.skipif(cupy is None, reason="CuPy is not installed")
def test_cupy_asarray_aliases_device_pointer_via_cai():
    luma, chroma = torch_pair("nv12")
    f = handoff.Frame.from_planes(luma, chroma)
    a = cupy.asarray(f.luma)  # __cuda_array_interface__
    assert a.data.ptr == luma.data_ptr()
    assert a.strides == (64, 1)
    np.testing.assert_array_equal(cupy.asnumpy(a), luma.cpu().numpy())
    b = cupy.from_dlpack(f.chroma)
    assert b.data.ptr == chroma.data_ptr()


@pytest.mark.skipif(cupy is None, reason="CuPy is not installed")
def test_from_planes_takes_cupy_p010():
    big = cupy.zeros((17, 40), dtype=cupy.uint16)
    luma = big[:, :33]
    luma[...] = cupy.arange(17 * 33, dtype=cupy.uint16).reshape(17, 33) << 6
    chroma = cupy.zeros((9, 20, 2), dtype=cupy.uint16)[:, :17, :]
    f = handoff.Frame.from_planes(luma, chroma, "p010")
    assert f.luma.ptr == luma.data.ptr
    assert f.luma.pitch == 80
    back = cupy.from_dlpack(f.luma)
    assert back.data.ptr == luma.data.ptr
    assert bool((back == luma).all())


def test_cuda_frame_refuses_host_consumers():
    luma, chroma = torch_pair("nv12")
    f = handoff.Frame.from_planes(luma, chroma)
    with pytest.raises(BufferError):
        memoryview(f.luma)
    with pytest.raises(BufferError):
        f.luma.__dlpack__(dl_device=(1, 0))


def test_export_outlives_frame_and_producer():
    luma, chroma = torch_pair("nv12")
    want = luma.clone()
    f = handoff.Frame.from_planes(luma, chroma)
    t = torch.from_dlpack(f.luma)
    live = handoff.live_objects()["frames"]
    del f, luma, chroma
    gc.collect()
    assert handoff.live_objects()["frames"] == live  # the export keeps the frame (and the torch tensors)
    assert torch.equal(t, want)
    del t
    gc.collect()
    assert handoff.live_objects()["frames"] == live - 1


# --- the one-plane formats: HWC CUDA tensors in and out, and show() of them ------------------------
@pytest.mark.parametrize("shape,dtype,default", [
    ((17, 33, 3), "uint8", "rgb8"), ((17, 33, 4), "uint8", "rgba8"), ((17, 33), "uint8", "gray8"),
    ((17, 33), "float32", "gray32f")])
def test_torch_hwc_cuda_tensor_round_trip_without_copy(shape, dtype, default):
    """A pitched (a crop of a wider tensor) CUDA image: from_arrays takes it by the format rule, no copy, and
    torch reads the frame's plane back as the same memory."""
    big = torch.arange(int(np.prod((shape[0], 64) + shape[2:])), device="cuda").reshape((shape[0], 64) + shape[2:])
    t = big.to(getattr(torch, dtype))[:, 5:5 + shape[1]]
    f = handoff.Frame.from_arrays(t)
    assert f.format == default and f.memory == "cuda"
    assert f.pixels.ptr == t.data_ptr() and f.pixels.pitch == t.stride(0) * t.element_size()
    back = torch.from_dlpack(f.pixels)
    assert back.data_ptr() == t.data_ptr() and back.shape == t.shape and torch.equal(back, t)


@pytest.mark.skipif(cupy is None, reason="CuPy is not installed")
def test_cupy_gray16_and_bgr8_through_cai():
    depth = cupy.arange(12 * 20, dtype=cupy.uint16).reshape(12, 20)
    f = handoff.Frame.from_arrays(depth)
    assert f.format == "gray16" and f.pixels.ptr == depth.data.ptr
    bgr = cupy.zeros((12, 20, 3), cupy.uint8)
    g = handoff.Frame.from_arrays(bgr, format="bgr8")
    assert g.format == "bgr8"
    assert cupy.asarray(g.pixels).data.ptr == bgr.data.ptr


def test_show_of_a_torch_cuda_rgb_image():
    rgb = torch.zeros((48, 64, 3), dtype=torch.uint8, device="cuda")
    rgb[..., 0] = 200
    rgb[:, 32:, 2] = 90
    with handoff.Viewer(title="cuda-rgb", width=320, height=240, headless=True, vsync=False) as v:
        v.show(rgb)
        img = np.from_dlpack(v.snapshot())
        want = rgb.cpu().numpy()
        assert np.abs(img[..., :3].astype(int) - want).max() <= 1
        assert v.stream["format"] == "rgb8"
