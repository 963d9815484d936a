"""Playback rate of a 1080p H.264 recording (foxglove.CompressedVideo) in handoff against mpv
decoding the same stream (issue 24, section 2). Prints a Markdown section for BENCHMARKS.md;
the ratio is against the baseline measured in the same run.

    PYTHONPATH=build/default/python .venv/bin/python bench/video_playback.py [--frames 300] [--runs 3]

The stream: PyAV's libx264 (veryfast, no B-frames, a keyframe every 60 frames) of a moving
1920x1080 pattern, as raw Annex B (stream.h264) and as an MCAP of CompressedVideo messages.
handoff: handoff.open(...) reading every frame into NV12 (libavcodec, its own thread choice);
baseline: `mpv --vo=null --untimed --ao=null --hwdec=no stream.h264` (Debian's libavcodec too,
decoding and discarding every frame). Both run on the same machine one after the other, RUNS
times; medians of wall time and of CPU time (user + system, the steadier figure on a shared
machine) are reported.
"""
import argparse
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from foxglove_schemas_protobuf.CompressedVideo_pb2 import CompressedVideo
from mcap_protobuf.writer import Writer as ProtobufWriter

import handoff

W, H = 1920, 1080


def make_stream(n):
    ctx = av.CodecContext.create("libx264", "w")
    ctx.width, ctx.height, ctx.pix_fmt, ctx.time_base = W, H, "yuv420p", Fraction(1, 30)
    ctx.options = {"preset": "veryfast", "x264-params": "keyint=60:min-keyint=60:scenecut=0:bframes=0:crf=20"}
    y, x = np.mgrid[0 : H * 3 // 2, 0:W]
    units = []
    for i in range(n):
        img = ((x + 2 * i) ^ (y + i)) % 256  # structure that moves every frame
        frame = av.VideoFrame.from_ndarray(img.astype(np.uint8), format="yuv420p")
        frame.pts = i
        units += [bytes(p) for p in ctx.encode(frame)]
    units += [bytes(p) for p in ctx.encode(None)]
    return units


def write(work, units):
    (work / "stream.h264").write_bytes(b"".join(units))
    with open(work / "stream.mcap", "wb") as f:
        w = ProtobufWriter(f)
        for i, unit in enumerate(units):
            t = 1_000_000_000 + i * 33_333_333
            m = CompressedVideo(frame_id="cam", data=unit, format="h264")
            m.timestamp.FromNanoseconds(t)
            w.write_message("/cam", m, log_time=t, publish_time=t)
        w.finish()


def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def handoff_seconds(path, n):
    """(wall, CPU) seconds to open the recording and read every frame."""
    t0, c0 = time.perf_counter(), cpu(resource.RUSAGE_SELF)
    src = handoff.open(path)
    count = sum(1 for _ in src)
    assert count == n, count
    return time.perf_counter() - t0, cpu(resource.RUSAGE_SELF) - c0


def mpv_seconds(path):
    t0, c0 = time.perf_counter(), cpu(resource.RUSAGE_CHILDREN)
    subprocess.run(["mpv", "--no-config", "--vo=null", "--ao=null", "--untimed", "--hwdec=no", "--really-quiet",
                    "--demuxer-lavf-format=h264", str(path)], check=True)
    return time.perf_counter() - t0, cpu(resource.RUSAGE_CHILDREN) - c0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if not shutil.which("mpv"):
        raise SystemExit("bench/video_playback.py: mpv not found (the baseline)")
    work = Path(tempfile.mkdtemp(prefix="handoff-video-bench-"))
    try:
        units = make_stream(a.frames)
        write(work, units)
        rows = []
        for _ in range(a.runs):  # interleaved, so drift in a shared machine's load hits both
            rows.append((handoff_seconds(work / "stream.mcap", a.frames), mpv_seconds(work / "stream.h264")))
        h = statistics.median(r[0][0] for r in rows)
        m = statistics.median(r[1][0] for r in rows)
        hc = statistics.median(r[0][1] for r in rows)
        mc = statistics.median(r[1][1] for r in rows)
        size = (work / "stream.h264").stat().st_size
        print(f"### Compressed video playback (1080p H.264, {a.frames} frames, {size / a.frames / 1024:.0f} KiB/frame)\n")
        print("| player | median wall s | frames/s | median CPU s | CPU ms/frame |")
        print("|---|---|---|---|---|")
        print(f"| handoff.open, every frame to NV12 | {h:.2f} | {a.frames / h:.1f} | {hc:.2f} | {1000 * hc / a.frames:.1f} |")
        print(f"| mpv --vo=null --untimed (baseline) | {m:.2f} | {a.frames / m:.1f} | {mc:.2f} | {1000 * mc / a.frames:.1f} |")
        print(f"\nratio handoff / mpv: frames/s {m / h:.2f}, CPU per frame {mc / hc:.2f} (wall runs handoff/mpv: " +
              ", ".join(f"{x[0]:.2f}/{y[0]:.2f}" for x, y in rows) + ")")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
