"""sensor_msgs/msg/CompressedImage (JPEG, PNG) in ROS 2 bags plays with the right pixels; --list names every topic.

rosbags writes the bags (MCAP and SQLite3 storage plugins); Pillow encodes
the JPEG and PNG data. handoff_mcap_tool dump (the recording source
handoff-view plays) returns each frame's packed rows: within 12 codes of the
picture after JPEG, exact after PNG. A corrupt JPEG is named (topic, frame,
field) and the frames after it still play. HANDOFF_MCAP_TOOL and
HANDOFF_VIEW_EXE name the programs (ctest sets them).
"""

import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TOOL = os.environ.get("HANDOFF_MCAP_TOOL", "")
if not TOOL or not Path(TOOL).is_file():
    pytest.fail("HANDOFF_MCAP_TOOL must name the built handoff_mcap_tool (ctest sets it)", pytrace=False)

TOPIC = "/cam/image_raw/compressed"
START_NS, STEP_NS = 1_700_000_000_000_000_000, 50_000_000
TS = get_typestore(Stores.ROS2_HUMBLE)
STORAGES = [StoragePlugin.MCAP, StoragePlugin.SQLITE3]
STORAGE_IDS = ["mcap", "sqlite3"]


def picture(kind, k, w, h):
    """A smooth picture (JPEG keeps it within a few codes): (H, W, 3) uint8, (H, W) uint8 or uint16."""
    y, x = np.mgrid[0:h, 0:w]
    if kind == "rgb8":
        return np.stack([(x * 255 // (w - 1) + k * 10) % 256, y * 255 // (h - 1),
                         np.full_like(x, 40 + 30 * k)], axis=-1).astype(np.uint8)
    if kind == "mono8":
        return ((x + y) * 255 // (w + h - 2) // 1 + k).clip(0, 255).astype(np.uint8)
    return ((x * 977 + y * 3001 + k * 12345) % 65536).astype(np.uint16)  # mono16 (PNG only)


def encode(kind, codec, pixels):
    out = io.BytesIO()
    image = Image.fromarray(pixels)  # uint16 (H, W): mode I;16, saved as a 16-bit gray PNG
    if codec == "jpeg":
        image.save(out, format="JPEG", quality=95, subsampling=0)
    else:
        image.save(out, format="PNG")
    return out.getvalue()


def compressed(k, fmt, data):
    t = TS.types
    stamp_ns = START_NS + k * STEP_NS
    return t["sensor_msgs/msg/CompressedImage"](
        header=t["std_msgs/msg/Header"](
            stamp=t["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id="cam"),
        format=fmt, data=np.frombuffer(data, dtype=np.uint8))


def write_bag(folder, messages, storage, extra=()):
    """messages: (format, data) per frame on TOPIC; extra: (topic, type, [message]) more topics."""
    with Writer(folder, version=9, storage_plugin=storage) as writer:
        conn = writer.add_connection(TOPIC, "sensor_msgs/msg/CompressedImage", typestore=TS)
        for k, (fmt, data) in enumerate(messages):
            raw = TS.serialize_cdr(compressed(k, fmt, data), "sensor_msgs/msg/CompressedImage")
            writer.write(conn, START_NS + k * STEP_NS, bytes(raw))
        for topic, type_name, msgs in extra:
            c = writer.add_connection(topic, type_name, typestore=TS)
            for k, m in enumerate(msgs):
                writer.write(c, START_NS + k * STEP_NS, bytes(TS.serialize_cdr(m, type_name)))
    (bag_file,) = Path(folder).glob("*.mcap" if storage == StoragePlugin.MCAP else "*.db3")
    return bag_file


def dump(bag, out):
    r = subprocess.run([TOOL, "dump", str(bag), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    info = json.loads((out / "recording.json").read_text())
    frames = [(out / f"frame_{i:06d}.yuv").read_bytes() for i in range(info["frame_count"])]
    return info, frames, r.stderr


CASES = [  # (picture kind, codec, format string, handoff format)
    ("rgb8", "jpeg", "rgb8; jpeg compressed bgr8", "rgb8"),
    ("rgb8", "jpeg", "jpeg", "rgb8"),
    ("mono8", "jpeg", "mono8; jpeg compressed mono8", "gray8"),
    ("rgb8", "png", "bgr8; png compressed bgr8", "rgb8"),
    ("mono8", "png", "png", "gray8"),
    ("mono16", "png", "mono16; png compressed mono16", "gray16"),
]


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
@pytest.mark.parametrize("kind,codec,fmt,handoff_format", CASES, ids=[c[2] for c in CASES])
def test_compressed_images_play_with_their_pixels(tmp_path, storage, kind, codec, fmt, handoff_format):
    w, h = 24, 16
    pictures = [picture(kind, k, w, h) for k in range(3)]
    bag = write_bag(tmp_path / "bag", [(fmt, encode(kind, codec, p)) for p in pictures], storage)
    info, frames, _ = dump(bag, tmp_path / "dump")
    assert (info["format"], info["width"], info["height"], info["frame_count"]) == (handoff_format, w, h, 3)
    assert info["topic"] == TOPIC and info["played_warnings"] == []
    assert [f["log_time"] for f in info["frames"]] == [START_NS + k * STEP_NS for k in range(3)]
    for got, want in zip(frames, pictures):
        got = np.frombuffer(got, dtype="<u2" if kind == "mono16" else np.uint8).reshape(want.shape)
        if codec == "png":
            assert np.array_equal(got, want)
        else:
            assert np.abs(got.astype(int) - want.astype(int)).max() <= 12


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
def test_corrupt_jpeg_is_named_and_the_rest_plays(tmp_path, storage):
    w, h = 16, 8
    pictures = [picture("rgb8", k, w, h) for k in range(4)]
    data = [encode("rgb8", "jpeg", p) for p in pictures]
    data[2] = data[2][: len(data[2]) // 2]  # cut short
    bag = write_bag(tmp_path / "bag", [("jpeg", d) for d in data], storage)
    info, frames, stderr = dump(bag, tmp_path / "dump")
    assert info["frame_count"] == 4 and len(frames) == 4
    (warning,) = info["played_warnings"]
    assert f'topic "{TOPIC}"' in warning and "frame 2" in warning and "CompressedImage.data: corrupt JPEG" in warning
    assert warning in stderr  # logged too
    assert frames[2] == bytes(w * h * 3)  # shown black
    last = np.frombuffer(frames[3], dtype=np.uint8).reshape(h, w, 3).astype(int)
    assert np.abs(last - pictures[3]).max() <= 12  # the frame after it plays


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
def test_unsupported_format_is_an_error_naming_the_field(tmp_path, storage):
    bag = write_bag(tmp_path / "bag", [("vp9", b"\x00\x00\x00\x01\x67")], storage)  # h264 / h265: test_ros_video.py
    r = subprocess.run([TOOL, "dump", str(bag), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1
    assert 'frame 0' in r.stderr and 'CompressedImage.format: unsupported format "vp9"' in r.stderr


def view_list(target, flag="--list"):
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    r = subprocess.run([view, str(target), flag], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return {line.split()[0]: line for line in r.stdout.splitlines()[1:]}


def bag_with_other_topics(folder, storage):
    t = TS.types
    header = t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=1, nanosec=0), frame_id="")
    bayer = t["sensor_msgs/msg/Image"](header=header, height=2, width=2, encoding="bayer_rggb8", is_bigendian=0,
                                       step=2, data=np.zeros(4, dtype=np.uint8))
    temps = [t["sensor_msgs/msg/Temperature"](header=header, temperature=20.0, variance=0.0)] * 3
    extra = [("/cam/bayer", "sensor_msgs/msg/Image", [bayer, bayer]), ("/temperature", "sensor_msgs/msg/Temperature", temps)]
    pictures = [encode("rgb8", "png", picture("rgb8", k, 8, 4)) for k in range(5)]
    return write_bag(folder, [("png", p) for p in pictures], storage, extra)


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
@pytest.mark.parametrize("flag", ["--list", "--topics"])
def test_list_names_every_topic_and_why_it_is_not_shown(tmp_path, storage, flag):
    bag_with_other_topics(tmp_path / "bag", storage)
    lines = view_list(tmp_path / "bag", flag)  # the folder: its metadata.yaml names the file
    assert set(lines) == {TOPIC, "/cam/bayer", "/temperature"}
    assert lines[TOPIC].split()[1:4] == ["sensor_msgs/msg/CompressedImage", "5", "20.00"]
    assert lines[TOPIC].endswith("image: png")
    assert 'not shown: unsupported encoding "bayer_rggb8"' in lines["/cam/bayer"]
    assert lines["/temperature"].split()[1:3] == ["sensor_msgs/msg/Temperature", "3"]
    assert 'not shown: type "sensor_msgs/msg/Temperature" is not an image type' in lines["/temperature"]


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
def test_handoff_list_topics_and_open(tmp_path, storage):
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    bag = bag_with_other_topics(tmp_path / "bag", storage)
    topics = {t["topic"]: t for t in handoff.list_topics(str(bag))}
    assert topics[TOPIC]["shown"] == "image" and topics[TOPIC]["messages"] == 5
    assert topics[TOPIC]["rate"] == pytest.approx(20.0)
    assert topics["/cam/bayer"]["shown"] == "not shown" and "bayer_rggb8" in topics["/cam/bayer"]["note"]
    assert topics["/temperature"]["type"] == "sensor_msgs/msg/Temperature"
    with handoff.open(str(bag), topic=TOPIC) as src:
        assert (len(src), src.width, src.height, src.format) == (5, 8, 4, "rgb8")
        frame, _ = next(iter(src))
        assert np.array_equal(np.from_dlpack(frame), picture("rgb8", 0, 8, 4))


def write_foxglove(path, messages):
    """foxglove.CompressedImage messages (format, data) on /cam, written by mcap-protobuf-support."""
    from foxglove_schemas_protobuf.CompressedImage_pb2 import CompressedImage
    from mcap_protobuf.writer import Writer as ProtobufWriter

    with open(path, "wb") as f:
        w = ProtobufWriter(f)
        for k, (fmt, data) in enumerate(messages):
            msg = CompressedImage(frame_id="cam", data=data, format=fmt)
            msg.timestamp.FromNanoseconds(START_NS + k * STEP_NS)
            w.write_message("/cam", msg, log_time=START_NS + k * STEP_NS, publish_time=START_NS + k * STEP_NS)
        w.finish()


def test_foxglove_compressed_image_plays(tmp_path):
    w, h = 24, 16
    pictures = [picture("rgb8", k, w, h) for k in range(3)]
    data = [encode("rgb8", "jpeg", pictures[0]), encode("rgb8", "png", pictures[1]),
            encode("rgb8", "jpeg", pictures[2])[:200]]  # the last cut short
    write_foxglove(tmp_path / "fox.mcap", [("jpeg", data[0]), ("png", data[1]), ("jpeg", data[2])])
    info, frames, _ = dump(tmp_path / "fox.mcap", tmp_path / "dump")
    assert (info["format"], info["width"], info["height"], info["frame_count"]) == ("rgb8", w, h, 3)
    first = np.frombuffer(frames[0], dtype=np.uint8).reshape(h, w, 3).astype(int)
    assert np.abs(first - pictures[0]).max() <= 12
    assert np.array_equal(np.frombuffer(frames[1], dtype=np.uint8).reshape(h, w, 3), pictures[1])
    (warning,) = info["played_warnings"]
    assert 'topic "/cam"' in warning and "frame 2" in warning and "CompressedImage.data: corrupt JPEG" in warning
    lines = view_list(tmp_path / "fox.mcap")
    assert lines["/cam"].split()[1:3] == ["foxglove.CompressedImage", "3"] and lines["/cam"].endswith("image: jpeg")


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
def test_handoff_view_plays_a_jpeg_bag(tmp_path, storage):
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
    from mcap.reader import make_reader

    w, h = 32, 16
    pictures = [picture("rgb8", k, w, h) for k in range(4)]
    write_bag(tmp_path / "bag", [("rgb8; jpeg compressed bgr8", encode("rgb8", "jpeg", p)) for p in pictures], storage)
    out = tmp_path / "replayed.mcap"
    r = subprocess.run([view, "--headless", str(tmp_path / "bag"), "--record", str(out)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out, "rb") as f:
        images = [RawImage.FromString(m.data) for s, _, m in make_reader(f).iter_messages()
                  if s and s.name == "foxglove.RawImage"]
    assert images, r.stderr
    j = 0  # each replayed frame is one of the bag's, in order (headless playback may leave frames out)
    for img in images:
        assert (img.width, img.height, img.encoding) == (w, h, "rgb8")
        got = np.frombuffer(img.data, dtype=np.uint8).reshape(h, img.step)[:, : w * 3].reshape(h, w, 3).astype(int)
        while j < len(pictures) and np.abs(got - pictures[j]).max() > 12:
            j += 1
        assert j < len(pictures), "a replayed frame is none of the bag's later frames"
        j += 1


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
def test_a_corrupt_picture_with_detections_plays_black_with_its_boxes(tmp_path, storage):
    """Detections in the image topic's namespace are matched by the picture's header stamp, which a corrupt
    picture still has: it is shown black with its boxes, once named, and no frame is lost."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    from rosbags.typesys import get_types_from_msg
    from ros_msgs import VISION_MSGS
    from test_ros_detections import detection

    ts = get_typestore(Stores.ROS2_HUMBLE)
    types = {}
    for name, text in VISION_MSGS.items():
        types.update(get_types_from_msg(text, name))
    ts.register(types)
    w, h = 16, 8
    data = [encode("rgb8", "jpeg", picture("rgb8", k, w, h)) for k in range(4)]
    data[1] = data[1][: len(data[1]) // 2]
    dets = [ts.types["vision_msgs/msg/Detection2DArray"](
        header=compressed(k, "jpeg", b"").header,
        detections=[detection(START_NS + k * STEP_NS, 4.0 + k, 4.0, 4.0, 4.0, [("1", 0.9)], "7")]) for k in range(4)]
    with Writer(tmp_path / "bag", version=9, storage_plugin=storage) as writer:
        image = writer.add_connection(TOPIC, "sensor_msgs/msg/CompressedImage", typestore=ts)
        boxes = writer.add_connection("/cam/detections", "vision_msgs/msg/Detection2DArray", typestore=ts)
        for k in range(4):
            writer.write(image, START_NS + k * STEP_NS,
                         bytes(ts.serialize_cdr(compressed(k, "jpeg", data[k]), "sensor_msgs/msg/CompressedImage")))
            writer.write(boxes, START_NS + k * STEP_NS + 1000,
                         bytes(ts.serialize_cdr(dets[k], "vision_msgs/msg/Detection2DArray")))
    with handoff.open(str(tmp_path / "bag")) as src:
        got = [(np.from_dlpack(frame).copy(), overlays.boxes.copy()) for frame, overlays in src]
        assert len(got) == 4
        assert not got[1][0].any(), "the corrupt picture is shown black"
        for k, (_, b) in enumerate(got):
            np.testing.assert_allclose(b, [[2.0 + k, 2.0, 6.0 + k, 6.0]])
        assert len(src.warnings) == 1 and "frame 1" in src.warnings[0], src.warnings
