"""Headless: show frames with their overlays and write what the viewer draws as
PNG files (the frame with its overlays, at its own size), e.g. thumbnails or
test images, on a machine without a display.

    python examples/python/snapshot_writer.py out/           # the built-in scene, 5 frames
    python examples/python/snapshot_writer.py out/ --clip clip.y4m --every 10

PNG writing uses only the standard library (zlib): no imaging package needed.
"""
import argparse
import pathlib
import struct
import sys
import zlib

import numpy as np

import handoff


def write_png(path, rgba):
    """An 8-bit RGBA PNG of a (height, width, 4) uint8 array."""
    h, w, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))  # filter 0 per row

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b"")
    pathlib.Path(path).write_bytes(png)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", help="folder for the PNG files (created)")
    p.add_argument("--clip", help="a .y4m file (default: the built-in scene)")
    p.add_argument("--frames", type=int, default=5, help="snapshots to write")
    p.add_argument("--every", type=int, default=1, help="one snapshot every N frames")
    args = p.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    source = handoff.open(args.clip) if args.clip else handoff.open_scene(width=640, height=360)
    written = []
    with source, handoff.Viewer(title="snapshots", headless=True) as v:
        for frame, overlays in source:
            v.show(frame, overlays=overlays)
            if frame.index % args.every == 0:
                path = out / f"snapshot_{frame.index:06d}.png"
                write_png(path, np.from_dlpack(v.snapshot()))  # waits until this frame is drawn
                written.append(path)
                if len(written) == args.frames:
                    break
    print(f"wrote {len(written)} snapshots to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
