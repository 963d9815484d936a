"""Split and zstd-compressed rosbag2 bags written by rosbags play as one recording.

rosbags (an independent implementation) writes each storage file: a split bag
is two bags written one after the other (the second taking over where the
first stopped, as `ros2 bag record --max-bag-duration` splits one) moved into
one folder, their metadata.yaml merged as rosbag2 writes a split bag's (the
files in recording order, counts added up); rosbags' own reader reading the
merged folder checks the merge. Compressed bags are rosbags' zstd FILE and
MESSAGE modes. handoff_mcap_tool dump (HANDOFF_MCAP_TOOL) gives the frames
with their overlays, handoff.list_topics / handoff-view --list the listing.
"""

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import CompressionFormat, CompressionMode, Reader, StoragePlugin, Writer
from ruamel.yaml import YAML

from test_ros_detections import DETECTIONS, TOPIC, TS, T, box_of, detection, header

TOOL = os.environ.get("HANDOFF_MCAP_TOOL", "")
if not TOOL or not Path(TOOL).is_file():
    pytest.fail("HANDOFF_MCAP_TOOL must name the built handoff_mcap_tool (ctest sets it)", pytrace=False)

START_NS, STEP_NS = 1_700_000_000_000_000_000, 50_000_000
W, H, N = 16, 8, 6
STORAGES = pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])
COMPRESSIONS = pytest.mark.parametrize("mode", [CompressionMode.NONE, CompressionMode.FILE, CompressionMode.MESSAGE],
                                       ids=["uncompressed", "file", "message"])


def pixels(k):
    return np.random.default_rng(k).integers(0, 256, size=(H, W), dtype=np.uint8)


def write_part(folder, storage, mode, frames, detections):
    """One storage file: the images `frames`, the detections of frames `detections` (each logged 40 ms after its image)."""
    writer = Writer(folder, version=9, storage_plugin=storage)
    if mode != CompressionMode.NONE:
        writer.set_compression(mode, CompressionFormat.ZSTD)
    with writer:
        image = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=TS)
        dets = writer.add_connection(DETECTIONS, "vision_msgs/msg/Detection2DArray", typestore=TS)
        events = [(START_NS + k * STEP_NS, "image", k) for k in frames]
        events += [(START_NS + k * STEP_NS + 40_000_000, "detections", k) for k in detections]
        for ns, what, k in sorted(events):
            stamp = START_NS + k * STEP_NS
            if what == "image":
                msg = T["sensor_msgs/msg/Image"](header=header(stamp), height=H, width=W, encoding="mono8",
                                                 is_bigendian=0, step=W, data=pixels(k).reshape(-1))
                writer.write(image, ns, bytes(TS.serialize_cdr(msg, "sensor_msgs/msg/Image")))
            else:
                cx, cy, w, h = box_of(k)
                msg = T["vision_msgs/msg/Detection2DArray"](
                    header=header(stamp), detections=[detection(stamp, cx, cy, w, h, [("5", 0.9)], str(k))])
                writer.write(dets, ns, bytes(TS.serialize_cdr(msg, "vision_msgs/msg/Detection2DArray")))


def merge_metadata(parts):
    """rosbag2's metadata of the parts recorded one after the other, as one split bag's."""
    yaml = YAML(typ="safe")
    infos = [yaml.load((p / "metadata.yaml").read_text())["rosbag2_bagfile_information"] for p in parts]
    out = infos[0]
    out["relative_file_paths"] = [f for i in infos for f in i["relative_file_paths"]]
    out["files"] = [f for i in infos for f in i["files"]]
    out["message_count"] = sum(i["message_count"] for i in infos)
    start = min(i["starting_time"]["nanoseconds_since_epoch"] for i in infos)
    end = max(i["starting_time"]["nanoseconds_since_epoch"] + i["duration"]["nanoseconds"] for i in infos)
    out["starting_time"]["nanoseconds_since_epoch"] = start
    out["duration"]["nanoseconds"] = end - start
    for t in out["topics_with_message_count"]:
        t["message_count"] = sum(u["message_count"] for i in infos for u in i["topics_with_message_count"]
                                 if u["topic_metadata"]["name"] == t["topic_metadata"]["name"])
    return {"rosbag2_bagfile_information": out}


def write_split_bag(folder, storage, mode):
    """Frames 0-2 in the first file, 3-5 in the second; frame 2's detections, logged after the split, in the second."""
    return write_parts(folder, storage, mode, [(range(0, 3), range(0, 2)), (range(3, N), range(2, N))])


def write_parts(folder, storage, mode, contents):
    """A split bag of one storage file per (frames, detections) in `contents`, in that order."""
    parts = [folder.parent / f"{folder.name}_part{i}" for i in range(len(contents))]
    for part, (frames, detections) in zip(parts, contents):
        write_part(part, storage, mode, frames, detections)
    folder.mkdir()
    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    with open(folder / "metadata.yaml", "w") as f:
        yaml.dump(merge_metadata(parts), f)
    for p in parts:
        for f in p.iterdir():
            if f.name != "metadata.yaml":
                shutil.move(str(f), folder / f.name)
        shutil.rmtree(p)
    with Reader(folder) as r:  # rosbags reads the merged folder as one bag
        assert len(list(r.messages())) == sum(len(f) + len(d) for f, d in contents)
    return folder


def dump(bag, out, *extra):
    r = subprocess.run([TOOL, "dump", str(bag), str(out), *extra], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    info = json.loads((out / "recording.json").read_text())
    frames = [(out / f"frame_{i:06d}.yuv").read_bytes() for i in range(info["frame_count"])]
    return info, frames


def expect_plays(bag, out):
    info, frames = dump(bag, out)
    assert (info["format"], info["width"], info["height"], info["frame_count"]) == ("gray8", W, H, N)
    assert frames == [pixels(k).tobytes() for k in range(N)]
    assert [f["log_time"] for f in info["frames"]] == [START_NS + k * STEP_NS for k in range(N)]
    for k, f in enumerate(info["frames"]):  # each frame's detection, frame 2's from the other file
        assert f["overlays"] is not None, k
        assert len(f["overlays"]["objects"]) == 1, k
    return info


@STORAGES
@COMPRESSIONS
def test_split_bag_plays_as_one_recording(tmp_path, storage, mode):
    bag = write_split_bag(tmp_path / "bag", storage, mode)
    expect_plays(bag, tmp_path / "dump")


@STORAGES
@pytest.mark.parametrize("mode", [CompressionMode.FILE, CompressionMode.MESSAGE], ids=["file", "message"])
def test_compressed_bag_plays(tmp_path, storage, mode):
    write_part(tmp_path / "bag", storage, mode, range(N), range(N))
    names = [f.name for f in (tmp_path / "bag").iterdir()]
    assert any(n.endswith(".zstd") for n in names) == (mode == CompressionMode.FILE)
    expect_plays(tmp_path / "bag", tmp_path / "dump")


@STORAGES
@COMPRESSIONS
def test_listing_counts_the_whole_bag(tmp_path, storage, mode):
    bag = write_split_bag(tmp_path / "bag", storage, mode)
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    listing = handoff.list_topics(str(bag))
    assert listing.warnings == []
    topics = {t["topic"]: t for t in listing}
    assert (topics[TOPIC]["shown"], topics[TOPIC]["messages"], topics[TOPIC]["note"]) == ("image", N, "mono8")
    assert topics[TOPIC]["rate"] == pytest.approx(1e9 / STEP_NS)
    assert (topics[DETECTIONS]["shown"], topics[DETECTIONS]["messages"]) == ("overlay", N)
    with handoff.open(str(bag), topic=TOPIC) as src:
        assert len(src) == N
        src.seek(4)
        frame, overlays = src.read()
        assert np.array_equal(np.from_dlpack(frame), pixels(4))
        cx, cy, w, h = box_of(4)
        np.testing.assert_allclose(overlays.boxes, [[cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]])


@STORAGES
def test_handoff_view_lists_the_split_bag(tmp_path, storage):
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    bag = write_split_bag(tmp_path / "bag", storage, CompressionMode.MESSAGE)
    r = subprocess.run([view, str(bag), "--list"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
    assert lines[TOPIC].split()[1:4] == ["sensor_msgs/msg/Image", str(N), "20.00"]
    assert lines[TOPIC].endswith("image: mono8")


def test_a_corrupt_message_is_named_and_the_rest_plays(tmp_path):
    write_part(tmp_path / "bag", StoragePlugin.SQLITE3, CompressionMode.MESSAGE, range(N), [])
    (db3,) = (tmp_path / "bag").glob("*.db3")
    with sqlite3.connect(db3) as db:  # frame 2's data: zstd's magic, then not a frame
        db.execute("UPDATE messages SET data = ? WHERE timestamp = ?", (b"\x28\xb5\x2f\xfd garbage", START_NS + 2 * STEP_NS))
    r = subprocess.run([TOOL, "dump", str(tmp_path / "bag"), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{db3.name}: " in r.stderr and "frame 2" in r.stderr and "data: zstd: " in r.stderr
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    with handoff.open(str(tmp_path / "bag"), topic=TOPIC) as src:
        src.seek(2)
        with pytest.raises(Exception, match=r"frame 2.*data: zstd: "):
            src.read()
        src.seek(3)  # the frames after it play
        frame, _ = src.read()
        assert np.array_equal(np.from_dlpack(frame), pixels(3))


@STORAGES
def test_a_damaged_compressed_file_is_named(tmp_path, storage):
    write_part(tmp_path / "bag", storage, CompressionMode.FILE, range(N), [])
    (packed,) = (tmp_path / "bag").glob("*.zstd")
    packed.write_bytes(packed.read_bytes()[: packed.stat().st_size // 2])
    r = subprocess.run([TOOL, "dump", str(tmp_path / "bag"), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{packed.name}: compression: zstd: " in r.stderr


def test_another_compression_format_is_named(tmp_path):
    write_part(tmp_path / "bag", StoragePlugin.MCAP, CompressionMode.MESSAGE, range(2), [])
    meta = tmp_path / "bag" / "metadata.yaml"
    meta.write_text(meta.read_text().replace("compression_format: zstd", "compression_format: lz4"))
    r = subprocess.run([TOOL, "dump", str(tmp_path / "bag"), str(tmp_path / "dump")], capture_output=True, text=True)
    assert r.returncode == 1
    assert 'metadata.yaml: compression_format: "lz4": handoff decompresses zstd only' in r.stderr


# A split bag of three files (frames 0-1, 2-3, 4-5, each with its detections)
# whose second file is spoilt: it is skipped with a warning naming it, and the
# frames of the other two play with their pixels, times and detections.
THREE = [(range(0, 2), range(0, 2)), (range(2, 4), range(2, 4)), (range(4, N), range(4, N))]
SKIPPED = "(file skipped; the rest of the bag plays)"


def spoil_missing(f):
    f.unlink()


def spoil_not_its_storage(f):
    f.write_bytes(b"\0 neither SQLite nor MCAP \0" * 64)


def spoil_cut_short(f):
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 3])


# spoil -> (compression mode, what the warning says about the file)
SPOILS = {
    "missing": (spoil_missing, CompressionMode.NONE, {"mcap": "which is not in the folder", "sqlite3": "which is not in the folder"}),
    "not_its_storage": (spoil_not_its_storage, CompressionMode.NONE, {"mcap": ": byte 0: magic: ", "sqlite3": "file is not a database"}),
    "cut_short": (spoil_cut_short, CompressionMode.NONE, {"mcap": ": ", "sqlite3": "database disk image is malformed"}),
    "damaged_zstd": (spoil_cut_short, CompressionMode.FILE, {"mcap": ": compression: zstd: ", "sqlite3": ": compression: zstd: "}),
}


def file_names(bag):
    return YAML(typ="safe").load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]["relative_file_paths"]


def run_dump(bag, out):
    r = subprocess.run([TOOL, "dump", str(bag), str(out)], capture_output=True, text=True)
    return r, (json.loads((out / "recording.json").read_text()) if r.returncode == 0 else None)


@STORAGES
@pytest.mark.parametrize("spoil", list(SPOILS))
def test_a_bad_file_of_a_split_bag_is_skipped_and_the_rest_plays(tmp_path, storage, spoil):
    how, mode, problem = SPOILS[spoil]
    problem = problem["mcap" if storage == StoragePlugin.MCAP else "sqlite3"]
    bag = write_parts(tmp_path / "bag", storage, mode, THREE)
    names = file_names(bag)
    how(bag / names[1])
    r, info = run_dump(bag, tmp_path / "dump")
    assert r.returncode == 0, r.stderr
    played = [(f["log_time"] - START_NS) // STEP_NS for f in info["frames"]]
    frames = [(tmp_path / "dump" / f"frame_{i:06d}.yuv").read_bytes() for i in range(info["frame_count"])]
    assert frames == [pixels(k).tobytes() for k in played]
    if storage == StoragePlugin.MCAP and spoil == "cut_short":
        # mcap::Reader plays a file cut short up to its last whole message: what the second file holds whole.
        assert played[:2] == [0, 1] and played[-2:] == [4, 5] and played[2:-2] == [2, 3][: len(played) - 4]
    else:
        assert played == [0, 1, 4, 5]
        for f in info["frames"]:  # the detections of the files played
            assert len(f["overlays"]["objects"]) == 1
    (warning,) = info["played_warnings"]
    assert names[1] in warning and problem in warning
    assert names[0] not in warning and names[2] not in warning
    if not (storage == StoragePlugin.MCAP and spoil == "cut_short"):
        assert warning.endswith(SKIPPED)
    assert warning in r.stderr  # logged as well

    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    with handoff.open(str(bag), topic=TOPIC) as src:
        assert src.warnings == [warning]
        assert len(src) == len(played)
        src.seek(len(played) - 1)
        frame, _ = src.read()
        assert np.array_equal(np.from_dlpack(frame), pixels(5))
    listing = handoff.list_topics(bag)  # a Path is taken as well as a str
    assert listing.warnings == [warning]
    topics = {t["topic"]: t for t in listing}
    assert (topics[TOPIC]["shown"], topics[TOPIC]["messages"]) == ("image", len(played))


@STORAGES
def test_handoff_view_names_the_skipped_file(tmp_path, storage):
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    bag = write_parts(tmp_path / "bag", storage, CompressionMode.NONE, THREE)
    names = file_names(bag)
    (bag / names[1]).unlink()
    r = subprocess.run([view, str(bag), "--list"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr  # the listing, then exit 1 as playing the bag would
    lines = r.stdout.splitlines()
    assert lines[-1] == (f"warning: {bag / 'metadata.yaml'}: relative_file_paths: names {names[1]}, "
                         f"which is not in the folder {SKIPPED}")
    counts = {line.split()[0]: line.split()[2] for line in lines[1:-1]}
    assert counts[TOPIC] == "4" and counts[DETECTIONS] == "4"
    assert lines[-1][len("warning: "):] in r.stderr  # and in the log


@STORAGES
def test_a_split_bag_of_no_file_that_plays_is_an_error_naming_each(tmp_path, storage):
    bag = write_parts(tmp_path / "bag", storage, CompressionMode.NONE, THREE[:2])
    names = file_names(bag)
    spoil_missing(bag / names[0])
    spoil_not_its_storage(bag / names[1])
    r, _ = run_dump(bag, tmp_path / "dump")
    assert r.returncode == 1
    assert "metadata.yaml: relative_file_paths: no storage file of the bag can be played: " in r.stderr
    assert f"names {names[0]}, which is not in the folder" in r.stderr
    assert f"{names[1]}: " + ("byte 0: magic: " if storage == StoragePlugin.MCAP else "sqlite: ") in r.stderr
