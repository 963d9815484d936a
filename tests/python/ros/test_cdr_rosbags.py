"""handoff's CDR decoder against rosbags (an independent ROS 2 implementation).

rosbags serializes sensor_msgs/Image, CompressedImage and
vision_msgs/Detection2DArray in both byte orders; handoff_cdr_tool decodes
each file by the definition text rosbags writes into bags (ros2msg) and by
handoff's built-in definitions, and the values must be those rosbags was
given. HANDOFF_CDR_TOOL names the tool (ctest sets it).
"""

import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

from ros_msgs import FOXGLOVE_MSGS, VISION_MSGS

TOOL = os.environ.get("HANDOFF_CDR_TOOL", "")
if not TOOL or not Path(TOOL).is_file():
    pytest.fail("HANDOFF_CDR_TOOL must name the built handoff_cdr_tool (ctest sets it)", pytrace=False)



@pytest.fixture(scope="module")
def store():
    ts = get_typestore(Stores.ROS2_HUMBLE)
    types = {}
    for name, text in VISION_MSGS.items():
        types.update(get_types_from_msg(text, name))
    ts.register(types)
    return ts


def decode(tmp_path, ts, typename, raw, paths, builtin):
    msg = tmp_path / "m.cdr"
    msg.write_bytes(bytes(raw))
    definition = "-"
    if not builtin:
        definition = tmp_path / "def.msg"
        definition.write_text(ts.generate_msgdef(typename, ros_version=2)[0])
    r = subprocess.run([TOOL, typename, str(definition), str(msg), *paths], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return dict(line.split("=", 1) for line in r.stdout.splitlines())


def header(ts, sec, nanosec, frame_id):
    Time = ts.types["builtin_interfaces/msg/Time"]
    return ts.types["std_msgs/msg/Header"](stamp=Time(sec=sec, nanosec=nanosec), frame_id=frame_id)


ORDERS = [pytest.param(True, id="little_endian"), pytest.param(False, id="big_endian")]
DEFS = [pytest.param(False, id="bag_definition"), pytest.param(True, id="builtin_definition")]


@pytest.mark.parametrize("little", ORDERS)
@pytest.mark.parametrize("builtin", DEFS)
def test_image(tmp_path, store, little, builtin):
    Image = store.types["sensor_msgs/msg/Image"]
    data = np.arange(3 * 10, dtype=np.uint8)  # 2 rows of 5 rgb8 pixels... padded to step 15
    msg = Image(header=header(store, -7, 999_999_999, "camera_optical"), height=2, width=5, encoding="rgb8",
                is_bigendian=0 if little else 1, step=15, data=data)
    raw = store.serialize_cdr(msg, "sensor_msgs/msg/Image", little_endian=little)
    got = decode(tmp_path, store, "sensor_msgs/msg/Image", raw,
                 ["header.stamp.sec", "header.stamp.nanosec", "header.frame_id", "height", "width", "encoding",
                  "is_bigendian", "step", "data"], builtin)
    assert got == {
        "header.stamp.sec": "-7", "header.stamp.nanosec": "999999999", "header.frame_id": "camera_optical",
        "height": "2", "width": "5", "encoding": "rgb8", "is_bigendian": str(msg.is_bigendian), "step": "15",
        "data": f"len:30 hex:{data.tobytes().hex()}",
    }


@pytest.mark.parametrize("little", ORDERS)
@pytest.mark.parametrize("builtin", DEFS)
def test_compressed_image(tmp_path, store, little, builtin):
    CompressedImage = store.types["sensor_msgs/msg/CompressedImage"]
    payload = np.frombuffer(b"\xff\xd8\xff\xe0 not really a jpeg \xff\xd9", dtype=np.uint8)
    msg = CompressedImage(header=header(store, 1_700_000_000, 5, ""), format="rgb8; jpeg compressed bgr8",
                          data=payload)
    raw = store.serialize_cdr(msg, "sensor_msgs/msg/CompressedImage", little_endian=little)
    got = decode(tmp_path, store, "sensor_msgs/msg/CompressedImage", raw,
                 ["header.stamp.sec", "header.stamp.nanosec", "header.frame_id", "format", "data"], builtin)
    assert got == {"header.stamp.sec": "1700000000", "header.stamp.nanosec": "5", "header.frame_id": "",
                   "format": "rgb8; jpeg compressed bgr8", "data": f"len:{len(payload)} hex:{payload.tobytes().hex()}"}


def detection(ts, k):
    t = ts.types
    hyp = t["vision_msgs/msg/ObjectHypothesisWithPose"](
        hypothesis=t["vision_msgs/msg/ObjectHypothesis"](class_id=f"class-{k}", score=0.125 * (k + 1)),
        pose=t["geometry_msgs/msg/PoseWithCovariance"](
            pose=t["geometry_msgs/msg/Pose"](position=t["geometry_msgs/msg/Point"](x=k, y=2.5, z=-1.0),
                                             orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0)),
            covariance=np.arange(36, dtype=np.float64) * (k + 1)))
    bbox = t["vision_msgs/msg/BoundingBox2D"](
        center=t["vision_msgs/msg/Pose2D"](position=t["vision_msgs/msg/Point2D"](x=100.5 + k, y=50.25), theta=0.1),
        size_x=20.0 + k, size_y=40.0)
    return t["vision_msgs/msg/Detection2D"](header=header(ts, 3, k, "cam"), results=[hyp] * (k + 1), bbox=bbox,
                                           id=f"track-{k}" if k else "")


@pytest.mark.parametrize("little", ORDERS)
@pytest.mark.parametrize("builtin", DEFS)
def test_detection2d_array(tmp_path, store, little, builtin):
    msg = store.types["vision_msgs/msg/Detection2DArray"](header=header(store, 3, 0, "cam"),
                                                         detections=[detection(store, k) for k in range(3)])
    raw = store.serialize_cdr(msg, "vision_msgs/msg/Detection2DArray", little_endian=little)
    paths = ["detections"]
    for k in range(3):
        d = f"detections[{k}]"
        paths += [f"{d}.header.stamp.nanosec", f"{d}.results", f"{d}.results[{k}].hypothesis.class_id",
                  f"{d}.results[0].hypothesis.score", f"{d}.results[0].pose.pose.position.x",
                  f"{d}.results[0].pose.covariance", f"{d}.bbox.center.position.x", f"{d}.bbox.center.theta",
                  f"{d}.bbox.size_x", f"{d}.bbox.size_y", f"{d}.id"]
    got = decode(tmp_path, store, "vision_msgs/msg/Detection2DArray", raw, paths, builtin)
    assert got["detections"] == "len:3"
    fmt = "<36d" if little else ">36d"
    for k in range(3):
        d = f"detections[{k}]"
        assert got[f"{d}.header.stamp.nanosec"] == str(k)
        assert got[f"{d}.results"] == f"len:{k + 1}"
        assert got[f"{d}.results[{k}].hypothesis.class_id"] == f"class-{k}"
        assert float(got[f"{d}.results[0].hypothesis.score"]) == 0.125 * (k + 1)
        assert float(got[f"{d}.results[0].pose.pose.position.x"]) == k
        cov = bytes.fromhex(got[f"{d}.results[0].pose.covariance"].split("hex:")[1])
        assert struct.unpack(fmt, cov) == tuple(float(c * (k + 1)) for c in range(36))
        assert float(got[f"{d}.bbox.center.position.x"]) == 100.5 + k
        assert float(got[f"{d}.bbox.center.theta"]) == 0.1
        assert float(got[f"{d}.bbox.size_x"]) == 20.0 + k
        assert float(got[f"{d}.bbox.size_y"]) == 40.0
        assert got[f"{d}.id"] == (f"track-{k}" if k else "")


@pytest.mark.parametrize("little", ORDERS)
def test_cut_short_is_an_error_naming_the_field(tmp_path, store, little):
    Image = store.types["sensor_msgs/msg/Image"]
    msg = Image(header=header(store, 1, 2, "c"), height=1, width=4, encoding="mono8", is_bigendian=0, step=4,
                data=np.arange(4, dtype=np.uint8))
    raw = bytes(store.serialize_cdr(msg, "sensor_msgs/msg/Image", little_endian=little))
    (tmp_path / "m.cdr").write_bytes(raw[:-2])
    r = subprocess.run([TOOL, "sensor_msgs/msg/Image", "-", str(tmp_path / "m.cdr"), "data"], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert "sensor_msgs/Image.data: array needs 4 bytes, 2 left in the message" in r.stderr



BUILTIN_TYPES = ["builtin_interfaces/msg/Time", "builtin_interfaces/msg/Duration", "std_msgs/msg/Header",
                 "sensor_msgs/msg/Image", "sensor_msgs/msg/CompressedImage", *VISION_MSGS,
                 "geometry_msgs/msg/PoseWithCovariance", "geometry_msgs/msg/Pose2D", *FOXGLOVE_MSGS]


@pytest.mark.parametrize("typename", BUILTIN_TYPES)
def test_type_hashes_of_the_built_in_definitions_are_rosbags(store, typename, tmp_path):
    """REP 2011's RIHS01 hash of each built-in definition, as rosbags computes it (rosbag2 stores it for a
    .db3 topic's type; handoff warns when a bag's differs from the built-in definition it decodes by)."""
    types = {}
    for name, text in FOXGLOVE_MSGS.items():
        types.update(get_types_from_msg(text, name))
    store.register(types)
    builtin = subprocess.run([TOOL, "--hash", typename, "-"], capture_output=True, text=True)
    assert builtin.returncode == 0, builtin.stderr
    assert builtin.stdout.strip() == store.hash_rihs01(typename)
    definition = tmp_path / "def.msg"  # the same from the text rosbags writes into bags
    definition.write_text(store.generate_msgdef(typename, ros_version=2)[0])
    from_text = subprocess.run([TOOL, "--hash", typename, str(definition)], capture_output=True, text=True)
    assert from_text.returncode == 0, from_text.stderr
    assert from_text.stdout.strip() == store.hash_rihs01(typename)
