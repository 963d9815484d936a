"""Recordings made from Python against the reference MCAP packages, both ways.

- handoff.RecordingWriter, handoff.Publisher(record=) and handoff.Viewer(record=) write; the
  `mcap` package (CRCs checked) with `mcap-protobuf-support` and `foxglove-schemas-protobuf`
  reads: every message decodes, the pixels are what was written byte for byte, boxes are
  LINE_LOOPs with their labels as texts.
- The reference packages write; handoff.open yields the same pixels and overlays, and a file the
  reference writer was cut short in plays up to its last whole frame.
"""
import os
import struct
import tempfile

import numpy as np
import pytest
from foxglove_schemas_protobuf.ImageAnnotations_pb2 import ImageAnnotations
from foxglove_schemas_protobuf.PointsAnnotation_pb2 import PointsAnnotation
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from mcap.reader import NonSeekingReader, make_reader
from mcap.writer import CompressionType
from mcap_protobuf.decoder import DecoderFactory

import handoff
from test_mcap_reference import expected_rawimage_data, planes, same, write_foreign

T0, STEP = 1_700_000_000_000_000_000, 40_000_000


def frame_planes(i, w, h, ten):
    """Frame i of test_mcap_reference.planes as (luma, chroma) NumPy planes for handoff."""
    luma, u, v = planes(i, w, h, ten)
    shift, dtype = (6, np.uint16) if ten else (0, np.uint8)
    return (luma << shift).astype(dtype), (np.stack([u, v], axis=-1) << shift).astype(dtype)


def read(path, topic):
    """(images, annotations by log time) on `topic`, every message checked against the published classes."""
    images, annotations = [], {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            if channel.topic == topic:
                assert schema.name == "foxglove.RawImage"
                assert same(RawImage.FromString(message.data), decoded)
                images.append((message, decoded))
            else:
                assert channel.topic == topic + "/annotations" and schema.name == "foxglove.ImageAnnotations"
                assert same(ImageAnnotations.FromString(message.data), decoded)
                annotations[message.log_time] = decoded
    with open(path, "rb") as f:
        assert sum(1 for _ in NonSeekingReader(f, validate_crcs=True).iter_messages()) == \
            len(images) + len(annotations)
    return images, annotations


def assert_box(annotations, box, label):
    """One LINE_LOOP with the xyxy box's corners, and its label as a text."""
    x0, y0, x1, y1 = box
    loops = [p for p in annotations.points if p.type == PointsAnnotation.LINE_LOOP]
    assert len(loops) == 1
    assert [(p.x, p.y) for p in loops[0].points] == [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    assert [t.text for t in annotations.texts] == [label]


@pytest.mark.parametrize("compression", ["none", "zstd", "lz4"])
@pytest.mark.parametrize("fmt,w,h", [("nv12", 40, 24), ("nv12", 7, 5), ("p010", 10, 6)])
def test_reference_reader_decodes_what_recording_writer_wrote(tmp_path, compression, fmt, w, h):
    ten = fmt == "p010"
    path = tmp_path / "w.mcap"
    with handoff.RecordingWriter(path, compression=compression, topic="/py", chunk_size=500) as rec:
        for i in range(3):
            rec.write(frame_planes(i, w, h, ten), log_time=T0 + i * STEP, boxes=[[1, 2, 3 + i, 4]],
                      box_format="xyxy", labels=[f"n{i}"])
    images, annotations = read(path, "/py")
    assert len(images) == 3 and len(annotations) == 3
    for i, (message, img) in enumerate(images):
        assert message.log_time == T0 + i * STEP and img.timestamp.ToNanoseconds() == message.log_time
        assert (img.width, img.height, img.encoding) == (w, h, fmt)
        step, data = expected_rawimage_data(i, w, h, ten)
        assert img.step == step and img.data == data, f"frame {i} pixels"
        assert_box(annotations[message.log_time], (1, 2, 3 + i, 4), f"n{i}")


def test_reference_reader_sees_chunks_of_at_most_one_second(tmp_path):
    """30 small frames 100 ms apart (2.9 s): far below the 4 MiB chunk size, yet the reference reader
    finds 3 chunks, each spanning at most 1 s of log time, and every frame in them."""
    path = tmp_path / "t.mcap"
    with handoff.RecordingWriter(path, topic="/py") as rec:
        for i in range(30):
            rec.write(frame_planes(i, 8, 4, False), log_time=T0 + i * 100_000_000)
    with open(path, "rb") as f:
        chunks = make_reader(f).get_summary().chunk_indexes
    assert [(c.message_start_time - T0, c.message_end_time - T0) for c in chunks] == \
        [(0, 1_000_000_000), (1_100_000_000, 2_100_000_000), (2_200_000_000, 2_900_000_000)]
    images, _ = read(path, "/py")
    assert [m.log_time for m, _ in images] == [T0 + i * 100_000_000 for i in range(30)]


def test_reference_reader_decodes_publisher_and_viewer_recordings(tmp_path):
    xdg = tempfile.mkdtemp(prefix="hrec")
    os.chmod(xdg, 0o700)
    os.environ["XDG_RUNTIME_DIR"] = xdg
    try:
        with handoff.Publisher("refpub", record=tmp_path / "pub.mcap") as pub:
            for i in range(3):
                pub.publish(frame_planes(i, 16, 8, False), boxes=[[0, 0, 2 + i, 2]], labels=["p"])
            recorded = pub.stats.recorded
    finally:
        os.rmdir(os.path.join(xdg, "handoff"))
        os.rmdir(xdg)
    images, annotations = read(tmp_path / "pub.mcap", "/refpub")
    assert len(images) == recorded >= 1
    expected = [expected_rawimage_data(i, 16, 8, False) for i in range(3)]
    for message, img in images:
        i = expected.index((img.step, img.data))  # one of the published frames, byte for byte
        assert_box(annotations[message.log_time], (0, 0, 2 + i, 2), "p")

    with handoff.Viewer(headless=True, width=320, height=240, record=str(tmp_path / "view.mcap")) as v:
        v.show(frame_planes(1, 16, 8, False), boxes=[[1, 1, 4, 4]], labels=["v"])
        v.snapshot()
        v.close()
        assert v.stats.recorded == 1
    images, annotations = read(tmp_path / "view.mcap", "/handoff/view")
    assert [(img.step, img.data) for _, img in images] == [expected[1]]
    assert_box(annotations[images[0][0].log_time], (1, 1, 5, 5), "v")


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.ZSTD, CompressionType.LZ4])
def test_handoff_open_reads_reference_recordings(tmp_path, compression):
    n = 5
    write_foreign(tmp_path / "ref.mcap", n, compression=compression, chunk_size=300)
    src = handoff.open(tmp_path / "ref.mcap")
    assert (len(src), src.format, src.width, src.height, src.topic) == (n, "nv12", 6, 4, "/cam")
    for i, (frame, ov) in enumerate(src):
        luma, u, v = planes(i, 6, 4, False)
        np.testing.assert_array_equal(np.from_dlpack(frame.luma), luma)
        np.testing.assert_array_equal(np.from_dlpack(frame.chroma), np.stack([u, v], -1))
        assert src.log_time(i) == 1000 + 10 * i
        if i % 2:
            assert len(ov) == 0
            continue
        boxed = ~np.isnan(ov.boxes[:, 0])
        np.testing.assert_allclose(ov.boxes[boxed], [[1, 1, 5, 3]])  # the axis-aligned LINE_LOOP
        assert sorted(ov.keypoint_counts.tolist()) == [0, 2, 4]  # POINTS, LINE_LIST (2 pairs)
        assert (ov.shapes, ov.texts) == (2, 1)  # the polyline and the circle; the text


def test_handoff_open_plays_a_reference_recording_cut_short(tmp_path):
    n = 6
    write_foreign(tmp_path / "ref.mcap", n, compression=CompressionType.LZ4, chunk_size=1)
    data = (tmp_path / "ref.mcap").read_bytes()
    chunks, at = [], 8
    while at + 9 <= len(data):
        op, length = data[at], struct.unpack_from("<Q", data, at + 1)[0]
        if op == 0x06:
            chunks.append(at)
        if op == 0x0F:
            break
        at += 9 + length
    (tmp_path / "cut.mcap").write_bytes(data[: chunks[-1] + 20])  # inside the last image's chunk
    src = handoff.open(tmp_path / "cut.mcap")
    assert len(src) == n - 1 and len(src.warnings) == 1
    for i, (frame, _) in enumerate(src):
        np.testing.assert_array_equal(np.from_dlpack(frame.luma), planes(i, 6, 4, False)[0])
