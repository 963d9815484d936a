"""H.264 / H.265 in ROS 2 bags play as video (issue 24, section 2).

PyAV (`av`, its own FFmpeg build) encodes a moving pattern with libx264 and libx265 (Annex B,
no B-frames, a keyframe with its parameter sets every 10 frames); rosbags (an independent
implementation) writes one access unit per message into rosbag2 bags with the MCAP and the
SQLite3 storage plugins, as sensor_msgs/msg/CompressedImage (format "h264" / "hevc") and as
foxglove_msgs/msg/CompressedVideo (registered here from Foxglove's ROS 2 .msg; the bags carry
its definition). handoff_mcap_tool dump (the recording source handoff-view plays) returns every
frame as NV12: the frame count, each frame within 12 codes of the pattern encoded and within 1
of PyAV's own decoding. With the handoff module: seeks and steps both ways, a corrupt access unit
named by topic, frame and field with playback going on at the next keyframe, and
handoff.list_topics / handoff-view --list calling the topic video. HANDOFF_MCAP_TOOL and
HANDOFF_VIEW_EXE name the programs (ctest sets them).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcap"))
from video_pattern import GOP, H, N, W, encode, pattern  # noqa: E402,F401  (shared with the MCAP video tests)

TOOL = os.environ.get("HANDOFF_MCAP_TOOL", "")
if not TOOL or not Path(TOOL).is_file():
    pytest.fail("HANDOFF_MCAP_TOOL must name the built handoff_mcap_tool (ctest sets it)", pytrace=False)

TOPIC = "/cam/video"
START_NS, STEP_NS = 1_700_000_000_000_000_000, 33_333_333
STORAGES = [StoragePlugin.MCAP, StoragePlugin.SQLITE3]
STORAGE_IDS = ["mcap", "sqlite3"]
IMAGE, VIDEO = "sensor_msgs/msg/CompressedImage", "foxglove_msgs/msg/CompressedVideo"
# foxglove_msgs/msg/CompressedVideo as Foxglove publishes it for ROS 2 (docs.foxglove.dev schemas).
VIDEO_MSG = "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n"

TS = get_typestore(Stores.ROS2_HUMBLE)
TS.register(get_types_from_msg(VIDEO_MSG, VIDEO))




@pytest.fixture(scope="module", params=["h264", "h265"])
def stream(request):
    return request.param, *encode(request.param)


def message(type_name, k, fmt, unit):
    t = TS.types
    stamp_ns = START_NS + k * STEP_NS
    stamp = t["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
    data = np.frombuffer(unit, dtype=np.uint8)
    if type_name == IMAGE:
        return t[IMAGE](header=t["std_msgs/msg/Header"](stamp=stamp, frame_id="cam"), format=fmt, data=data)
    return t[VIDEO](timestamp=stamp, frame_id="cam", data=data, format=fmt)


def write_bag(folder, type_name, fmt, units, storage):
    with Writer(folder, version=9, storage_plugin=storage) as writer:
        conn = writer.add_connection(TOPIC, type_name, typestore=TS)
        for k, unit in enumerate(units):
            writer.write(conn, START_NS + k * STEP_NS, bytes(TS.serialize_cdr(message(type_name, k, fmt, unit), type_name)))
    (bag_file,) = Path(folder).glob("*.mcap" if storage == StoragePlugin.MCAP else "*.db3")
    return bag_file


def format_of(codec):
    """The format string publishers write: "h264"; H.265 as "hevc" (handoff takes "h265" too)."""
    return "h264" if codec == "h264" else "hevc"


def planes_of_nv12(frame):
    luma = np.frombuffer(frame, dtype=np.uint8, count=W * H).reshape(H, W)
    chroma = np.frombuffer(frame, dtype=np.uint8, offset=W * H).reshape(H // 2, W // 2, 2)
    return luma, chroma[..., 0], chroma[..., 1]


def err(planes, reference):
    return max(np.abs(a.astype(int) - b.astype(int)).max() for a, b in zip(planes, reference))


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
@pytest.mark.parametrize("type_name", [IMAGE, VIDEO], ids=["CompressedImage", "CompressedVideo"])
def test_video_in_a_bag_plays_with_its_pixels(tmp_path, stream, storage, type_name):
    codec, units, reference = stream
    bag = write_bag(tmp_path / "bag", type_name, format_of(codec), units, storage)
    out = tmp_path / "dump"
    r = subprocess.run([TOOL, "dump", str(bag), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    info = json.loads((out / "recording.json").read_text())
    assert (info["format"], info["width"], info["height"], info["frame_count"]) == ("nv12", W, H, N)
    assert info["topic"] == TOPIC and info["played_warnings"] == []
    assert [f["log_time"] for f in info["frames"]] == [START_NS + k * STEP_NS for k in range(N)]
    for i in range(N):
        planes = planes_of_nv12((out / f"frame_{i:06d}.yuv").read_bytes())
        e = err(planes, pattern(i))
        assert e <= 12, f"frame {i}: {e} codes from the pattern encoded"
        for j in (i - 1, i + 1):
            if 0 <= j < N:
                assert err(planes, pattern(j)) > e, f"frame {i} is nearer pattern {j}"
        assert err(planes, reference[i]) <= 1, f"frame {i} differs from PyAV's decoding"


def module():
    return pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")


def check(src, i, reference):
    assert src.position == i
    frame, _ = src.read()
    planes = (np.from_dlpack(frame.luma), np.from_dlpack(frame.chroma)[..., 0], np.from_dlpack(frame.chroma)[..., 1])
    assert err(planes, pattern(i)) <= 12 and err(planes, reference[i]) <= 1, f"frame {i}"


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
def test_seeks_steps_and_a_corrupt_access_unit(tmp_path, stream, storage):
    handoff = module()
    codec, units, reference = stream
    bad = bytearray(units[13])
    bad[3 if bad[2] == 1 else 4] |= 0x80  # the first NAL unit's forbidden_zero_bit
    bag = write_bag(tmp_path / "bag", IMAGE, format_of(codec), units[:13] + [bytes(bad)] + units[14:], storage)
    with handoff.open(str(bag)) as src:
        assert (len(src), src.format, src.width, src.height, src.topic) == (N, "nv12", W, H, TOPIC)
        for i in [9, 8, 24, 3, 10, 11, 0, 21, 20]:
            src.seek(i)
            check(src, i, reference)
        src.seek(12)
        check(src, 12, reference)
        with pytest.raises(Exception, match=rf'topic "{TOPIC}", frame 13.*CompressedImage\.data: .*forbidden_zero_bit.*'
                                            r"playback goes on at frame 20 \(the next keyframe\)"):
            src.read()
        assert src.position == 20
        check(src, 20, reference)


@pytest.mark.parametrize("storage", STORAGES, ids=STORAGE_IDS)
@pytest.mark.parametrize("type_name", [IMAGE, VIDEO], ids=["CompressedImage", "CompressedVideo"])
def test_listed_as_video(tmp_path, stream, storage, type_name):
    codec, units, _ = stream
    bag = write_bag(tmp_path / "bag", type_name, format_of(codec), units, storage)
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if view and Path(view).is_file():
        r = subprocess.run([view, str(tmp_path / "bag"), "--list"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        (line,) = [x for x in r.stdout.splitlines() if x.startswith(TOPIC + " ")]
        assert line.split()[1:3] == [type_name, str(N)]
        assert line.endswith(f"image: {format_of(codec)} video")
    handoff = module()
    (topic,) = [t for t in handoff.list_topics(str(bag)) if t["topic"] == TOPIC]
    assert (topic["shown"], topic["note"], topic["messages"]) == ("image", f"{format_of(codec)} video", N)
