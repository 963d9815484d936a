"""vision_msgs/msg/Detection2DArray topics written by rosbags land on their images.

rosbags (an independent implementation) writes bags with both storage plugins
holding a sensor_msgs/msg/Image topic and Detection2DArray topics; the
detection types are registered here from the vision_msgs 4 (Humble) .msg
texts, so the bags store those definitions. handoff.open(...) gives each
frame's overlays: the detections with the frame's header stamp, from the
topic in the image topic's namespace unless overlay_topics= picks others.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

from ros_msgs import FOXGLOVE_MSGS, VISION_MSGS

TOPIC, DETECTIONS, OTHER = "/cam/image_raw", "/cam/detections", "/tracker/detections"
START_NS, STEP_NS = 1_700_000_000_000_000_000, 50_000_000
W, H, N = 64, 48, 4



def typestore():
    ts = get_typestore(Stores.ROS2_HUMBLE)
    types = {}
    for name, text in VISION_MSGS.items():
        types.update(get_types_from_msg(text, name))
    ts.register(types)
    return ts


TS = typestore()
T = TS.types


def foxglove_typestore():
    """The vision_msgs typestore with foxglove_msgs registered too."""
    ts = typestore()
    types = {}
    for name, text in FOXGLOVE_MSGS.items():
        types.update(get_types_from_msg(text, name))
    ts.register(types)
    return ts


def header(ns):
    return T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9),
                                    frame_id="cam")


def detection(ns, cx, cy, w, h, hypotheses, track):
    results = [T["vision_msgs/msg/ObjectHypothesisWithPose"](
        hypothesis=T["vision_msgs/msg/ObjectHypothesis"](class_id=c, score=s),
        pose=T["geometry_msgs/msg/PoseWithCovariance"](
            pose=T["geometry_msgs/msg/Pose"](position=T["geometry_msgs/msg/Point"](x=0.0, y=0.0, z=0.0),
                                             orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0)),
            covariance=np.zeros(36))) for c, s in hypotheses]
    box = T["vision_msgs/msg/BoundingBox2D"](
        center=T["vision_msgs/msg/Pose2D"](position=T["vision_msgs/msg/Point2D"](x=cx, y=cy), theta=0.0),
        size_x=w, size_y=h)
    return T["vision_msgs/msg/Detection2D"](header=header(ns), results=results, bbox=box, id=track)


def box_of(k):
    """Frame k's detection on /cam: centre, size (moves right each frame)."""
    return 10.0 + 5 * k, 20.0, 8.0, 6.0


def write_bag(folder, storage):
    with Writer(folder, version=9, storage_plugin=storage) as writer:
        image = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=TS)
        ours = writer.add_connection(DETECTIONS, "vision_msgs/msg/Detection2DArray", typestore=TS)
        other = writer.add_connection(OTHER, "vision_msgs/msg/Detection2DArray", typestore=TS)
        for k in range(N):
            ns = START_NS + k * STEP_NS
            img = T["sensor_msgs/msg/Image"](header=header(ns), height=H, width=W, encoding="mono8", is_bigendian=0,
                                             step=W, data=np.full(W * H, k, dtype=np.uint8))
            writer.write(image, ns, bytes(TS.serialize_cdr(img, "sensor_msgs/msg/Image")))
            cx, cy, w, h = box_of(k)
            dets = T["vision_msgs/msg/Detection2DArray"](
                header=header(ns), detections=[detection(ns, cx, cy, w, h, [("2", 0.4), ("5", 0.9)], "7")])
            # Logged 40 ms after its image, 10 ms before the next one: only the stamp matches it rightly.
            writer.write(ours, ns + 40_000_000, bytes(TS.serialize_cdr(dets, "vision_msgs/msg/Detection2DArray")))
            far = T["vision_msgs/msg/Detection2DArray"](
                header=header(ns), detections=[detection(ns, 40.0, 30.0, 4.0, 4.0, [("person", 0.5)], "a")] * 2)
            writer.write(other, ns + 10_000_000, bytes(TS.serialize_cdr(far, "vision_msgs/msg/Detection2DArray")))
    (bag_file,) = Path(folder).glob("*.mcap" if storage == StoragePlugin.MCAP else "*.db3")
    return bag_file


STORAGES = pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3], ids=["mcap", "sqlite3"])


@STORAGES
def test_detections_in_the_namespace_land_on_their_frames(tmp_path, storage):
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    bag_file = write_bag(tmp_path / "bag", storage)
    for path in (bag_file, tmp_path / "bag"):
        with handoff.open(str(path), topic=TOPIC) as src:
            seen = 0
            for k, (frame, overlays) in enumerate(src):
                assert np.from_dlpack(frame)[0, 0] == k
                cx, cy, w, h = box_of(k)
                np.testing.assert_allclose(overlays.boxes, [[cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]])
                assert list(overlays.class_ids) == [5]  # the best hypothesis
                np.testing.assert_allclose(overlays.scores, [0.9], rtol=1e-6)
                assert list(overlays.track_ids) == [7]
                seen += 1
            assert seen == N


@STORAGES
def test_overlay_topics_pick_another_topic(tmp_path, storage):
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    bag_file = write_bag(tmp_path / "bag", storage)
    with handoff.open(str(bag_file), topic=TOPIC, overlay_topics=[OTHER]) as src:
        for frame, overlays in src:
            np.testing.assert_allclose(overlays.boxes, [[38, 28, 42, 32]] * 2)
            assert list(overlays.labels) == ["person #a"] * 2
    with pytest.raises(Exception, match="overlay_topic.*no vision_msgs/msg/Detection2DArray"):
        handoff.open(str(bag_file), topic=TOPIC, overlay_topics=[TOPIC])


@STORAGES
def test_an_unknown_overlay_topic_without_a_topic_is_its_own_error(tmp_path, storage, capfd):
    """The image topic is fine: no warning that it "is not shown" and another plays (the same one, named
    again), only the overlay topic's error."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    bag_file = write_bag(tmp_path / "bag", storage)
    with pytest.raises(Exception, match="overlay_topic.*no vision_msgs/msg/Detection2DArray"):
        handoff.open(str(bag_file), overlay_topics=["/x"])
    assert "is not shown" not in capfd.readouterr().err


@STORAGES
def test_the_listing_names_detection_topics_as_overlays(tmp_path, storage):
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    topics = {t["topic"]: t for t in handoff.list_topics(str(write_bag(tmp_path / "bag", storage)))}
    assert (topics[TOPIC]["shown"], topics[TOPIC]["messages"]) == ("image", N)
    for name in (DETECTIONS, OTHER):
        assert (topics[name]["shown"], topics[name]["note"]) == ("overlay", "detections"), topics[name]


def test_handoff_view_draws_the_picked_topic(tmp_path):
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    from mcap.reader import make_reader

    bag_file = write_bag(tmp_path / "bag", StoragePlugin.SQLITE3)
    out = tmp_path / "replayed.mcap"
    r = subprocess.run([view, "--headless", str(bag_file), "--overlay-topic", OTHER, "--record", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    from foxglove_schemas_protobuf.ImageAnnotations_pb2 import ImageAnnotations

    boxes = []
    with open(out, "rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if schema and schema.name == "foxglove.ImageAnnotations":
                msg = ImageAnnotations.FromString(message.data)
                boxes += [sorted((p.x, p.y) for p in a.points) for a in msg.points if len(a.points) == 4]
    assert boxes, r.stderr
    for b in boxes:
        assert b == [(38, 28), (38, 32), (42, 28), (42, 32)]
    # A video file that is there (a missing one is said to be missing, whatever its name).
    clip = tmp_path / "clip.y4m"
    clip.write_bytes(b"YUV4MPEG2 W4 H2 F30:1 C420jpeg\nFRAME\n" + bytes([0x80]) * 12)
    r = subprocess.run([view, "--headless", str(clip), "--overlay-topic", OTHER],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--overlay-topic" in r.stderr, r.stderr




def test_handoff_view_draws_the_picked_topic_on_every_tile_of_a_grid(tmp_path):
    """--overlay-topic with --topic twice: the picked detections (a box around (40, 30)) are drawn on both
    cameras' tiles of the composed --output, not the first tile only."""
    view = os.environ.get("HANDOFF_VIEW_EXE", "")
    if not view or not Path(view).is_file():
        pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
    from PIL import Image

    second = "/cam2/image_raw"
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        images = [writer.add_connection(t, "sensor_msgs/msg/Image", typestore=TS) for t in (TOPIC, second)]
        other = writer.add_connection(OTHER, "vision_msgs/msg/Detection2DArray", typestore=TS)
        for k in range(N):
            ns = START_NS + k * STEP_NS
            img = T["sensor_msgs/msg/Image"](header=header(ns), height=H, width=W, encoding="mono8", is_bigendian=0,
                                             step=W, data=np.full(W * H, 100, dtype=np.uint8))
            for c in images:
                writer.write(c, ns, bytes(TS.serialize_cdr(img, "sensor_msgs/msg/Image")))
            far = T["vision_msgs/msg/Detection2DArray"](
                header=header(ns), detections=[detection(ns, 40.0, 30.0, 8.0, 8.0, [("person", 0.5)], "a")])
            writer.write(other, ns + 10_000_000, bytes(TS.serialize_cdr(far, "vision_msgs/msg/Detection2DArray")))
    out = tmp_path / "png"
    r = subprocess.run([view, "--headless", "--fast", str(tmp_path / "bag"), "--topic", TOPIC, "--topic", second,
                        "--overlay-topic", OTHER, "--window", "640x240", "--output", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    pngs = sorted(out.glob("frame_*.png"))
    assert len(pngs) == N, r.stderr
    img = np.asarray(Image.open(pngs[-1]).convert("RGB"), dtype=np.int16)
    assert img.shape == (H, 2 * W, 3), img.shape
    for tile in range(2):
        cell = img[:, tile * W:(tile + 1) * W]
        assert np.abs(cell[5, 5] - 100).max() <= 1, (tile, cell[5, 5])  # the frame itself, away from the box
        assert np.abs(cell[30, 36] - 100).max() > 30, (tile, cell[30, 36])  # the box's left side (x = 36)


@STORAGES
def test_foxglove_image_annotations_in_the_namespace_land_on_their_frames(tmp_path, storage):
    """A foxglove_msgs/msg/ImageAnnotations topic (/cam/annotations) beside the image: each frame's
    LINE_LOOP rectangle (matched by the stamp of its points) becomes that frame's box, its text a label."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    ts = foxglove_typestore()
    t = ts.types

    def point(x, y):
        return t["foxglove_msgs/msg/Point2"](x=float(x), y=float(y))

    def colour(r, g, b, a=1.0):
        return t["foxglove_msgs/msg/Color"](r=r, g=g, b=b, a=a)

    def stamp(ns):
        return t["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)

    with Writer(tmp_path / "bag", version=9, storage_plugin=storage) as writer:
        image = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=ts)
        notes = writer.add_connection("/cam/annotations", "foxglove_msgs/msg/ImageAnnotations", typestore=ts)
        for k in range(N):
            ns = START_NS + k * STEP_NS
            img = t["sensor_msgs/msg/Image"](header=header(ns), height=H, width=W, encoding="mono8", is_bigendian=0,
                                             step=W, data=np.full(W * H, k, dtype=np.uint8))
            writer.write(image, ns, bytes(ts.serialize_cdr(img, "sensor_msgs/msg/Image")))
            x0 = 4 + 6 * k
            rect = t["foxglove_msgs/msg/PointsAnnotation"](
                timestamp=stamp(ns), type=2, points=[point(x0, 10), point(x0 + 12, 10), point(x0 + 12, 18),
                                                     point(x0, 18)],
                outline_color=colour(0.0, 1.0, 0.0), outline_colors=[], fill_color=colour(0, 0, 0, 0), thickness=2.0)
            label = t["foxglove_msgs/msg/TextAnnotation"](
                timestamp=stamp(ns), position=point(x0, 30), text=f"thing {k}", font_size=10.0,
                text_color=colour(1.0, 1.0, 1.0), background_color=colour(0.0, 0.0, 0.0))
            msg = t["foxglove_msgs/msg/ImageAnnotations"](circles=[], points=[rect], texts=[label])
            # Logged later than its image: the stamp, not the log time, matches it.
            writer.write(notes, ns + 30_000_000,
                         bytes(ts.serialize_cdr(msg, "foxglove_msgs/msg/ImageAnnotations")))
    with handoff.open(str(tmp_path / "bag"), topic=TOPIC) as src:
        seen = 0
        for k, (frame, overlays) in enumerate(src):
            assert np.from_dlpack(frame)[0, 0] == k
            x0 = 4 + 6 * k
            np.testing.assert_allclose(overlays.boxes, [[x0, 10, x0 + 12, 18]])
            seen += 1
        assert seen == N
    topics = {row["topic"]: row for row in handoff.list_topics(str(tmp_path / "bag"))}
    assert topics["/cam/annotations"]["shown"] == "overlay", topics["/cam/annotations"]


@STORAGES
def test_texts_only_image_annotations_are_matched_by_their_text_stamp(tmp_path, storage):
    """An ImageAnnotations holding only texts is keyed by its first text's stamp (as the protobuf
    message is): each image is stamped 35 ms before it was logged, its label logged 20 ms after it,
    so only the stamp puts the label on its frame."""
    handoff = pytest.importorskip("handoff", reason="the handoff module is not on PYTHONPATH")
    ts = foxglove_typestore()
    t = ts.types
    white = t["foxglove_msgs/msg/Color"](r=1.0, g=1.0, b=1.0, a=1.0)
    with Writer(tmp_path / "bag", version=9, storage_plugin=storage) as writer:
        image = writer.add_connection(TOPIC, "sensor_msgs/msg/Image", typestore=ts)
        notes = writer.add_connection("/cam/annotations", "foxglove_msgs/msg/ImageAnnotations", typestore=ts)
        for k in range(N):
            log = START_NS + k * STEP_NS
            stamped = log - 35_000_000
            img = t["sensor_msgs/msg/Image"](header=header(stamped), height=H, width=W, encoding="mono8",
                                             is_bigendian=0, step=W, data=np.full(W * H, k, dtype=np.uint8))
            writer.write(image, log, bytes(ts.serialize_cdr(img, "sensor_msgs/msg/Image")))
            label = t["foxglove_msgs/msg/TextAnnotation"](
                timestamp=t["builtin_interfaces/msg/Time"](sec=stamped // 10**9, nanosec=stamped % 10**9),
                position=t["foxglove_msgs/msg/Point2"](x=2.0, y=10.0), text=f"frame {k}", font_size=8.0,
                text_color=white, background_color=white)
            msg = t["foxglove_msgs/msg/ImageAnnotations"](circles=[], points=[], texts=[label])
            writer.write(notes, log + 20_000_000, bytes(ts.serialize_cdr(msg, "foxglove_msgs/msg/ImageAnnotations")))
    with handoff.open(str(tmp_path / "bag"), topic=TOPIC) as src:
        texts = [overlays.texts for _, overlays in src]
        assert texts == [1] * N
        assert not src.warnings
