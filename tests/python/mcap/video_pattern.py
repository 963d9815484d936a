"""A moving pattern encoded as H.264 / H.265 by PyAV (its own FFmpeg build, libx264 / libx265):
Annex B, no B-frames, a keyframe with its parameter sets every GOP frames; and PyAV's own decoding
of the same packets. Shared by the foxglove.CompressedVideo tests (this folder) and the ROS 2 bag
video tests (tests/python/ros)."""
from fractions import Fraction

import av
import numpy as np

W, H, N, GOP = 128, 96, 25, 10


def pattern(i):
    """Frame i as (Y, U, V) planes: smooth ramps moving 3 codes a frame."""
    y, x = np.mgrid[0:H, 0:W]
    luma = (40 + (x + y // 2 + 3 * i) % 160).astype(np.uint8)
    cy, cx = np.mgrid[0 : H // 2, 0 : W // 2]
    u = (90 + (cx + 2 * cy + i) % 60).astype(np.uint8)
    v = (150 - (2 * cx + cy) % 50).astype(np.uint8)
    return luma, u, v


def encode(codec):
    """N access units (bytes) of the pattern, and PyAV's decoding of them as (Y, U, V) planes."""
    name, params = {"h264": ("libx264", "x264-params"), "h265": ("libx265", "x265-params")}[codec]
    ctx = av.CodecContext.create(name, "w")
    ctx.width, ctx.height, ctx.pix_fmt = W, H, "yuv420p"
    ctx.time_base = Fraction(1, 30)
    ctx.options = {params: f"keyint={GOP}:min-keyint={GOP}:scenecut=0:bframes=0:qp=12"
                   + (":open-gop=0:log-level=none" if codec == "h265" else "")}
    packets = []
    for i in range(N):
        luma, u, v = pattern(i)
        frame = av.VideoFrame.from_ndarray(np.concatenate([luma, u.reshape(H // 4, W), v.reshape(H // 4, W)]),
                                           format="yuv420p")
        frame.pts = i
        packets += ctx.encode(frame)
    packets += ctx.encode(None)
    assert len(packets) == N
    units = [bytes(p) for p in packets]
    assert units[0][:3] == b"\0\0\1" or units[0][:4] == b"\0\0\0\1", "Annex B"
    dec = av.CodecContext.create(codec if codec == "h264" else "hevc", "r")
    decoded = []
    for unit in units + [None]:
        for f in dec.decode(av.Packet(unit) if unit is not None else None):
            a = f.to_ndarray(format="yuv420p")
            decoded.append((a[:H], a[H : H + H // 4].reshape(H // 2, W // 2), a[H + H // 4 :].reshape(H // 2, W // 2)))
    assert len(decoded) == N
    return units, decoded
