"""handoff.Viewer.show against what Python users write today to look at an NV12
frame: cv2.cvtColor(COLOR_YUV2BGR_NV12) + cv2.imshow + cv2.waitKey(1).

Same 1080p NV12 frames (a stacked (1620, 1920) uint8 NumPy array, as a decoder
hands them out), same 1280x720 window, same run, one after the other:
  - producer: time per frame spent on the producer's thread (OpenCV: convert +
    imshow + waitKey; handoff: inside show(), a host frame copied once);
  - drawn/s: frames actually drawn per second (OpenCV: every imshow + waitKey
    draws; handoff: the viewer's own count, ViewerStats.shown, over the run).

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python bench/opencv_compare.py --seconds 5

Needs a display (Xvfb) and opencv-python (python/requirements-bench.txt).
Prints a Markdown table for BENCHMARKS.md; --json writes the figures.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import handoff

try:
    import cv2
except ImportError:
    cv2 = None

W, H = 1920, 1080


def make_frames(n):
    """n distinct stacked NV12 frames: a moving gradient with a moving block, grey-ish chroma."""
    frames = []
    ys, xs = np.mgrid[0:H, 0:W]
    for i in range(n):
        y = ((xs + ys + 37 * i) % 200 + 20).astype(np.uint8)
        y[200 + 20 * i:500 + 20 * i, 300 + 40 * i:700 + 40 * i] = 235
        uv = np.empty((H // 2, W), np.uint8)
        uv[:, 0::2] = 128 + (i * 7) % 40
        uv[:, 1::2] = 140 - (i * 5) % 30
        frames.append(np.ascontiguousarray(np.concatenate([y, uv])))
    return frames


def summary(times):
    ms = sorted(t * 1e3 for t in times)
    return {"mean_ms": statistics.fmean(ms), "p50_ms": ms[len(ms) // 2], "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
            "frames": len(ms)}


def run_opencv(frames, seconds):
    name = "opencv"
    cv2.namedWindow(name, cv2.WINDOW_NORMAL)
    cv2.resizeWindow(name, 1280, 720)
    for f in frames[:3]:  # warm-up: the window maps, buffers reach their size
        cv2.imshow(name, cv2.cvtColor(f, cv2.COLOR_YUV2BGR_NV12))
        cv2.waitKey(1)
    times = []
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        bgr = cv2.cvtColor(frames[n % len(frames)], cv2.COLOR_YUV2BGR_NV12)
        cv2.imshow(name, bgr)
        cv2.waitKey(1)
        times.append(time.perf_counter() - t0)
        n += 1
    elapsed = time.perf_counter() - start
    cv2.destroyAllWindows()
    cv2.waitKey(1)
    r = summary(times)
    r["drawn_per_s"] = n / elapsed
    return r


def run_handoff(frames, seconds, display, rate=None, convert="auto"):
    """Unpaced (rate None): the producer calls show() back to back. Paced: it offers
    `rate` frames per second (OpenCV's measured rate), sleeping between calls."""
    with handoff.Viewer(title="handoff", width=1280, height=720, vsync=False, show_ui=False, display=display,
                        convert=convert) as v:
        for f in frames[:3]:
            v.show(f, format="nv12")
        v.snapshot()  # warm-up drawn
        base = v.stats
        times = []
        start = time.perf_counter()
        n = 0
        while time.perf_counter() - start < seconds:
            f = frames[n % len(frames)]
            t0 = time.perf_counter()
            v.show(f, format="nv12")
            times.append(time.perf_counter() - t0)
            n += 1
            if rate:
                time.sleep(max(0.0, start + n / rate - time.perf_counter()))
        elapsed = time.perf_counter() - start
        s = v.stats
        r = summary(times)
        r["drawn_per_s"] = (s.shown - base.shown) / elapsed
        r["submitted"] = s.submitted - base.submitted
        r["dropped"] = s.dropped - base.dropped
        r["latency_p50_ms"], r["latency_p99_ms"] = s.latency_p50_ms, s.latency_p99_ms
        r["copy_ms"] = s.copy_ms
        r["upload_ms"], r["draw_ms"], r["frame_p50_ms"] = s.upload_ms, s.draw_ms, s.frame_p50_ms
        r["memory"] = v.stream["memory"]
        r["convert"] = v.stream["convert"]
        return r


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0, help="each side runs this long")
    p.add_argument("--frames", type=int, default=8, help="distinct frames cycled through")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--display", default="window", choices=["window", "auto", "headless"],
                   help="handoff's display (window: the comparison; headless: no X server needed)")
    p.add_argument("--convert", default="auto", choices=["auto", "gpu", "cpu"],
                   help="handoff's colour path (auto: cpu on a software rasteriser such as llvmpipe)")
    args = p.parse_args(argv)
    if cv2 is None:
        print("opencv_compare: needs opencv-python (pip install -r python/requirements-bench.txt)", file=sys.stderr)
        return 2
    if args.display == "window" and not os.environ.get("DISPLAY"):
        print("opencv_compare: no DISPLAY; run under xvfb-run (see the docstring)", file=sys.stderr)
        return 2
    frames = make_frames(args.frames)
    cv = run_opencv(frames, args.seconds)
    ho = run_handoff(frames, args.seconds, args.display, convert=args.convert)
    paced = run_handoff(frames, args.seconds, args.display, rate=cv["drawn_per_s"], convert=args.convert)
    ratio = ho["mean_ms"] / cv["mean_ms"]
    print("| | producer time per 1080p NV12 frame (mean / p50 / p99) | frames offered per second "
          "| frames drawn per second | dropped |")
    print("|---|---|---|---|---|")
    print(f"| OpenCV cvtColor + imshow + waitKey(1) | {cv['mean_ms']:.2f} / {cv['p50_ms']:.2f} / {cv['p99_ms']:.2f} ms "
          f"| {cv['drawn_per_s']:.1f} | {cv['drawn_per_s']:.1f} | 0 |")
    for label, r in [("handoff.Viewer.show, back to back", ho), ("handoff.Viewer.show, paced at OpenCV's rate", paced)]:
        print(f"| {label} | {r['mean_ms']:.3f} / {r['p50_ms']:.3f} / {r['p99_ms']:.3f} ms "
              f"| {r['frames'] / args.seconds:.1f} | {r['drawn_per_s']:.1f} | {r['dropped']} |")
    print(f"\nproducer time ratio handoff / OpenCV: {ratio:.3f} (goal <= 0.1); drawn/s ratio: back to back "
          f"{ho['drawn_per_s'] / cv['drawn_per_s']:.2f}, paced {paced['drawn_per_s'] / cv['drawn_per_s']:.2f} "
          f"(goal >= 1)")
    for label, r in [("back to back", ho), ("paced", paced)]:
        print(f"handoff {label}: show-to-displayed latency p50 {r['latency_p50_ms']:.1f} ms / "
              f"p99 {r['latency_p99_ms']:.1f} ms, copy {r['copy_ms']:.2f} ms; display thread: upload "
              f"{r['upload_ms']:.2f} ms, draw (its CPU time, conversion included) {r['draw_ms']:.2f} ms, between displayed frames p50 "
              f"{r['frame_p50_ms']:.1f} ms")
    print(f"handoff memory: {ho['memory']}")
    print(f"handoff colour: {ho['convert']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"opencv": cv, "handoff": ho, "handoff_paced": paced, "producer_ratio": ratio}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
