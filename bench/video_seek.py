"""Time to seek in a 10,000-frame H.264 recording against a 100-frame one (issue 24, section 2).
Prints a Markdown section for BENCHMARKS.md.

    PYTHONPATH=build/default/python .venv/bin/python bench/video_seek.py [--seeks 400] [--width 320 --height 240]

Recordings (foxglove.CompressedVideo, 30 fps log times, a moving pattern), two of each length:
- "recorder": written by handoff's own recorder (handoff.RecordingWriter(codec="h264"): libx264
  veryfast CRF 20, no B-frames, an IDR with its parameter sets on the first frame at least 1 s
  after the last one: every 31 frames at these log times);
- "keyint 60": PyAV's libx264 with a keyframe every 60 frames (2 s, the longest spacing the issue
  allows), written with mcap-protobuf-support.
A seek is `src.seek(k)` then `src.read()` of frame k (NV12 into handoff's frame) after the recording
was opened (opening, which reads every message once for the keyframe index, is timed apart). Targets
are uniform at random; before each, the last frame is read (not timed), so every timed seek restarts
the decoder at the keyframe at or before k and decodes up to k, as a jump in a viewer does (a target
later in the group being decoded would be reached without a restart). Medians and 99th percentiles
of wall time over --seeks seeks per recording, CPU time (user + system, all threads) per seek (the
steadier figure on a shared machine), the mean number of frames decoded per seek (k minus its
keyframe, plus one; the keyframes found in the file's access units; a 100-frame recording's last
group is short, so its seeks decode fewer frames) and the median time per decoded frame (each
seek's time over its frame count: the cost with that difference taken out).
"""
import argparse
import os
import random
import resource
import statistics
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from foxglove_schemas_protobuf.CompressedVideo_pb2 import CompressedVideo
from mcap.reader import make_reader
from mcap_protobuf.writer import Writer as ProtobufWriter

import handoff

STEP_NS = 33_333_333  # 30 fps
T0 = 1_000_000_000


def luma(i, w, h):
    y, x = np.mgrid[0:h, 0:w]
    return (((x + 2 * i) ^ (y + i)) % 256).astype(np.uint8)  # structure that moves every frame


def chroma(i, w, h):
    y, x = np.mgrid[0 : h // 2, 0 : w // 2]
    c = np.empty((h // 2, w // 2, 2), np.uint8)
    c[..., 0] = (96 + (x + i) % 64).astype(np.uint8)
    c[..., 1] = (160 - (y + i) % 64).astype(np.uint8)
    return c


def write_recorder(path, n, w, h):
    with handoff.RecordingWriter(str(path), codec="h264", block_when_full=True) as rec:
        for i in range(n):
            rec.write((luma(i, w, h), chroma(i, w, h)), format="nv12", log_time=T0 + i * STEP_NS)


def write_keyint60(path, n, w, h):
    ctx = av.CodecContext.create("libx264", "w")
    ctx.width, ctx.height, ctx.pix_fmt, ctx.time_base = w, h, "yuv420p", Fraction(1, 30)
    ctx.options = {"preset": "veryfast", "x264-params": "keyint=60:min-keyint=60:scenecut=0:bframes=0:crf=20"}
    units = []
    for i in range(n):
        c = chroma(i, w, h)
        planes = np.concatenate([luma(i, w, h), c[..., 0].reshape(h // 4, w), c[..., 1].reshape(h // 4, w)])
        frame = av.VideoFrame.from_ndarray(planes, format="yuv420p")
        frame.pts = i
        units += [bytes(p) for p in ctx.encode(frame)]
    units += [bytes(p) for p in ctx.encode(None)]
    assert len(units) == n, len(units)
    assert all(units[i][:4] == b"\0\0\0\1" or units[i][:3] == b"\0\0\1" for i in (0, n - 1)), "Annex B"
    with open(path, "wb") as f:
        wr = ProtobufWriter(f)
        for i, unit in enumerate(units):
            m = CompressedVideo(frame_id="cam", data=unit, format="h264")
            m.timestamp.FromNanoseconds(T0 + i * STEP_NS)
            wr.write_message("/cam", m, log_time=T0 + i * STEP_NS, publish_time=T0 + i * STEP_NS)
        wr.finish()


def keyframes(path):
    """Indices of the messages holding an H.264 IDR slice (NAL unit type 5)."""
    out = []
    with open(path, "rb") as f:
        for i, (_, _, m) in enumerate(make_reader(f).iter_messages(log_time_order=True)):
            data = CompressedVideo.FromString(m.data).data
            nals = data.split(b"\0\0\1")[1:]
            if any(nal and nal[0] & 0x1F == 5 for nal in nals):
                out.append(i)
    return out


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(path, n, seeks, rng):
    """(open s, [seek s], CPU s per seek, [frames targeted])."""
    t0 = time.perf_counter()
    src = handoff.open(str(path))
    opened = time.perf_counter() - t0
    assert len(src) == n, len(src)
    src.seek(0)
    src.read()  # the first read's one-off costs (buffers) out of the figures
    times, cpu, ks = [], 0.0, []
    for _ in range(seeks):
        k = rng.randrange(n)
        src.seek(n - 1)
        src.read()  # leaves the decoder past every target: the timed seek restarts at a keyframe
        c0 = cpu_s()
        t = time.perf_counter()
        src.seek(k)
        src.read()
        times.append(time.perf_counter() - t)
        cpu += cpu_s() - c0
        ks.append(k)
    src.close()
    return opened, times, cpu / seeks, ks


def p99(xs):
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeks", type=int, default=400)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    ap.add_argument("--seed", type=int, default=24)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="handoff-seek-bench-") as d:
        for kind in ("recorder", "keyint 60"):
            for n in (100, 10_000):
                path = Path(d) / f"{kind.replace(' ', '')}_{n}.mcap"
                t = time.perf_counter()
                (write_recorder if kind == "recorder" else write_keyint60)(path, n, a.width, a.height)
                written = time.perf_counter() - t
                keys = keyframes(path)
                assert keys and keys[0] == 0, keys[:3]
                gaps = sorted({b - a for a, b in zip(keys, keys[1:])}) or [n]
                opened, times, cpu, ks = measure(path, n, a.seeks, rng)
                per_seek = [k - max(x for x in keys if x <= k) + 1 for k in ks]
                per_frame = statistics.median(t / d for t, d in zip(times, per_seek))
                rows.append((kind, n, "/".join(map(str, gaps)), os.path.getsize(path), written, opened, times, cpu,
                             statistics.mean(per_seek), per_frame))
    print(f"### Seek in an H.264 recording: 10,000 frames vs 100 ({a.width}x{a.height}, {a.seeks} seeks each)\n")
    print("| recording | frames | keyframe every | file | open (ms) | seek + read median (ms) | p99 (ms) "
          "| CPU / seek (ms) | frames decoded / seek (mean) | ms / decoded frame (median) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind, n, gaps, size, written, opened, times, cpu, decoded, per_frame in rows:
        print(f"| {kind} | {n:,} | {gaps} frames | {size / 2**20:.2f} MiB | {1e3 * opened:.1f} | "
              f"{1e3 * statistics.median(times):.2f} | {1e3 * p99(times):.2f} | {1e3 * cpu:.2f} | {decoded:.1f} | "
              f"{1e3 * per_frame:.3f} |")
    print()
    for kind in ("recorder", "keyint 60"):
        small, big = [r for r in rows if r[0] == kind]
        ratio = statistics.median(big[6]) / statistics.median(small[6])
        print(f"- {kind}: 10,000 / 100 frames: median seek x{ratio:.2f}, p99 x{p99(big[6]) / p99(small[6]):.2f}, "
              f"CPU per seek x{big[7] / small[7]:.2f}, per decoded frame x{big[9] / small[9]:.2f}")


if __name__ == "__main__":
    main()
