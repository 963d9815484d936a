#!/usr/bin/env python3
"""Regenerates the tiny sample files in tests/data (committed; run by hand).

sample.y4m: 8x6, C420mpeg2, XCOLORRANGE=FULL, XCOLORMATRIX=BT709, 25 fps, 3 frames,
planar 8-bit samples for frame f at (x, y):
  Y = (16 + 10f + 3x + 7y) % 256, U = (100 + 5f + 11x + 2y) % 256, V = (200 + 9f + x + 13y) % 256
(the same formulas as tests/viewer/y4m_test.cpp).
"""
import pathlib

here = pathlib.Path(__file__).resolve().parent


def planar(f, w, h):
    cw, ch = (w + 1) // 2, (h + 1) // 2
    out = bytearray()
    out += bytes((16 + 10 * f + 3 * x + 7 * y) % 256 for y in range(h) for x in range(w))
    out += bytes((100 + 5 * f + 11 * x + 2 * y) % 256 for y in range(ch) for x in range(cw))
    out += bytes((200 + 9 * f + x + 13 * y) % 256 for y in range(ch) for x in range(cw))
    return bytes(out)


def main():
    w, h = 8, 6
    data = bytearray(b"YUV4MPEG2 W8 H6 F25:1 Ip A1:1 C420mpeg2 XCOLORRANGE=FULL XCOLORMATRIX=BT709\n")
    for f in range(3):
        data += b"FRAME\n" + planar(f, w, h)
    (here / "sample.y4m").write_bytes(bytes(data))


if __name__ == "__main__":
    main()
