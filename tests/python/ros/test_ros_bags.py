"""ROS 2 MCAP bags written by rosbags play in handoff with the right pixels.

rosbags (an independent implementation) writes rosbag2 bags with the MCAP
and the SQLite3 storage plugins: sensor_msgs/msg/Image messages of every encoding handoff
shows, rows padded past the packed row, 16-bit and float samples big-endian
where is_bigendian says so, CDR in either byte order. handoff_mcap_tool dump
(the recording source handoff-view plays) returns each frame's packed rows;
handoff-view --headless --record replays one bag into a recording read back
with the `mcap` package. HANDOFF_MCAP_TOOL and HANDOFF_VIEW_EXE name the
programs (ctest sets them).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TOOL = os.environ.get("HANDOFF_MCAP_TOOL", "")
if not TOOL or not Path(TOOL).is_file():
    pytest.fail("HANDOFF_MCAP_TOOL must name the built handoff_mcap_tool (ctest sets it)", pytrace=False)

TOPIC = "/cam/image_raw"
START_NS, STEP_NS = 1_700_000_000_000_000_000, 40_000_000
TS = get_typestore(Stores.ROS2_HUMBLE)

# encoding -> (bytes per pixel of the packed row, sample bytes to swap, handoff format)
ENCODINGS = {
    "rgb8": (3, 1, "rgb8"), "bgr8": (3, 1, "bgr8"), "rgba8": (4, 1, "rgba8"), "bgra8": (4, 1, "bgra8"),
    "mono8": (1, 1, "gray8"), "mono16": (2, 2, "gray16"), "16UC1": (2, 2, "gray16"), "32FC1": (4, 4, "gray32f"),
    "yuv422": (2, 1, "uyvy"), "uyvy": (2, 1, "uyvy"), "yuv422_yuy2": (2, 1, "yuyv"), "yuyv": (2, 1, "yuyv"),
    "nv12": (1, 1, "nv12"),
}


def rows_of(encoding, w, h):
    """The packed rows of the data: H, plus ceil(H/2) chroma rows for nv12."""
    return h + ((h + 1) // 2 if encoding == "nv12" else 0)


def image(encoding, k, w, h, pad, big_endian):
    """(packed little-endian pixels as handoff holds them, the Image message)."""
    bpp, sample, _ = ENCODINGS[encoding]
    row = w * bpp
    rng = np.random.default_rng(k * 97 + len(encoding))
    packed = rng.integers(0, 256, size=(rows_of(encoding, w, h), row), dtype=np.uint8)
    if encoding == "32FC1":  # finite floats: values from a float grid
        packed = (rng.integers(-1000, 1000, size=(h, w)).astype("<f4") / 8).view(np.uint8).reshape(h, row)
    stored = packed
    if big_endian and sample > 1:  # the message's samples in big-endian order
        stored = packed.reshape(packed.shape[0], -1, sample)[:, :, ::-1].reshape(packed.shape)
    data = np.full((packed.shape[0], row + pad), 0xEE, dtype=np.uint8)
    data[:, :row] = stored
    t = TS.types
    stamp_ns = START_NS + k * STEP_NS
    msg = t["sensor_msgs/msg/Image"](
        header=t["std_msgs/msg/Header"](
            stamp=t["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id="cam"),
        height=h, width=w, encoding=encoding, is_bigendian=int(big_endian), step=row + pad, data=data.reshape(-1))
    return packed.tobytes(), msg


def write_bag(folder, encoding, n, w, h, pad, big_endian=False, cdr_little_endian=True, storage=StoragePlugin.MCAP):
    """Writes the bag; returns (its .mcap / .db3 file, each frame's packed pixels)."""
    expected = []
    with Writer(folder, version=9, storage_plugin=storage) as writer:
        conn = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=TS)
        for k in range(n):
            packed, msg = image(encoding, k, w, h, pad, big_endian)
            expected.append(packed)
            raw = TS.serialize_cdr(msg, "sensor_msgs/msg/Image", little_endian=cdr_little_endian)
            writer.write(conn, START_NS + k * STEP_NS, bytes(raw))
    (bag_file,) = Path(folder).glob("*.mcap" if storage == StoragePlugin.MCAP else "*.db3")
    return bag_file, expected


def dump(mcap, out):
    r = subprocess.run([TOOL, "dump", str(mcap), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    info = json.loads((out / "recording.json").read_text())
    frames = [(out / f"frame_{i:06d}.yuv").read_bytes() for i in range(info["frame_count"])]
    return info, frames


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("big_endian", [False, True], ids=["is_bigendian0", "is_bigendian1"])
def test_every_encoding_plays_with_its_pixels(tmp_path, encoding, big_endian):
    w, h = (6, 4) if encoding != "nv12" else (6, 5)
    mcap, expected = write_bag(tmp_path / "bag", encoding, 3, w, h, pad=7, big_endian=big_endian)
    info, frames = dump(mcap, tmp_path / "dump")
    assert (info["format"], info["width"], info["height"], info["frame_count"]) == (ENCODINGS[encoding][2], w, h, 3)
    assert info["topic"] == TOPIC
    assert info["matrix"] == "bt601" and info["range"] == "limited"  # no colorimetry in ROS images: the default
    assert frames == expected
    assert [f["log_time"] for f in info["frames"]] == [START_NS + k * STEP_NS for k in range(3)]


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("big_endian", [False, True], ids=["is_bigendian0", "is_bigendian1"])
def test_sqlite3_bags_play_with_their_pixels(tmp_path, encoding, big_endian):
    w, h = 6, 5
    db3, expected = write_bag(tmp_path / "bag", encoding, 3, w, h, pad=5, big_endian=big_endian,
                              storage=StoragePlugin.SQLITE3)
    info, frames = dump(db3, tmp_path / "dump")
    assert (info["format"], info["width"], info["height"], info["frame_count"]) == (ENCODINGS[encoding][2], w, h, 3)
    assert frames == expected
    assert [f["log_time"] for f in info["frames"]] == [START_NS + k * STEP_NS for k in range(3)]


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
@pytest.mark.parametrize("h,matrix", [(576, "bt601"), (578, "bt709")])
def test_yuv_images_default_to_bt601_up_to_576_rows_else_bt709(tmp_path, storage, h, matrix):
    bag, _ = write_bag(tmp_path / "bag", "nv12", 1, 4, h, pad=0, storage=storage)
    info, _ = dump(bag, tmp_path / "dump")
    assert (info["matrix"], info["range"]) == (matrix, "limited")


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_bag_folder_plays_through_its_metadata(tmp_path, storage):
    _, expected = write_bag(tmp_path / "bag", "bgr8", 2, 4, 3, pad=1, storage=storage)
    info, frames = dump(tmp_path / "bag", tmp_path / "dump")
    assert info["topic"] == TOPIC and frames == expected


def test_bag_folder_naming_a_missing_file(tmp_path):
    write_bag(tmp_path / "bag", "mono8", 1, 2, 2, pad=0, storage=StoragePlugin.SQLITE3)
    (db3,) = (tmp_path / "bag").glob("*.db3")
    db3.unlink()
    r = subprocess.run([TOOL, "dump", str(tmp_path / "bag"), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1  # its only file: nothing plays
    assert "metadata.yaml: relative_file_paths: no storage file of the bag can be played: " in r.stderr
    assert f"metadata.yaml: relative_file_paths: names {db3.name}, which is not in the folder" in r.stderr


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
@pytest.mark.parametrize("again", ["{}", "./{}"], ids=["same", "dot_slash"])
def test_bag_folder_naming_a_file_twice_is_refused(tmp_path, storage, again):
    """metadata.yaml listing its storage file twice (by the same or another spelling) would play every message
    twice: it is an error naming relative_file_paths and both entries, for playing and for --list."""
    write_bag(tmp_path / "bag", "mono8", 2, 2, 2, pad=0, storage=storage)
    (file,) = (tmp_path / "bag").glob("*.mcap" if storage == StoragePlugin.MCAP else "*.db3")
    meta = tmp_path / "bag" / "metadata.yaml"
    text = meta.read_text()
    listed = f"  - {file.name}\n"
    assert listed in text, text
    meta.write_text(text.replace(listed, listed + f"  - {again.format(file.name)}\n", 1))
    why = (f"metadata.yaml: relative_file_paths: names the same file twice: {file.name} (entry 1) and "
           f"{again.format(file.name)} (entry 2)")
    r = subprocess.run([TOOL, "dump", str(tmp_path / "bag"), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1 and why in r.stderr, r.stderr
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if view and Path(view).is_file():
        r = subprocess.run([view, str(tmp_path / "bag"), "--list"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and why in r.stderr, r.stdout + r.stderr


def test_db3_that_is_not_sqlite(tmp_path):
    bad = tmp_path / "bag_0.db3"
    bad.write_bytes(b"\x00\x01 not a database " * 8)
    r = subprocess.run([TOOL, "dump", str(bad), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "bag_0.db3: sqlite: reading the bag" in r.stderr and "file is not a database" in r.stderr


def test_big_endian_cdr(tmp_path):
    mcap, expected = write_bag(tmp_path / "bag", "mono16", 2, 5, 3, pad=3, big_endian=True, cdr_little_endian=False)
    _, frames = dump(mcap, tmp_path / "dump")
    assert frames == expected


def test_step_too_small_is_an_error_naming_the_field(tmp_path):
    t = TS.types
    msg = t["sensor_msgs/msg/Image"](
        header=t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=1, nanosec=0), frame_id=""),
        height=2, width=4, encoding="rgb8", is_bigendian=0, step=10, data=np.zeros(20, dtype=np.uint8))
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=TS)
        writer.write(conn, 1, bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Image")))
    (mcap,) = (tmp_path / "bag").glob("*.mcap")
    r = subprocess.run([TOOL, "dump", str(mcap), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "frame 0" in r.stderr and "Image.step: 10 is below the 12-byte rows of a rgb8 image 4 wide" in r.stderr


def write_bag_with_a_bad_frame(folder, storage, w=4, h=2):
    """Six rgb8 frames, frame 2's step below its rows; returns the other five's pixels, (H, W, 3) each."""
    expected = []
    with Writer(folder, version=9, storage_plugin=storage) as writer:
        conn = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=TS)
        for k in range(6):
            packed, msg = image("rgb8", k, w, h, 0, False)
            if k == 2:
                msg.step, msg.data = 3 * w - 2, msg.data[: (3 * w - 2) * h]
            else:
                expected.append(np.frombuffer(packed, np.uint8).reshape(h, w, 3))
            writer.write(conn, START_NS + k * STEP_NS, bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Image")))
    return expected


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_a_malformed_frame_raises_once_and_reading_goes_on(tmp_path, storage):
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    expected = write_bag_with_a_bad_frame(tmp_path / "bag", storage)
    frames, errors = [], []
    with handoff.open(str(tmp_path / "bag")) as src:
        while True:
            try:
                item = src.read()
            except handoff.ParseError as e:
                errors.append((src.position, str(e)))
                continue
            if item is None:
                break
            frames.append(np.from_dlpack(item[0]).copy())
    assert len(errors) == 1 and errors[0][0] == 3, errors
    assert f'topic "{TOPIC}", frame 2: ' in errors[0][1] and "Image.step: 10 is below the 12-byte rows" in errors[0][1]
    assert len(frames) == 5 and all(np.array_equal(f, e) for f, e in zip(frames, expected))


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_handoff_view_plays_on_past_a_malformed_frame(tmp_path, storage):
    """Frame 2 of 6 has a step below its rows: handoff-view names it, shows the
    other five in order with their pixels, and exits 1 (the bag is malformed)."""
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    from PIL import Image

    expected = write_bag_with_a_bad_frame(tmp_path / "bag", storage)
    out = tmp_path / "png"
    r = subprocess.run([view, "--headless", "--fast", str(tmp_path / "bag"), "--output", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f'topic "{TOPIC}", frame 2: ' in r.stderr
    assert "Image.step: 10 is below the 12-byte rows of a rgb8 image 4 wide" in r.stderr
    assert "1 malformed frame(s) skipped; the first: " in r.stderr
    pngs = sorted(out.glob("frame_*.png"))
    assert len(pngs) == 5, r.stderr
    for want, png in zip(expected, pngs):
        got = np.asarray(Image.open(png).convert("RGB"), dtype=np.int16)
        assert got.shape == want.shape and np.abs(got - want).max() <= 1, png.name


@pytest.mark.parametrize("folder", [False, True], ids=["file", "folder"])
@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_handoff_view_plays_the_bag(tmp_path, storage, folder):
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    from mcap.reader import make_reader

    n, w, h = 5, 8, 6
    # nv12: the viewer's recorder writes nv12 / p010 frames.
    bag_file, expected = write_bag(tmp_path / "bag", "nv12", n, w, h, pad=4, storage=storage)
    out = tmp_path / "replayed.mcap"
    target = tmp_path / "bag" if folder else bag_file  # the folder: its metadata.yaml names the file
    r = subprocess.run([view, "--headless", str(target), "--topic", TOPIC, "--record", str(out)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    images = []
    with open(out, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if schema and schema.name == "foxglove.RawImage":
                images.append(message.data)
    assert images, r.stderr
    # Each replayed frame is one of the bag's, in order (headless playback may leave frames out).
    from foxglove_schemas_protobuf.RawImage_pb2 import RawImage

    j = 0
    for data in images:
        img = RawImage.FromString(data)
        assert (img.width, img.height, img.encoding, img.step) == (w, h, "nv12", w)
        while j < n and img.data != expected[j]:
            j += 1
        assert j < n, "a replayed frame is none of the bag's later frames"
        j += 1
    assert "recorded 0 frames" not in r.stderr


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_handoff_open_reads_the_bag(tmp_path, storage):
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    bag_file, expected = write_bag(tmp_path / "bag", "mono8", 3, 7, 4, pad=2, storage=storage)
    for path in (bag_file, tmp_path / "bag"):  # the file, and the folder (its metadata.yaml)
        with handoff.open(str(path), topic=TOPIC) as src:
            assert (len(src), src.width, src.height, src.format) == (3, 7, 4, "gray8")
            for k, (frame, overlays) in enumerate(src):
                assert np.array_equal(np.from_dlpack(frame), np.frombuffer(expected[k], dtype=np.uint8).reshape(4, 7))
                assert src.log_time(k) == START_NS + k * STEP_NS


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_a_renamed_bag_file_is_known_by_its_first_bytes(tmp_path, storage):
    """A bag's .mcap / .db3 under another name is still a recording: handoff.open and handoff-view read its
    header, not its name (a raw video file would need --size)."""
    import shutil

    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    bag_file, expected = write_bag(tmp_path / "bag", "mono8", 3, 7, 4, pad=2, storage=storage)
    renamed = tmp_path / "camera.bin"
    shutil.copyfile(bag_file, renamed)
    with handoff.open(str(renamed)) as src:
        assert (len(src), src.format, src.topic) == (3, "gray8", TOPIC)
        frame, _ = src.read()
        assert np.array_equal(np.from_dlpack(frame), np.frombuffer(expected[0], dtype=np.uint8).reshape(4, 7))
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if view and Path(view).is_file():
        r = subprocess.run([view, str(renamed), "--list"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert TOPIC in r.stdout and "sensor_msgs/msg/Image" in r.stdout, r.stdout


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_handoff_view_shows_two_cameras_of_a_bag_side_by_side(tmp_path, storage):
    """--topic twice on a bag: one composed PNG per time of either camera (the right one logs 5 ms after the
    left), each tile its camera's newest frame logged at or before that time (the right: nothing at first).
    Grey 8-bit frames: the codes come through as they are."""
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    from PIL import Image

    w, h, n = 32, 24, 3
    t = TS.types
    with Writer(tmp_path / "bag", version=9, storage_plugin=storage) as writer:
        conns = {name: writer.add_connection(name, "sensor_msgs/msg/Image", typestore=TS)
                 for name in ("/left/image_raw", "/right/image_raw")}
        for k in range(n):
            for name, base in (("/left/image_raw", 40), ("/right/image_raw", 200)):
                ns = START_NS + k * STEP_NS + (0 if name.startswith("/left") else 5_000_000)
                msg = t["sensor_msgs/msg/Image"](
                    header=t["std_msgs/msg/Header"](
                        stamp=t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                    height=h, width=w, encoding="mono8", is_bigendian=0, step=w,
                    data=np.full(w * h, base + 10 * k, dtype=np.uint8))
                writer.write(conns[name], ns, bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Image")))
    out = tmp_path / "png"
    r = subprocess.run([view, "--headless", "--fast", str(tmp_path / "bag"), "--topic", "/left/image_raw",
                        "--topic", "/right/image_raw", "--window", "640x240", "--hide-overlays", "--output", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    pngs = sorted(out.glob("frame_*.png"))
    assert len(pngs) == 2 * n, r.stderr
    for j, png in enumerate(pngs):  # 0, 5, 40, 45, 80, 85 ms
        img = np.asarray(Image.open(png).convert("RGB"), dtype=np.int16)
        assert img.shape == (h, 2 * w, 3), img.shape
        assert np.abs(img[:, :w] - (40 + 10 * (j // 2))).max() <= 1, (j, img[0, 0])
        if j == 0:  # the right camera has no frame at or before the first left one yet: its cell is background
            assert np.abs(img[:, w:] - img[0, w]).max() == 0 and img[0, w].max() < 100, img[0, w]
        else:
            assert np.abs(img[:, w:] - (200 + 10 * ((j - 1) // 2))).max() <= 1, (j, img[0, w])


def write_cameras(folder, cameras, w=16, h=8, n=3):
    """An MCAP bag of 8-bit cameras, (topic, encoding) each in the order given (their channel order): frame k
    of each is w x h of the value 50 + k."""
    t = TS.types
    with Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        for name, encoding in cameras:
            conn = writer.add_connection(name, "sensor_msgs/msg/Image", typestore=TS)
            for k in range(n):
                ns = START_NS + k * STEP_NS
                msg = t["sensor_msgs/msg/Image"](
                    header=t["std_msgs/msg/Header"](
                        stamp=t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9), frame_id=""),
                    height=h, width=w, encoding=encoding, is_bigendian=0, step=w,
                    data=np.full(w * h, 50 + k, dtype=np.uint8))
                writer.write(conn, ns, bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Image")))


def test_all_images_shows_the_cameras_it_can_and_names_the_others(tmp_path):
    """--all-images on a bag with a mono8 camera and a bayer one (an encoding handoff does not show): the mono8
    camera plays, and the bayer topic is named with the reason, not a refusal of the whole bag."""
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    write_cameras(tmp_path / "bag", [("/bayer/image_raw", "bayer_rggb8"), ("/mono/image_raw", "mono8")])
    r = subprocess.run([view, "--headless", "--fast", str(tmp_path / "bag"), "--all-images"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "/bayer/image_raw" in r.stderr and "is not shown" in r.stderr and "bayer_rggb8" in r.stderr, r.stderr
    assert "3 frames 16x8 gray8" in r.stderr, r.stderr


def test_without_a_topic_the_first_that_can_be_shown_plays(tmp_path):
    """No topic asked for, the bag's first image topic a bayer camera (not shown): handoff.open and handoff-view
    play the mono8 one, saying why the first was passed over; asked for by name, the bayer one is refused."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    write_cameras(tmp_path / "bag", [("/z_bayer/image_raw", "bayer_rggb8"), ("/mono/image_raw", "mono8")])
    with handoff.open(str(tmp_path / "bag")) as src:
        values = [int(np.from_dlpack(frame)[0, 0]) for frame, _ in src]
    assert values == [50, 51, 52]
    with pytest.raises(handoff.ParseError, match="bayer_rggb8"):
        handoff.open(str(tmp_path / "bag"), topic="/z_bayer/image_raw")
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if view and Path(view).is_file():
        r = subprocess.run([view, "--headless", "--fast", str(tmp_path / "bag")], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "the first image topic is not shown" in r.stderr and "bayer_rggb8" in r.stderr, r.stderr
        assert "playing /mono/image_raw instead" in r.stderr and "3 frames 16x8 gray8" in r.stderr, r.stderr


# Topics whose first message opening refuses (later ones would fit), each with opening's reason.
BAD_FIRST = {
    "/zero/image_raw": "Image.width: width is 0",
    "/step/image_raw": "Image.step: 4 is below the 8-byte rows of a mono8 image 8 wide",
    "/short/image_raw": "Image.data: 10 bytes, shorter than step * height = 8 * 8 = 64",
    "/jpeg/image_raw/compressed": "CompressedImage.data: corrupt JPEG",
    "/video/image_raw/compressed": "CompressedImage.data: the topic has no keyframe",
}


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_listing_judges_a_topic_by_opening_its_first_message(tmp_path, storage):
    """list_topics, handoff-view --list and open_topics' default call a topic an image only when its first
    message opens as playing opens it (size, step and data, the picture decoded, a video keyframe found);
    the others are `not shown` with opening's error, and the good topic still plays."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    t = TS.types

    def header(ns):
        return t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9),
                                        frame_id="cam")

    def mono8(ns, w, h, step, size):
        return t["sensor_msgs/msg/Image"](header=header(ns), height=h, width=w, encoding="mono8", is_bigendian=0,
                                          step=step, data=np.full(size, 7, dtype=np.uint8))

    def compressed(ns, fmt, data):
        return t["sensor_msgs/msg/CompressedImage"](header=header(ns), format=fmt,
                                                    data=np.frombuffer(bytes(data), dtype=np.uint8))

    first = {"/zero/image_raw": mono8(START_NS, 0, 0, 0, 0), "/step/image_raw": mono8(START_NS, 8, 8, 4, 64),
             "/short/image_raw": mono8(START_NS, 8, 8, 8, 10), "/good/image_raw": mono8(START_NS, 8, 8, 8, 64),
             "/jpeg/image_raw/compressed": compressed(START_NS, "jpeg", b"\xff\xd8\xff\xe0garbage" * 3),
             # A P slice (nal_unit_type 1) and no IDR anywhere.
             "/video/image_raw/compressed": compressed(START_NS, "h264", b"\x00\x00\x00\x01\x41\x9a\x00\x00")}
    with Writer(tmp_path / "bag", version=9, storage_plugin=storage) as writer:
        for topic, msg in first.items():
            kind = "sensor_msgs/msg/CompressedImage" if topic.endswith("compressed") else "sensor_msgs/msg/Image"
            conn = writer.add_connection(topic, kind, typestore=TS)
            for k in range(3):  # images after the first fit: the first one decides
                ns = START_NS + k * STEP_NS
                later = mono8(ns, 8, 8, 8, 64) if k and kind.endswith("/Image") else msg
                writer.write(conn, ns, bytes(TS.serialize_cdr(later, kind)))
    bag = str(tmp_path / "bag")
    listed = {row["topic"]: row for row in handoff.list_topics(bag)}
    assert listed["/good/image_raw"]["shown"] == "image", listed["/good/image_raw"]
    for topic, why in BAD_FIRST.items():
        assert listed[topic]["shown"] == "not shown", listed[topic]
        assert f"topic {topic}: message 0: {why}" in listed[topic]["note"], listed[topic]
        with pytest.raises(handoff.ParseError, match=re.escape(why)):
            handoff.open(bag, topic=topic)
    with handoff.open_topics(bag) as timeline:
        assert [topic for topic, _, _ in timeline] == ["/good/image_raw"] * 3
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if view and Path(view).is_file():
        r = subprocess.run([view, bag, "--list"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        lines = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
        assert lines["/good/image_raw"].endswith("image: mono8"), r.stdout
        for topic, why in BAD_FIRST.items():
            assert "not shown: " in lines[topic] and why in lines[topic], r.stdout


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
def test_listing_a_bag_of_many_topics_counts_each_topics_own_messages(tmp_path, storage):
    """A bag of 300 camera topics with 1 to 4 messages each, interleaved in time: list_topics gives each
    its own count, rate and first message's encoding, whatever order the channels and messages come in."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    n = 300
    with Writer(tmp_path / "bag", version=9, storage_plugin=storage) as writer:
        conns = [writer.add_connection(f"/cam{i}/image_raw", "sensor_msgs/msg/Image", typestore=TS)
                 for i in range(n)]
        for k in range(4):
            for i in reversed(range(n)):
                if k <= i % 4:
                    encoding = "mono8" if i % 2 == 0 else "rgb8"
                    _, msg = image(encoding, k, 2, 2, 0, False)
                    writer.write(conns[i], START_NS + k * STEP_NS + i, bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Image")))
    listed = {row["topic"]: row for row in handoff.list_topics(str(tmp_path / "bag"))}
    assert sorted(listed) == sorted(f"/cam{i}/image_raw" for i in range(n))
    for i in range(n):
        row = listed[f"/cam{i}/image_raw"]
        assert row["messages"] == i % 4 + 1, row
        assert row["shown"] == "image" and row["note"] == ("mono8" if i % 2 == 0 else "rgb8"), row
        if i % 4:
            assert row["rate"] == pytest.approx(1e9 / STEP_NS, rel=1e-3), row
