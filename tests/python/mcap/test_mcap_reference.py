"""Recordings against the reference MCAP packages, both ways.

- handoff writes (handoff_mcap_tool, from a Y4M file and a JSON Lines overlay
  file); the `mcap` package with `mcap-protobuf-support` reads it, checking
  CRCs; every message decodes, with the embedded schema and with
  `foxglove-schemas-protobuf`'s published classes; pixels and annotations
  equal what was written.
- The reference packages write (RawImage nv12 + ImageAnnotations); handoff
  reads it (handoff_mcap_tool dump) with the right pixels and overlays.

HANDOFF_MCAP_TOOL names the tool (ctest sets it).
"""

import json
import math
import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from foxglove_schemas_protobuf.CircleAnnotation_pb2 import CircleAnnotation
from foxglove_schemas_protobuf.Color_pb2 import Color
from foxglove_schemas_protobuf.ImageAnnotations_pb2 import ImageAnnotations
from foxglove_schemas_protobuf.Point2_pb2 import Point2
from foxglove_schemas_protobuf.PointsAnnotation_pb2 import PointsAnnotation
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from foxglove_schemas_protobuf.TextAnnotation_pb2 import TextAnnotation
from google.protobuf import json_format
from mcap.reader import NonSeekingReader, make_reader
from mcap.writer import CompressionType, IndexType
from mcap.writer import Writer as McapWriter
from mcap_protobuf.decoder import DecoderFactory
from mcap_protobuf.schema import register_schema
from mcap_protobuf.writer import Writer as ProtobufWriter

TOOL = os.environ.get("HANDOFF_MCAP_TOOL", "")
if not TOOL or not Path(TOOL).is_file():
    pytest.fail("HANDOFF_MCAP_TOOL must name the built handoff_mcap_tool (ctest sets it)", pytrace=False)

START_NS, STEP_NS = 1_700_000_000_000_000_000, 40_000_000


def same(published, decoded):
    """The published class and the class built from the file's schema read the same values."""
    return json_format.MessageToDict(published) == json_format.MessageToDict(decoded)


def tool(*args):
    r = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


# --- Inputs ---------------------------------------------------------------------------


def planes(i, w, h, ten):
    """Planar Y, U, V for frame i (values different per plane, frame and position)."""
    m = 1024 if ten else 256
    y, x = np.mgrid[0:h, 0:w]
    luma = (3 * x + 7 * y + 11 * i) % m
    ch, cw = (h + 1) // 2, (w + 1) // 2
    y, x = np.mgrid[0:ch, 0:cw]
    u = (100 + 5 * x + 2 * y + 3 * i) % m
    v = (200 + x + 13 * y + 7 * i) % m
    return luma, u, v


def write_y4m(path, w, h, n, ten):
    tags = "C420p10" if ten else "C420mpeg2"
    dtype = "<u2" if ten else "u1"
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F25:1 Ip A1:1 {tags} XCOLORRANGE=FULL XCOLORMATRIX=BT2020\n".encode())
        for i in range(n):
            f.write(b"FRAME\n")
            for p in planes(i, w, h, ten):
                f.write(p.astype(dtype).tobytes())


def expected_rawimage_data(i, w, h, ten):
    """handoff's nv12 / p010 layout: step = the chroma row; H luma rows, then ceil(H/2) chroma rows."""
    bps = 2 if ten else 1
    luma, u, v = planes(i, w, h, ten)
    cw = (w + 1) // 2
    step = 2 * cw * bps
    shift = 6 if ten else 0
    dtype = "<u2" if ten else "u1"
    rows = []
    for r in luma:
        row = np.zeros(2 * cw, np.int64)
        row[:w] = r
        rows.append((row << shift).astype(dtype).tobytes())
    for ur, vr in zip(u, v):
        rows.append((np.stack([ur, vr], axis=-1).reshape(-1) << shift).astype(dtype).tobytes())
    return step, b"".join(rows)


OVERLAYS = [
    {"frame": 0, "box_format": "xyxy", "objects": [
        {"box": [10.5, 4, 30, 20], "label": "car", "score": 0.75, "class_id": 3, "track_id": 12, "color": [255, 0, 0]},
        {"box": [2, 2, 8, 9], "label": "person", "keypoints": [[3, 3, 0.5], [4, 5]], "skeleton": [[0, 1]],
         "polygon": [[2, 2], [8, 2], [5, 9]]}],
     "polylines": [[[0, 0], [5, 5], [10, 0]]],
     "texts": [{"text": "hello", "pos": [1, 2]}]},
    {"frame": 2, "box_format": "xyxy", "objects": [{"box": [1, 1, 5, 5], "track_id": 4}]},
]


def f32(v):
    return float(np.float32(v))


def expected_annotations(line):
    """What handoff writes for one overlay line (docs/recording.md): per object its box
    (LINE_LOOP), keypoints (POINTS), skeleton (LINE_LIST), shapes; then free shapes; label
    and free texts. Properties are metadata on the object's first annotation."""
    points, texts = [], []
    for i, o in enumerate(line.get("objects", [])):
        x0, y0, x1, y1 = map(f32, o["box"])
        props = {"handoff.kind": "box", "handoff.object": str(i)}
        if "score" in o:
            props["handoff.score"] = repr(f32(o["score"])).rstrip("0").rstrip(".")
        if "class_id" in o:
            props["handoff.class_id"] = str(o["class_id"])
        if "track_id" in o:
            props["handoff.track_id"] = str(o["track_id"])
        if "color" in o:
            props["handoff.color"] = "explicit"
        points.append((PointsAnnotation.LINE_LOOP, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)], props))
        kps = o.get("keypoints", [])
        if kps:
            meta = {"handoff.kind": "keypoints", "handoff.object": str(i)}
            confs = [k[2] if len(k) > 2 else 1.0 for k in kps]
            if any(c != 1.0 for c in confs):
                meta["handoff.confidences"] = " ".join(f"{c:g}" for c in confs)
            points.append((PointsAnnotation.POINTS, [(f32(k[0]), f32(k[1])) for k in kps], meta))
        if o.get("skeleton"):
            pts = [(f32(kps[j][0]), f32(kps[j][1])) for e in o["skeleton"] for j in e]
            meta = {"handoff.kind": "skeleton", "handoff.object": str(i),
                    "handoff.edges": " ".join(f"{a}-{b}" for a, b in o["skeleton"])}
            points.append((PointsAnnotation.LINE_LIST, pts, meta))
        if "polygon" in o:
            points.append((PointsAnnotation.LINE_LOOP, [tuple(map(f32, p)) for p in o["polygon"]],
                           {"handoff.kind": "polygon", "handoff.object": str(i)}))
        if o.get("label"):  # a label's baseline is its box's top edge
            texts.append((o["label"], x0, lambda font, y=y0: y, {"handoff.kind": "label", "handoff.object": str(i)}))
    for pl in line.get("polylines", []):
        points.append((PointsAnnotation.LINE_STRIP, [tuple(map(f32, p)) for p in pl], {"handoff.kind": "polyline"}))
    for t in line.get("texts", []):  # the top-left corner becomes Foxglove's bottom-left origin
        x, y = map(f32, t["pos"])
        texts.append((t["text"], x, lambda font, y=y: y + font, {"handoff.kind": "text"}))
    return points, texts


# --- handoff writes, the reference packages read ---------------------------------------


@pytest.mark.parametrize("compression", ["none", "zstd", "lz4"])
@pytest.mark.parametrize("fmt,w,h", [("nv12", 40, 24), ("nv12", 7, 5), ("p010", 10, 6)])
def test_reference_reader_decodes_handoff_recordings(tmp_path, compression, fmt, w, h):
    n = 3
    ten = fmt == "p010"
    write_y4m(tmp_path / "in.y4m", w, h, n, ten)
    with open(tmp_path / "overlays.jsonl", "w") as f:
        for line in OVERLAYS:
            f.write(json.dumps(line) + "\n")
    out = tmp_path / "rec.mcap"
    tool("write", out, "--y4m", tmp_path / "in.y4m", "--overlays", tmp_path / "overlays.jsonl",
         "--compression", compression, "--chunk-size", 700, "--start-ns", START_NS, "--step-ns", STEP_NS)

    images, annotations = [], {}
    with open(out, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
        summary = reader.get_summary()
        assert summary.statistics.message_count == n + len(OVERLAYS)
        assert summary.chunk_indexes, "the summary indexes the chunks"
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            assert schema.encoding == "protobuf" and channel.message_encoding == "protobuf"
            assert message.publish_time == message.log_time
            if channel.topic == "/camera":
                assert schema.name == "foxglove.RawImage"
                assert channel.metadata == {"handoff.color_matrix": "bt2020", "handoff.color_range": "full",
                                            "handoff.chroma_siting": "left"}
                # The published class reads the same bytes the same way.
                assert same(RawImage.FromString(message.data), decoded)
                images.append((message, decoded))
            else:
                assert channel.topic == "/camera/annotations" and schema.name == "foxglove.ImageAnnotations"
                assert same(ImageAnnotations.FromString(message.data), decoded)
                annotations[message.log_time] = decoded
    # The data section CRC, which only a sequential read checks.
    with open(out, "rb") as f:
        assert sum(1 for _ in NonSeekingReader(f, validate_crcs=True).iter_messages()) == n + len(OVERLAYS)

    assert len(images) == n
    for i, (message, img) in enumerate(images):
        t = START_NS + i * STEP_NS
        assert message.log_time == t and message.sequence == i
        assert img.timestamp.ToNanoseconds() == t
        assert (img.width, img.height, img.encoding) == (w, h, fmt)
        step, data = expected_rawimage_data(i, w, h, ten)
        assert img.step == step
        assert img.data == data, f"frame {i} pixels"

    for line in OVERLAYS:
        t = START_NS + line["frame"] * STEP_NS
        a = annotations[t]
        assert a.timestamp.ToNanoseconds() == t
        points, texts = expected_annotations(line)
        assert len(a.points) == len(points)
        for got, (kind, pts, meta) in zip(a.points, points):
            assert got.type == kind
            assert [(p.x, p.y) for p in got.points] == pts
            assert {kv.key: kv.value for kv in got.metadata} == meta
            assert got.timestamp.ToNanoseconds() == t
        if "color" in line["objects"][0]:
            c = a.points[0].outline_color
            assert (c.r, c.g, c.b, c.a) == (1, 0, 0, 1)
        assert len(a.texts) == len(texts)
        for got, (text, x, y, meta) in zip(a.texts, texts):
            assert got.text == text
            assert (got.position.x, got.position.y) == (x, y(got.font_size))
            assert {kv.key: kv.value for kv in got.metadata} == meta
    assert (START_NS + STEP_NS) not in annotations  # frame 1 has no overlays: no message


# --- The reference packages write, handoff reads ------------------------------------


def foreign_image(i, w=6, h=4, step=8):
    luma, u, v = planes(i, w, h, False)
    rows = [np.pad(r, (0, step - w)).astype("u1").tobytes() for r in luma]
    rows += [np.pad(np.stack([ur, vr], -1).reshape(-1), (0, step - w)).astype("u1").tobytes() for ur, vr in zip(u, v)]
    return RawImage(width=w, height=h, step=step, encoding="nv12", data=b"".join(rows))


def foreign_annotations():
    a = ImageAnnotations()
    red = Color(r=1, g=0, b=0, a=1)
    a.points.add(type=PointsAnnotation.LINE_LOOP, outline_color=red, thickness=2,
                 points=[Point2(x=1, y=1), Point2(x=5, y=1), Point2(x=5, y=3), Point2(x=1, y=3)])
    a.points.add(type=PointsAnnotation.POINTS, outline_color=Color(g=1, a=1),
                 points=[Point2(x=2, y=2), Point2(x=3.5, y=2.25)])
    a.points.add(type=PointsAnnotation.LINE_STRIP, points=[Point2(x=0, y=0), Point2(x=5, y=3), Point2(x=1, y=2)])
    a.points.add(type=PointsAnnotation.LINE_LIST, outline_color=red,
                 points=[Point2(x=0, y=0), Point2(x=1, y=1), Point2(x=2, y=2), Point2(x=3, y=3)])
    a.circles.add(position=Point2(x=3, y=2), diameter=2)
    a.texts.add(position=Point2(x=1, y=3.5), text="plate", font_size=1.5, text_color=Color(b=1, a=1))
    return a


def check_foreign_overlays(ov):
    boxes = [o for o in ov["objects"] if o["box"]]
    assert len(boxes) == 1
    assert boxes[0]["box"] == [1, 1, 5, 3] and boxes[0]["color"] == [255, 0, 0, 255]
    assert boxes[0]["score"] is None and boxes[0]["class_id"] == -1 and boxes[0]["label"] == ""
    points, skeleton = [o for o in ov["objects"] if not o["box"]]
    assert points["keypoints"] == [[2, 2, 1], [3.5, 2.25, 1]] and points["color"] == [0, 255, 0, 255]
    assert skeleton["keypoints"] == [[0, 0, 1], [1, 1, 1], [2, 2, 1], [3, 3, 1]]
    assert skeleton["skeleton"] == [[0, 1], [2, 3]]
    polyline, circle = ov["shapes"]
    assert polyline == {"closed": False, "points": [[0, 0], [5, 3], [1, 2]]}
    assert circle["closed"] and len(circle["points"]) == 32
    for x, y in circle["points"]:
        assert math.isclose(math.hypot(x - 3, y - 2), 1, rel_tol=1e-5)
    assert ov["texts"] == [{"text": "plate", "pos": [1, 2], "color": [0, 0, 255, 255]}]


def check_dump(d, n, topic="/cam"):
    rec = json.loads((d / "recording.json").read_text())
    assert (rec["format"], rec["width"], rec["height"], rec["frame_count"]) == ("nv12", 6, 4, n)
    assert rec["topic"] == topic and rec["annotations_topic"] == topic + "/annotations"
    # No colorimetry in the file: the defaults (BT.601 for SD, limited range, siting left).
    assert (rec["matrix"], rec["range"], rec["siting"]) == ("bt601", "limited", "left")
    for i, frame in enumerate(rec["frames"]):
        assert frame["log_time"] == 1000 + 10 * i
        luma, u, v = planes(i, 6, 4, False)
        want = luma.astype("u1").tobytes() + np.stack([u, v], -1).astype("u1").tobytes()
        assert (d / f"frame_{i:06d}.yuv").read_bytes() == want, f"frame {i} pixels"
        if i % 2 == 0:
            check_foreign_overlays(frame["overlays"])
        else:
            assert frame["overlays"] is None
    return rec


def write_foreign(path, n, **kwargs):
    with open(path, "wb") as f:
        w = ProtobufWriter(f, **kwargs)
        for i in range(n):
            t = 1000 + 10 * i
            img = foreign_image(i)
            img.timestamp.FromNanoseconds(t)
            w.write_message("/cam", img, log_time=t, publish_time=t, sequence=i)
            if i % 2 == 0:
                w.write_message("/cam/annotations", foreign_annotations(), log_time=t, publish_time=t)
        w.finish()


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.ZSTD, CompressionType.LZ4])
def test_handoff_reads_reference_recordings(tmp_path, compression):
    n = 5
    write_foreign(tmp_path / "ref.mcap", n, compression=compression, chunk_size=300)
    tool("dump", tmp_path / "ref.mcap", tmp_path / "dump")
    rec = check_dump(tmp_path / "dump", n)
    assert rec["indexed"] and rec["warnings"] == 0


@pytest.mark.parametrize("chunked", [True, False])
def test_handoff_reads_reference_files_it_must_scan(tmp_path, chunked):
    """Without chunks (no index) or without message indexes, handoff scans; data CRCs on."""
    n = 4
    with open(tmp_path / "ref.mcap", "wb") as f:
        w = McapWriter(f, use_chunking=chunked, index_types=IndexType.NONE, enable_data_crcs=True,
                       compression=CompressionType.ZSTD)
        w.start(profile="", library="test")
        image_schema = register_schema(w, RawImage)
        ann_schema = register_schema(w, ImageAnnotations)
        cam = w.register_channel("/cam", "protobuf", image_schema)
        ann = w.register_channel("/cam/annotations", "protobuf", ann_schema)
        for i in range(n):
            t = 1000 + 10 * i
            w.add_message(cam, t, foreign_image(i).SerializeToString(), t, sequence=i)
            if i % 2 == 0:
                w.add_message(ann, t, foreign_annotations().SerializeToString(), t)
        w.finish()
    tool("dump", tmp_path / "ref.mcap", tmp_path / "dump")
    rec = check_dump(tmp_path / "dump", n)
    assert not rec["indexed"] and rec["warnings"] == 0


def test_handoff_plays_a_reference_recording_cut_short(tmp_path):
    n = 6
    write_foreign(tmp_path / "ref.mcap", n, compression=CompressionType.LZ4, chunk_size=1)
    data = (tmp_path / "ref.mcap").read_bytes()
    # Cut inside the last image's chunk: find the chunk records (opcode 0x06) by walking the file.
    chunks, at = [], 8
    while at + 9 <= len(data):
        op, length = data[at], struct.unpack_from("<Q", data, at + 1)[0]
        if op == 0x06:
            chunks.append(at)
        if op == 0x0F:
            break
        at += 9 + length
    (tmp_path / "cut.mcap").write_bytes(data[: chunks[-1] + 20])
    tool("dump", tmp_path / "cut.mcap", tmp_path / "dump")
    rec = json.loads((tmp_path / "dump" / "recording.json").read_text())
    assert rec["frame_count"] == n - 1 and rec["warnings"] == 1 and not rec["indexed"]


def test_handoff_picks_an_image_topic_by_name(tmp_path):
    with open(tmp_path / "two.mcap", "wb") as f:
        w = ProtobufWriter(f)
        for i in range(2):
            t = 1000 + 10 * i
            w.write_message("/left", foreign_image(i + 50), log_time=t, publish_time=t)
            w.write_message("/cam", foreign_image(i), log_time=t, publish_time=t)
        w.write_message("/cam/annotations", foreign_annotations(), log_time=1000, publish_time=1000)
        w.finish()
    tool("dump", tmp_path / "two.mcap", tmp_path / "dump", "--topic", "/cam")
    check_dump(tmp_path / "dump", 2)
    r = subprocess.run([TOOL, "dump", tmp_path / "two.mcap", tmp_path / "d2", "--topic", "/nope"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert 'no image topic "/nope" (image topics: /left, /cam)' in r.stderr
