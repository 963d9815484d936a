"""Writes the seed corpus of fuzz_video (tests/fuzz/corpus/video), run by hand:
    .venv/bin/python tests/fuzz/make_video_seeds.py
Streams are encoded by PyAV (libx264 / libx265, Annex B, no B-frames, a keyframe every 4
frames); a seed is a codec byte (0 h264, 1 h265) and access units, each a little-endian
u16 length and its bytes (fuzz_video.cpp). Damaged variants too: a unit cut in half, a
flipped forbidden_zero_bit, a length-prefixed (AVCC) unit.
Also fuzz_mcap seeds (tests/fuzz/corpus/mcap) for the ROS 2 video path (CDR messages through
the same keyframe index): rosbags MCAP bags of sensor_msgs/msg/CompressedImage carrying h264
(one access unit flipped) and foxglove_msgs/msg/CompressedVideo carrying h265.
"""
from fractions import Fraction
from pathlib import Path
import shutil
import struct
import tempfile

import av
import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

OUT = Path(__file__).parent / "corpus" / "video"
MCAP_OUT = Path(__file__).parent / "corpus" / "mcap"
VIDEO_MSG = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n"
W, H, N = 32, 32, 8


def encode(codec):
    name, params = {"h264": ("libx264", "x264-params"), "h265": ("libx265", "x265-params")}[codec]
    ctx = av.CodecContext.create(name, "w")
    ctx.width, ctx.height, ctx.pix_fmt, ctx.time_base = W, H, "yuv420p", Fraction(1, 30)
    ctx.options = {params: "keyint=4:min-keyint=4:scenecut=0:bframes=0"
                   + (":open-gop=0:log-level=none" if codec == "h265" else "")}
    packets = []
    for i in range(N):
        y, x = np.mgrid[0 : H * 3 // 2, 0:W]
        frame = av.VideoFrame.from_ndarray(((x * 4 + y + i * 9) % 256).astype(np.uint8), format="yuv420p")
        frame.pts = i
        packets += ctx.encode(frame)
    packets += ctx.encode(None)
    return [bytes(p) for p in packets]


def seed(codec, units):
    return bytes([0 if codec == "h264" else 1]) + b"".join(struct.pack("<H", len(u)) + u for u in units)


def ros_bag(path, type_name, fmt, units):
    """An MCAP rosbag2 bag (rosbags) with one message per access unit on /cam/video, copied to `path`."""
    ts = get_typestore(Stores.ROS2_HUMBLE)
    ts.register(get_types_from_msg(VIDEO_MSG, "foxglove_msgs/msg/CompressedVideo"))
    t = ts.types
    with tempfile.TemporaryDirectory() as tmp:
        with Writer(Path(tmp) / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            conn = writer.add_connection("/cam/video", type_name, typestore=ts)
            for k, unit in enumerate(units):
                stamp = t["builtin_interfaces/msg/Time"](sec=1, nanosec=k * 33_333_333)
                data = np.frombuffer(unit, dtype=np.uint8)
                if type_name == "sensor_msgs/msg/CompressedImage":
                    m = t[type_name](header=t["std_msgs/msg/Header"](stamp=stamp, frame_id="cam"), format=fmt, data=data)
                else:
                    m = t[type_name](timestamp=stamp, frame_id="cam", data=data, format=fmt)
                writer.write(conn, 1_000_000_000 + k * 33_333_333, bytes(ts.serialize_cdr(m, type_name)))
        (bag,) = (Path(tmp) / "bag").glob("*.mcap")
        shutil.copyfile(bag, path)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    h264, h265 = encode("h264"), encode("h265")
    flipped = bytearray(h264[5])
    flipped[4] |= 0x80
    ros_bag(MCAP_OUT / "ros2_compressed_image_h264.mcap", "sensor_msgs/msg/CompressedImage", "h264",
            h264[:5] + [bytes(flipped)] + h264[6:])
    ros_bag(MCAP_OUT / "ros2_compressed_video_h265.mcap", "foxglove_msgs/msg/CompressedVideo", "h265", h265)
    for codec in ("h264", "h265"):
        units = encode(codec)
        (OUT / f"{codec}.bin").write_bytes(seed(codec, units))
        cut = units[:2] + [units[2][: len(units[2]) // 2]] + units[3:]
        (OUT / f"{codec}_cut.bin").write_bytes(seed(codec, cut))
        flipped = bytearray(units[1])
        flipped[4] |= 0x80
        (OUT / f"{codec}_forbidden_bit.bin").write_bytes(seed(codec, [units[0], bytes(flipped)] + units[2:]))
        avcc = struct.pack(">I", len(units[0]) - 4) + units[0][4:]
        (OUT / f"{codec}_avcc.bin").write_bytes(seed(codec, [avcc] + units[1:]))
        (OUT / f"{codec}_mid_group.bin").write_bytes(seed(codec, units[1:]))


if __name__ == "__main__":
    main()
