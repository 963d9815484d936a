"""Show frames with a depth map drawn over them through a colormap
(handoff.ScalarMap): float32 metres, holes (NaN) where the sensor saw nothing,
the range chosen automatically (1st..99th percentile, steady from frame to
frame) or fixed with --range.

    python examples/python/depth_layer.py                    # a window (headless where no display)
    python examples/python/depth_layer.py --headless --frames 10 --range 0 10 --snapshot last.npy
"""
import argparse

import numpy as np

import handoff


def depth(n, w, h):
    """A ramp from 1 m (bottom) to 9 m (top), a ball 2 m away moving across, a hole in a corner."""
    d = np.repeat(np.linspace(9.0, 1.0, h, dtype=np.float32)[:, None], w, axis=1)
    yy, xx = np.mgrid[0:h, 0:w]
    cx = (10 + 3 * n) % w
    d[(xx - cx) ** 2 + (yy - h // 2) ** 2 < (h // 8) ** 2] = 2.0
    d[: h // 8, : w // 8] = np.nan  # no return
    return d


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--headless", action="store_true", help="no window (EGL)")
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--range", type=float, nargs=2, metavar=("NEAR", "FAR"), help="fixed range in metres")
    p.add_argument("--colormap", default="turbo")
    p.add_argument("--snapshot", help="write the last displayed frame (with its layer) here as .npy")
    args = p.parse_args(argv)
    w, h = 320, 240
    frame = (np.full((h, w), 110, np.uint8), np.full((h // 2, w // 2, 2), 128, np.uint8))
    with handoff.Viewer(title="depth", headless=args.headless) as v:
        for n in range(args.frames):
            layer = handoff.ScalarMap(depth(n, w, h), colormap=args.colormap,
                                      range=tuple(args.range) if args.range else None, opacity=0.8)
            v.show(frame, layers=[layer])
            if not v.is_open():
                break
        if args.snapshot:
            np.save(args.snapshot, np.from_dlpack(v.snapshot()))
        print(f"{n + 1} frames shown")
        if v.windowed:  # a window stays until the user closes it
            v.wait_closed()


if __name__ == "__main__":
    main()
