"""Show frames with an instance segmentation model's output: a box, a class and
a mask per detection (handoff.InstanceMasks: N masks for the N boxes of the
same show() call), each mask in its detection's colour, outlined.

    python examples/python/instance_masks.py                 # a window (headless where no display)
    python examples/python/instance_masks.py --headless --frames 10 --snapshot last.npy

The "model" finds two discs in a synthetic scene; its masks are float
probabilities at the frame's size, cut at --threshold.
"""
import argparse

import numpy as np

import handoff


def detect(n, w, h):
    """Boxes (xyxy), class ids and (N, H, W) float masks of two discs."""
    yy, xx = np.mgrid[0:h, 0:w]
    centres = [((40 + 2 * n) % w, h // 3), (w - 60, 2 * h // 3)]
    r = h // 6
    boxes, masks = [], []
    for cx, cy in centres:
        dist = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
        masks.append(np.clip(1.5 - dist / r, 0.0, 1.0).astype(np.float32))  # 1 inside, fading at the edge
        boxes.append([cx - r, cy - r, cx + r, cy + r])
    return np.array(boxes, np.float32), np.array([1, 2], np.int32), np.stack(masks)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--headless", action="store_true", help="no window (EGL)")
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--snapshot", help="write the last displayed frame (with its masks) here as .npy")
    args = p.parse_args(argv)
    w, h = 320, 240
    frame = (np.full((h, w), 90, np.uint8), np.full((h // 2, w // 2, 2), 128, np.uint8))
    with handoff.Viewer(title="instance masks", headless=args.headless) as v:
        for n in range(args.frames):
            boxes, classes, masks = detect(n, w, h)
            v.show(frame, boxes=boxes, box_format="xyxy", class_ids=classes, labels=["ball", "disc"],
                   layers=[handoff.InstanceMasks(masks, threshold=args.threshold, opacity=0.5)])
            if not v.is_open():
                break
        if args.snapshot:
            np.save(args.snapshot, np.from_dlpack(v.snapshot()))
        print(f"{n + 1} frames shown")
        if v.windowed:  # a window stays until the user closes it
            v.wait_closed()


if __name__ == "__main__":
    main()
