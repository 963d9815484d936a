"""Show frames with a segmentation model's output drawn over them: a class id per
pixel (handoff.ClassMap), at a quarter of the frame's size, named, with the
background transparent.

    python examples/python/segmentation_layer.py              # a window (headless where no display)
    python examples/python/segmentation_layer.py --headless --frames 10 --snapshot last.npy

The "model" labels a synthetic scene: sky (1) above the horizon, road (2)
below it, and a car (3) moving along the road; 0 (nothing) is left
transparent. A real model's (H/4, W/4) int64 argmax goes in the same way:
NumPy, PyTorch or anything with __dlpack__.
"""
import argparse

import numpy as np

import handoff

NAMES = ["nothing", "sky", "road", "car"]
COLORS = {1: (70, 130, 180), 2: (128, 64, 128), 3: (0, 0, 142)}  # Cityscapes-like colours


def scene(n, w, h):
    """An NV12 frame (luma, chroma) and its class ids at a quarter of its size."""
    luma = np.full((h, w), 60, np.uint8)
    luma[: h // 2] = 180  # bright sky, dark road
    chroma = np.full((h // 2, w // 2, 2), 128, np.uint8)
    ids = np.zeros((h // 4, w // 4), np.int64)
    ids[: h // 8 - 2] = 1
    ids[h // 8 + 2:] = 2
    x = (4 * n) % (w // 4 - 12)
    ids[h // 8 + 4: h // 8 + 10, x: x + 12] = 3
    return (luma, chroma), ids


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--headless", action="store_true", help="no window (EGL)")
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--snapshot", help="write the last displayed frame (with its layer) here as .npy")
    args = p.parse_args(argv)
    w, h = 320, 240
    with handoff.Viewer(title="segmentation", headless=args.headless) as v:
        for n in range(args.frames):
            frame, ids = scene(n, w, h)
            v.show(frame, layers=[handoff.ClassMap(ids, names=NAMES, colors=COLORS, transparent=[0], opacity=0.5)])
            if not v.is_open():
                break
        if args.snapshot:
            np.save(args.snapshot, np.from_dlpack(v.snapshot()))
        print(f"{n + 1} frames shown")
        if v.windowed:  # a window stays until the user closes it
            v.wait_closed()


if __name__ == "__main__":
    main()
