"""handoff-view's recordings (--record) against the reference MCAP packages.

- handoff-view plays a Y4M file with a JSON Lines overlay file and records what
  it shows; the `mcap` package (CRCs checked) with `mcap-protobuf-support` and
  `foxglove-schemas-protobuf` reads it: every message decodes, the pixels are
  the file's frames byte for byte, the annotations are the overlay lines.
- A recording the reference packages wrote plays in handoff-view, which records
  what it showed: the same pixels and boxes come back.

HANDOFF_VIEW_EXE names handoff-view (ctest sets it where the viewer is built).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from foxglove_schemas_protobuf.ImageAnnotations_pb2 import ImageAnnotations
from foxglove_schemas_protobuf.PointsAnnotation_pb2 import PointsAnnotation
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from mcap.reader import NonSeekingReader, make_reader
from mcap_protobuf.decoder import DecoderFactory

from test_mcap_reference import OVERLAYS, expected_annotations, expected_rawimage_data, same, write_foreign, write_y4m

VIEW = os.environ.get("HANDOFF_VIEW_EXE", "")
if not VIEW or not Path(VIEW).is_file():
    pytest.skip("handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)", allow_module_level=True)

TOPIC = "/handoff/view"


def view(*args):
    r = subprocess.run([VIEW, "--headless", "--gl-debug", *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"recorded (\d+) frames to .* \((\d+) displayed frames left out", r.stderr)
    assert m, r.stderr
    return int(m.group(1)), int(m.group(2))


def read(path):
    """(images, annotations by log time), every message decoded and checked against the published classes."""
    images, annotations = [], {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            assert schema.encoding == "protobuf" and channel.message_encoding == "protobuf"
            if channel.topic == TOPIC:
                assert schema.name == "foxglove.RawImage"
                assert same(RawImage.FromString(message.data), decoded)
                assert decoded.timestamp.ToNanoseconds() == message.log_time
                images.append((message, channel, decoded))
            else:
                assert channel.topic == TOPIC + "/annotations" and schema.name == "foxglove.ImageAnnotations"
                assert same(ImageAnnotations.FromString(message.data), decoded)
                annotations[message.log_time] = decoded
    with open(path, "rb") as f:  # the data section CRC, which only a sequential read checks
        assert sum(1 for _ in NonSeekingReader(f, validate_crcs=True).iter_messages()) == len(images) + len(annotations)
    return images, annotations


def match_frames(images, expected):
    """Each recorded image is the next expected frame with these bytes; returns their indices."""
    found, j = [], 0
    for message, _, img in images:
        while j < len(expected) and (img.step, img.data) != expected[j]:
            j += 1
        assert j < len(expected), f"recorded image at {message.log_time} is no later frame"
        found.append(j)
        j += 1
    return found


def test_reference_reader_decodes_what_handoff_view_recorded(tmp_path):
    w, h, n = 64, 48, 6
    write_y4m(tmp_path / "in.y4m", w, h, n, False)
    (tmp_path / "overlays.jsonl").write_text("".join(json.dumps(line) + "\n" for line in OVERLAYS))
    out = tmp_path / "view.mcap"
    recorded, left_out = view(tmp_path / "in.y4m", "--overlays", tmp_path / "overlays.jsonl", "--record", out)
    assert recorded + left_out == n and recorded > 0

    images, annotations = read(out)
    assert len(images) == recorded
    for _, channel, img in images:
        assert (img.width, img.height, img.encoding) == (w, h, "nv12")
        assert channel.metadata == {"handoff.color_matrix": "bt2020", "handoff.color_range": "full",
                                    "handoff.chroma_siting": "left"}
    frames = match_frames(images, [expected_rawimage_data(i, w, h, False) for i in range(n)])
    by_frame = {i: message.log_time for i, (message, _, _) in zip(frames, images)}
    with_overlays = {line["frame"] for line in OVERLAYS}
    for line in OVERLAYS:
        if line["frame"] not in by_frame:
            continue  # left out of the recording (counted above)
        a = annotations[by_frame[line["frame"]]]
        points, texts = expected_annotations(line)
        assert [(p.type, [(q.x, q.y) for q in p.points]) for p in a.points] == [(k, pts) for k, pts, _ in points]
        assert [{kv.key: kv.value for kv in p.metadata} for p in a.points] == [meta for _, _, meta in points]
        assert [t.text for t in a.texts] == [t[0] for t in texts]
    for i, t in by_frame.items():
        if i not in with_overlays:
            assert t not in annotations, f"frame {i} has no overlays: no annotation message"


def test_handoff_view_plays_reference_recordings(tmp_path):
    n = 5
    write_foreign(tmp_path / "ref.mcap", n, chunk_size=300)
    out = tmp_path / "replayed.mcap"
    recorded, left_out = view(tmp_path / "ref.mcap", "--topic", "/cam", "--record", out)
    assert recorded + left_out == n and recorded > 0
    images, annotations = read(out)
    frames = match_frames(images, [expected_rawimage_data(i, 6, 4, False) for i in range(n)])
    for i, (message, _, img) in zip(frames, images):
        assert (img.width, img.height, img.encoding) == (6, 4, "nv12")
        if i % 2:
            assert message.log_time not in annotations
            continue
        a = annotations[message.log_time]  # the reference file's box, as handoff-view showed it
        box = a.points[0]
        assert box.type == PointsAnnotation.LINE_LOOP
        assert [(p.x, p.y) for p in box.points] == [(1, 1), (5, 1), (5, 3), (1, 3)]
        assert "plate" in [t.text for t in a.texts]
