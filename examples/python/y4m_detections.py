"""Read a Y4M clip, run a (toy) NumPy detector on each frame, show the frames
with the detections drawn by the viewer.

    python examples/python/y4m_detections.py clip.y4m            # a window (headless where no display)
    python examples/python/y4m_detections.py clip.y4m --headless --frames 30

The "detector" boxes the bright regions of the luma plane, one box per band of
rows that has pixels above a threshold: stand-in for a real model's output
(boxes, labels, scores, class ids as arrays).
"""
import argparse
import sys

import numpy as np

import handoff


def detect(luma, threshold):
    """Boxes (xyxy), scores and class ids of bright regions, per 4 horizontal bands."""
    y = np.from_dlpack(luma)  # a read-only view of the frame's plane: no copy
    y = y.astype(np.float32) / (64.0 if y.dtype == np.uint16 else 1.0)  # P010: 10-bit codes in the top bits
    bright = y > threshold
    boxes, scores = [], []
    h = y.shape[0]
    for band in range(4):
        rows = slice(band * h // 4, (band + 1) * h // 4)
        ys, xs = np.nonzero(bright[rows])
        if xs.size == 0:
            continue
        boxes.append([xs.min(), ys.min() + rows.start, xs.max() + 1, ys.max() + 1 + rows.start])
        scores.append(float(bright[rows].mean()))
    boxes = np.array(boxes, np.float32).reshape(-1, 4)
    return boxes, np.array(scores, np.float32), np.zeros(len(boxes), np.int32)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("clip", help="a .y4m file")
    p.add_argument("--headless", action="store_true", help="no window (EGL)")
    p.add_argument("--frames", type=int, default=0, help="stop after N frames (0: the whole clip)")
    p.add_argument("--threshold", type=float, default=160, help="luma code counted as bright (8-bit scale)")
    p.add_argument("--snapshot", help="write the last displayed frame (with its boxes) here as .npy")
    args = p.parse_args(argv)

    with handoff.open(args.clip) as clip, handoff.Viewer(title="y4m detections", headless=args.headless) as v:
        shown = 0
        for frame, _ in clip:
            boxes, scores, classes = detect(frame.luma, args.threshold)
            v.show(frame, boxes=boxes, box_format="xyxy", labels=["bright"] * len(boxes), scores=scores,
                   class_ids=classes)
            shown += 1
            if not v.is_open() or shown == args.frames:
                break
        last = v.snapshot()  # once the newest frame handed in is displayed, so the counts below are final
        if args.snapshot:
            np.save(args.snapshot, np.from_dlpack(last))
        s = v.stats
        print(f"{shown} frames shown from {args.clip}: {s.shown} displayed, {s.dropped} dropped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
