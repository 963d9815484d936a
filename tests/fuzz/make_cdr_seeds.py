"""Writes the seed corpus of fuzz_cdr (tests/fuzz/corpus/cdr), run by hand:
    .venv/bin/python tests/fuzz/make_cdr_seeds.py
Messages are serialized by rosbags (both byte orders). A seed is
"pkg/Type\\n<definition>" NUL <CDR bytes> (fuzz_cdr.cpp), or CDR bytes alone.
"""

import sys
from pathlib import Path

import numpy as np
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "ros"))
from ros_msgs import FOXGLOVE_MSGS, VISION_MSGS  # noqa: E402  (the definitions the python tier registers)

OUT = Path(__file__).parent / "corpus" / "cdr"
CUSTOM = "pkg/msg/Mixed"
CUSTOM_TEXT = (
    "uint8 a\nfloat64 b\nstring<=8 s\nint16[3] fixed\nfloat32[<=4] bounded\nstring[] names\nPart[] parts\n"
    "bool flag\nuint8 RED=1\n"
)
PART_TEXT = "int64 x\nchar c\n"
# An H.264 access unit's NAL unit headers (SPS, PPS, IDR slice) with a byte or two of payload each.
ACCESS_UNIT = bytes([0, 0, 0, 1, 0x67, 0x42, 0, 0, 0, 1, 0x68, 0xCE, 0, 0, 1, 0x65, 0x88, 0x84])


def detections(t, stamp):
    pose = t["geometry_msgs/msg/PoseWithCovariance"](
        pose=t["geometry_msgs/msg/Pose"](position=t["geometry_msgs/msg/Point"](x=0.0, y=0.0, z=0.0),
                                         orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0)),
        covariance=np.zeros(36))
    hyp = t["vision_msgs/msg/ObjectHypothesisWithPose"](
        hypothesis=t["vision_msgs/msg/ObjectHypothesis"](class_id="3", score=0.75), pose=pose)
    box = t["vision_msgs/msg/BoundingBox2D"](
        center=t["vision_msgs/msg/Pose2D"](position=t["vision_msgs/msg/Point2D"](x=40.0, y=30.0), theta=0.0),
        size_x=20.0, size_y=10.0)
    det = t["vision_msgs/msg/Detection2D"](header=stamp, results=[hyp, hyp], bbox=box, id="12")
    return t["vision_msgs/msg/Detection2DArray"](header=stamp, detections=[det, det])


def main():
    ts = get_typestore(Stores.ROS2_HUMBLE)
    types = get_types_from_msg(CUSTOM_TEXT, CUSTOM)
    types.update(get_types_from_msg(PART_TEXT, "pkg/msg/Part"))
    for name, text in VISION_MSGS.items():
        types.update(get_types_from_msg(text, name))
    types.update(get_types_from_msg(FOXGLOVE_MSGS["foxglove_msgs/msg/CompressedVideo"], "foxglove_msgs/msg/CompressedVideo"))
    ts.register(types)
    t = ts.types
    stamp = t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=5, nanosec=6), frame_id="cam")
    image = t["sensor_msgs/msg/Image"](header=stamp, height=2, width=3, encoding="rgb8", is_bigendian=0, step=10,
                                        data=np.arange(20, dtype=np.uint8))
    compressed = t["sensor_msgs/msg/CompressedImage"](header=stamp, format="jpeg", data=np.arange(8, dtype=np.uint8))
    unit = np.frombuffer(ACCESS_UNIT, dtype=np.uint8)
    compressed_h264 = t["sensor_msgs/msg/CompressedImage"](header=stamp, format="h264", data=unit)
    video = t["foxglove_msgs/msg/CompressedVideo"](timestamp=stamp.stamp, frame_id="cam", data=unit, format="h264")
    Part = t["pkg/msg/Part"]
    mixed = t[CUSTOM](a=1, b=2.5, s="abc", fixed=np.array([1, -2, 3], dtype=np.int16),
                      bounded=np.array([0.5, 1.5], dtype=np.float32), names=["x", ""],
                      parts=[Part(x=-1, c=65), Part(x=2, c=66)], flag=True)
    OUT.mkdir(parents=True, exist_ok=True)
    for little in (True, False):
        order = "le" if little else "be"
        for name, msg, typename in (("image", image, "sensor_msgs/msg/Image"),
                                    ("compressed", compressed, "sensor_msgs/msg/CompressedImage"),
                                    ("compressed_h264", compressed_h264, "sensor_msgs/msg/CompressedImage"),
                                    ("video", video, "foxglove_msgs/msg/CompressedVideo"),
                                    ("mixed", mixed, CUSTOM),
                                    ("detections", detections(t, stamp), "vision_msgs/msg/Detection2DArray")):
            raw = bytes(ts.serialize_cdr(msg, typename, little_endian=little))
            definition = ts.generate_msgdef(typename, ros_version=2)[0]
            (OUT / f"{name}_{order}.bin").write_bytes(f"{typename}\n{definition}".encode() + b"\0" + raw)
        raw = bytes(ts.serialize_cdr(image, "sensor_msgs/msg/Image", little_endian=little))
        (OUT / f"image_bare_{order}.bin").write_bytes(raw)
        raw = bytes(ts.serialize_cdr(detections(t, stamp), "vision_msgs/msg/Detection2DArray", little_endian=little))
        (OUT / f"detections_bare_{order}.bin").write_bytes(raw)  # decoded by the built-in definitions


if __name__ == "__main__":
    main()
