"""Size and encoding cost of a 1080p recording of the default scene: codec raw (RawImage, zstd
chunks) against h264 and h265 (CompressedVideo), in the same run on the same frames.

  PYTHONPATH=build/default/python .venv/bin/python bench/record_video.py [--frames 120]

Cost: CPU seconds of the whole process (every thread: the writer thread and libx264's) per frame,
measured around writing and closing the recording (the frames are rendered before, not counted);
and wall time per frame with block_when_full (no frame dropped). Ratios are against raw+zstd."""
import argparse
import os
import resource
import tempfile
import time

import numpy as np

import handoff


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--height", type=int, default=1080)
    a = ap.parse_args()
    frames = []
    for frame, _ in handoff.open_scene(width=a.width, height=a.height, format="nv12", frames=a.frames):
        # The source reuses its buffers: copy each frame's planes.
        frames.append((np.from_dlpack(frame.luma).copy(), np.from_dlpack(frame.chroma).copy()))
    results = {}
    with tempfile.TemporaryDirectory() as d:
        for codec in ("raw", "h264", "h265"):
            path = os.path.join(d, codec + ".mcap")
            c0, t0 = cpu_s(), time.perf_counter()
            with handoff.RecordingWriter(path, codec=codec, compression="zstd", block_when_full=True) as rec:
                for i, f in enumerate(frames):
                    rec.write(f, format="nv12", log_time=1 + i * 33_333_333)
            c1, t1 = cpu_s(), time.perf_counter()
            results[codec] = (os.path.getsize(path), (c1 - c0) / len(frames), (t1 - t0) / len(frames))
    raw = results["raw"]
    print(f"{a.width}x{a.height} nv12 scene, {a.frames} frames, {os.cpu_count()} CPUs")
    for codec, (size, cpu, wall) in results.items():
        print(f"{codec:5s} {size / len(frames) / 1024:9.1f} KiB/frame  size x{raw[0] / size:7.1f} smaller  "
              f"cpu {cpu * 1e3:7.2f} ms/frame (x{cpu / raw[1]:.1f})  wall {wall * 1e3:7.2f} ms/frame "
              f"({1 / wall:6.1f} fps)")


if __name__ == "__main__":
    main()
