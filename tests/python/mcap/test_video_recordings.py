"""handoff's compressed recordings (codec / record_codec "h264", "h265": foxglove.CompressedVideo)
read by independent clients: the `mcap` + `mcap-protobuf-support` readers and PyAV (FFmpeg)
decoding the messages' access units. Frame count, order, times and pixels within 12 codes of
what was written (compression error); record_codec on Viewer and Publisher; bad values."""
import math
import os
import sys

import av
import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory

import handoff

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
from viewer_helpers import viewer  # noqa: E402

T0 = 1_700_000_000_000_000_000
W, H = 192, 128
FRAME_NS = 33_333_333


def smooth_nv12(i):
    """A moving smooth picture (what a camera sees, not noise): luma and chroma gradients."""
    y, x = np.mgrid[0:H, 0:W].astype(np.float64)
    luma = 128 + 70 * np.sin(x / 25 + i / 4) * np.cos(y / 31) + 20 * np.sin((x + y) / 50)
    cy, cx = np.mgrid[0:H // 2, 0:W // 2].astype(np.float64)
    u = 128 + 40 * np.sin(cx / 13 - i / 6)
    v = 128 + 40 * np.cos(cy / 11 + i / 5)
    chroma = np.stack([u, v], axis=-1)  # (H/2, W/2, 2)
    return np.round(luma).astype(np.uint8), np.round(chroma).astype(np.uint8)


def video_messages(path, topic="/cam"):
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        out = []
        for schema, channel, message, proto in reader.iter_decoded_messages(topics=[topic]):
            assert schema.name == "foxglove.CompressedVideo" and schema.encoding == "protobuf"
            out.append((message, proto))
        return out


def decode(messages, codec):
    """Each message's access unit through PyAV, one picture per message, as (Y, U, V) planes."""
    ctx = av.CodecContext.create("h264" if codec == "h264" else "hevc", "r")
    planes = []
    for _, proto in messages:
        frames = ctx.decode(av.Packet(proto.data))
        for fr in frames:
            assert fr.pict_type != av.video.frame.PictureType.B  # no B-frames
            planes.append(yuv_planes(fr))
    for fr in ctx.decode(None):
        planes.append(yuv_planes(fr))
    return planes


def yuv_planes(fr):
    assert fr.format.name == "yuv420p"
    def plane(k, w, h):
        p = fr.planes[k]
        a = np.frombuffer(memoryview(p), np.uint8).reshape(-1, p.line_size)
        return a[:h, :w]
    return plane(0, fr.width, fr.height), plane(1, fr.width // 2, fr.height // 2), plane(2, fr.width // 2, fr.height // 2)


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_recording_writer_video_decodes_in_pyav(tmp_path, codec):
    path = tmp_path / f"{codec}.mcap"
    n = 40
    with handoff.RecordingWriter(path, codec=codec, topic="/cam") as rec:
        for i in range(n):
            boxes = [[10 + i, 20, 30, 40]] if i % 5 == 0 else None
            assert rec.write(smooth_nv12(i), format="nv12", log_time=T0 + i * FRAME_NS, boxes=boxes)
    assert rec.stats.frames_written == n and rec.stats.frames_dropped == 0
    messages = video_messages(path)
    assert len(messages) == n
    for i, (m, proto) in enumerate(messages):
        assert m.log_time == T0 + i * FRAME_NS
        assert proto.format == codec
        assert proto.timestamp.ToNanoseconds() == m.log_time
    decoded = decode(messages, codec)
    assert len(decoded) == n
    worst = 0
    for i, (y, u, v) in enumerate(decoded):
        luma, chroma = smooth_nv12(i)
        worst = max(worst, int(np.abs(y.astype(int) - luma).max()),
                    int(np.abs(u.astype(int) - chroma[..., 0]).max()),
                    int(np.abs(v.astype(int) - chroma[..., 1]).max()))
    print(codec, 'largest error', worst)
    assert worst <= 12, worst
    # The annotations are as for raw recordings.
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        ann = list(reader.iter_decoded_messages(topics=["/cam/annotations"]))
    assert len(ann) == n // 5


def test_viewer_record_codec_h264(tmp_path):
    path = tmp_path / "view.mcap"
    with viewer(record=str(path), record_codec="h264") as v:
        for i in range(6):
            v.show(smooth_nv12(i), format="nv12")
            v.snapshot()
        v.close()
        recorded = v.stats.recorded
        assert v.diagnostics["record_errors"] == []
    assert recorded >= 1
    messages = video_messages(path, "/handoff/view")
    assert len(messages) == recorded
    assert len(decode(messages, "h264")) == recorded


def test_publisher_record_codec_h265(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    path = tmp_path / "pub.mcap"
    with handoff.Publisher("venc", record=path, record_codec="h265") as pub:
        for i in range(5):
            pub.publish(smooth_nv12(i), format="nv12")
        recorded = pub.stats.recorded
    messages = video_messages(path, "/venc")
    assert len(messages) == recorded >= 1
    assert len(decode(messages, "h265")) == len(messages)


@pytest.mark.parametrize("make, text", [
    (lambda p: handoff.RecordingWriter(p, codec="vp9"), "codec"),
    (lambda p: handoff.Viewer(headless=True, record_codec="h264"), "record_codec"),
    (lambda p: handoff.Viewer(headless=True, record=str(p), record_codec="av1"), "record_codec"),
])
def test_bad_codec_values(tmp_path, make, text):
    with pytest.raises(ValueError, match=text):
        make(tmp_path / "x.mcap")


def test_frames_h264_cannot_hold(tmp_path):
    with handoff.RecordingWriter(tmp_path / "odd.mcap", codec="h264") as rec:
        with pytest.raises(ValueError, match="even width and height"):
            rec.write(np.zeros((5, 6), np.uint8), format="gray8")


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_handoff_plays_its_own_compressed_recordings(tmp_path, codec):
    """The round trip inside handoff: RecordingWriter(codec=...) then handoff.open, every frame
    within 12 codes of what was written, its overlays matched, and a seek back decoding from
    the keyframe before it."""
    path = tmp_path / f"{codec}.mcap"
    n = 40
    with handoff.RecordingWriter(path, codec=codec, topic="/cam") as rec:
        for i in range(n):
            assert rec.write(smooth_nv12(i), format="nv12", log_time=T0 + i * FRAME_NS, boxes=[[10 + i, 20, 30, 40]])

    def check(src, i):
        assert src.position == i
        frame, overlays = src.read()
        luma, chroma = smooth_nv12(i)
        got_luma = np.from_dlpack(frame.luma).astype(int)
        got_chroma = np.from_dlpack(frame.chroma).astype(int)
        assert max(np.abs(got_luma - luma).max(), np.abs(got_chroma - chroma).max()) <= 12, f"frame {i}"
        np.testing.assert_allclose(overlays.boxes, [[10 + i, 20, 40 + i, 60]])

    src = handoff.open(path)
    assert (len(src), src.format, src.width, src.height) == (n, "nv12", W, H)
    for i in range(n):
        check(src, i)
    assert src.read() is None
    for i in (37, 5, 31, 30, 0):
        src.seek(i)
        check(src, i)


@pytest.mark.parametrize("codec", ["h264", "h265"])
def test_a_time_going_backwards_keeps_the_video_in_order(tmp_path, codec):
    """Frames 10-14 given times just after frame 5's (a wall clock stepped back): readers decode a video
    topic in log-time order, so handoff logs them at the previous frame's time (their publish_time keeps
    the time given) and every frame decodes as written. Before, frames 6-10 decoded to wrong pixels and
    8 of 20 were lost."""
    path = tmp_path / f"{codec}.mcap"
    times = [T0 + i * FRAME_NS for i in range(20)]
    for i in range(10, 15):
        times[i] = T0 + 5 * FRAME_NS + (i - 9) * 1000
    with handoff.RecordingWriter(path, codec=codec, topic="/cam") as rec:
        for i, t in enumerate(times):
            assert rec.write(smooth_nv12(i), format="nv12", log_time=t, publish_time=t)
    messages = video_messages(path)
    assert len(messages) == 20
    logged = [m.log_time for m, _ in messages]
    assert logged == sorted(logged)
    assert [m.publish_time for m, _ in messages] == times  # written order, times as given
    src = handoff.open(path)
    for i in range(20):
        frame, _ = src.read()
        luma, _ = smooth_nv12(i)
        assert np.abs(np.from_dlpack(frame.luma).astype(int) - luma).max() <= 12, f"frame {i}"
