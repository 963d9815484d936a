"""handoff.Viewer.show against what Python users write today to look at a frame
with OpenCV, in three scenarios (--scenario):
  nv12    a 1080p NV12 frame: cv2.cvtColor(COLOR_YUV2BGR_NV12) + cv2.imshow +
          cv2.waitKey(1), against show(frame, format="nv12");
  bgr8    a 1080p BGR image (what OpenCV and most cameras hand out):
          cv2.imshow + cv2.waitKey(1), against show(image, format="bgr8");
  layers  the BGR image with a full-size class map (int32 ids) and a heatmap
          (float32 in 0..1) over it at opacity 0.5 each: OpenCV colours them
          (a palette lookup for the ids, cv2.applyColorMap(COLORMAP_TURBO) for the
          heatmap scaled to 8 bits) and blends them (cv2.addWeighted twice) before
          imshow + waitKey(1), against show(image, format="bgr8",
          layers=[ClassMap(ids), ScalarMap(heat, colormap="turbo", range=(0, 1))]).

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


def make_bgr(n):
    """n distinct 1080p BGR images: moving gradients with a moving block."""
    ys, xs = np.mgrid[0:H, 0:W]
    out = []
    for i in range(n):
        img = np.empty((H, W, 3), np.uint8)
        img[..., 0] = (xs + 13 * i) % 256
        img[..., 1] = (ys + 29 * i) % 256
        img[..., 2] = (xs + ys + 37 * i) % 256
        img[200 + 20 * i:500 + 20 * i, 300 + 40 * i:700 + 40 * i] = (30, 200, 240)
        out.append(img)
    return out


def make_layers(n):
    """n (class ids, heatmap) pairs, full size: 12 classes in moving bands, a moving Gaussian heat blob."""
    ys, xs = np.mgrid[0:H, 0:W]
    out = []
    for i in range(n):
        ids = (((xs // 160) + (ys // 120) + i) % 12).astype(np.int32)
        cx, cy = 400 + 90 * i, 300 + 40 * i
        heat = np.exp(-(((xs - cx) / 300.0) ** 2 + ((ys - cy) / 200.0) ** 2)).astype(np.float32)
        out.append((ids, heat))
    return out


# A palette for the OpenCV side (12 BGR colours, what a user would write).
PALETTE = np.array([[(37 * k) % 256, (91 * k + 60) % 256, (151 * k + 120) % 256] for k in range(256)], np.uint8)


def summary(times):
    ms = sorted(t * 1e3 for t in times)
    return {"mean_ms": statistics.fmean(ms), "p50_ms": ms[len(ms) // 2], "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
            "frames": len(ms)}


def opencv_image(scenario, frame, layers):
    """What the OpenCV user computes before imshow."""
    if scenario == "nv12":
        return cv2.cvtColor(frame, cv2.COLOR_YUV2BGR_NV12)
    if scenario == "bgr8":
        return frame
    ids, heat = layers
    seg = PALETTE[ids & 0xFF]
    hot = cv2.applyColorMap((heat * 255).astype(np.uint8), cv2.COLORMAP_TURBO)
    out = cv2.addWeighted(frame, 0.5, seg, 0.5, 0)
    return cv2.addWeighted(out, 0.5, hot, 0.5, 0)


def run_opencv(scenario, frames, layers, seconds):
    name = "opencv"
    cv2.namedWindow(name, cv2.WINDOW_NORMAL)
    cv2.resizeWindow(name, 1280, 720)
    for k in range(3):  # warm-up: the window maps, buffers reach their size
        cv2.imshow(name, opencv_image(scenario, frames[k], layers[k] if layers else None))
        cv2.waitKey(1)
    times = []
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        k = n % len(frames)
        bgr = opencv_image(scenario, frames[k], layers[k] if layers else None)
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


def handoff_show(v, scenario, frame, layers):
    if scenario == "nv12":
        v.show(frame, format="nv12")
    elif scenario == "bgr8":
        v.show(frame, format="bgr8")
    else:
        ids, heat = layers
        v.show(frame, format="bgr8", layers=[handoff.ClassMap(ids, opacity=0.5),
                                             handoff.ScalarMap(heat, colormap="turbo", range=(0.0, 1.0), opacity=0.5)])


def run_handoff(scenario, frames, layers, seconds, display, rate=None, convert="auto"):
    """Unpaced (rate None): the producer calls show() back to back. Paced: it offers
    `rate` frames per second (OpenCV's measured rate), sleeping between calls."""
    with handoff.Viewer(title="handoff", width=1280, height=720, vsync=False, show_ui=False, display=display,
                        convert=convert) as v:
        for k in range(3):
            handoff_show(v, scenario, frames[k], layers[k] if layers else None)
        v.snapshot()  # warm-up drawn
        base = v.stats
        times = []
        start = time.perf_counter()
        n = 0
        while time.perf_counter() - start < seconds:
            k = n % len(frames)
            t0 = time.perf_counter()
            handoff_show(v, scenario, frames[k], layers[k] if layers else None)
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
    p.add_argument("--scenario", default="nv12", choices=["nv12", "bgr8", "layers"],
                   help="what is shown (see the docstring)")
    p.add_argument("--convert", default="auto", choices=["auto", "gpu", "cpu"],
                   help="handoff's colour path (auto: cpu on a software rasteriser such as llvmpipe)")
    args = p.parse_args(argv)
    if cv2 is None:
        print("opencv_compare: needs opencv-python (pip install -r python/requirements-bench.txt)", file=sys.stderr)
        return 2
    if args.display == "window" and not os.environ.get("DISPLAY"):
        print("opencv_compare: no DISPLAY; run under xvfb-run (see the docstring)", file=sys.stderr)
        return 2
    frames = make_frames(args.frames) if args.scenario == "nv12" else make_bgr(args.frames)
    layers = make_layers(args.frames) if args.scenario == "layers" else None
    cv = run_opencv(args.scenario, frames, layers, args.seconds)
    ho = run_handoff(args.scenario, frames, layers, args.seconds, args.display, convert=args.convert)
    paced = run_handoff(args.scenario, frames, layers, args.seconds, args.display, rate=cv["drawn_per_s"],
                        convert=args.convert)
    ratio = ho["mean_ms"] / cv["mean_ms"]
    what = {"nv12": "1080p NV12 frame", "bgr8": "1080p BGR image", "layers": "1080p BGR image + class map + heatmap"}
    cv_label = {"nv12": "OpenCV cvtColor + imshow + waitKey(1)", "bgr8": "OpenCV imshow + waitKey(1)",
                "layers": "OpenCV palette + applyColorMap + 2 addWeighted + imshow + waitKey(1)"}
    print(f"| | producer time per {what[args.scenario]} (mean / p50 / p99) | frames offered per second "
          "| frames drawn per second | dropped |")
    print("|---|---|---|---|---|")
    print(f"| {cv_label[args.scenario]} | {cv['mean_ms']:.2f} / {cv['p50_ms']:.2f} / {cv['p99_ms']:.2f} ms "
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
