"""Writes the seed corpus of fuzz_image (tests/fuzz/corpus/image), run by hand:
    .venv/bin/python tests/fuzz/make_image_seeds.py
Pillow encodes small JPEGs (colour, gray, progressive, 4:2:0) and PNGs (RGB,
RGBA, gray 8 / 16-bit, palette, optimized); rosbags wraps some of them in
sensor_msgs/msg/CompressedImage CDR messages, foxglove_schemas_protobuf in
foxglove.CompressedImage messages (fuzz_image.cpp reads the input every way).
"""

import io
from pathlib import Path

import numpy as np
from PIL import Image
from rosbags.typesys import Stores, get_typestore

OUT = Path(__file__).parent / "corpus" / "image"


def picture(w, h, channels):
    y, x = np.mgrid[0:h, 0:w]
    planes = [x * 255 // (w - 1), y * 255 // (h - 1), (x + y) * 255 // (w + h - 2)][:channels]
    return np.stack(planes, axis=-1).astype(np.uint8).squeeze()


def encode(image, **kw):
    out = io.BytesIO()
    image.save(out, **kw)
    return out.getvalue()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rgb = Image.fromarray(picture(16, 8, 3))
    gray = Image.fromarray(picture(16, 8, 1))
    seeds = {
        "rgb444.jpg": encode(rgb, format="JPEG", quality=90, subsampling=0),
        "rgb420.jpg": encode(rgb, format="JPEG", quality=50, subsampling=2),
        "progressive.jpg": encode(rgb, format="JPEG", progressive=True),
        "gray.jpg": encode(gray, format="JPEG"),
        "rgb.png": encode(rgb, format="PNG"),
        "rgba.png": encode(rgb.convert("RGBA"), format="PNG"),
        "gray.png": encode(gray, format="PNG"),
        "gray16.png": encode(Image.fromarray((picture(16, 8, 1).astype(np.uint16) * 257)), format="PNG"),
        "palette.png": encode(rgb.convert("P"), format="PNG"),
        "optimized.png": encode(rgb, format="PNG", optimize=True),
    }
    ts = get_typestore(Stores.ROS2_HUMBLE)
    t = ts.types
    header = t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=5, nanosec=6), frame_id="cam")
    for name, fmt in [("gray.jpg", "mono8; jpeg compressed mono8"), ("rgb444.jpg", "rgb8; jpeg compressed bgr8"),
                      ("gray16.png", "mono16; png compressed mono16"), ("rgb.png", "png")]:
        msg = t["sensor_msgs/msg/CompressedImage"](header=header, format=fmt,
                                                   data=np.frombuffer(seeds[name], dtype=np.uint8))
        for le in (True, False):
            cdr = bytes(ts.serialize_cdr(msg, "sensor_msgs/msg/CompressedImage", little_endian=le))
            seeds[f"cdr_{name.replace('.', '_')}_{'le' if le else 'be'}.bin"] = cdr
    from foxglove_schemas_protobuf.CompressedImage_pb2 import CompressedImage

    for name, fmt in [("rgb420.jpg", "jpeg"), ("gray16.png", "png")]:
        msg = CompressedImage(frame_id="cam", data=seeds[name], format=fmt)
        msg.timestamp.FromNanoseconds(5_000_000_006)
        seeds[f"foxglove_{name.replace('.', '_')}.bin"] = msg.SerializeToString()
    for name, data in seeds.items():
        (OUT / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
