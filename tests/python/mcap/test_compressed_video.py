"""foxglove.CompressedVideo written by the reference packages, played by handoff (issue 24, section 2).

PyAV (`av`, its own FFmpeg build) encodes a moving pattern as H.264 (libx264) and H.265
(libx265): Annex B, no B-frames, a keyframe with its parameter sets every 10 frames, one access
unit per message, written with `mcap` + `mcap-protobuf-support` and Foxglove's published
CompressedVideo class. handoff.open plays them: every frame within 12 codes of the pattern
encoded, equal to PyAV's own decoding of the same packets, in order, after seeks and in steps
both ways; a corrupt access unit is an error naming the topic, the frame and the problem, and
playback goes on at the next keyframe, in handoff.open and in handoff-view (HANDOFF_VIEW_EXE),
whose recording of what it showed the `mcap` packages read back.
"""
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from foxglove_schemas_protobuf.CompressedVideo_pb2 import CompressedVideo
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory
from mcap_protobuf.writer import Writer as ProtobufWriter

import handoff
from video_pattern import GOP, H, N, W, encode, pattern  # noqa: F401

T0, STEP = 1_700_000_000_000_000_000, 33_333_333




def write(path, units, codec, topic="/cam/video"):
    with open(path, "wb") as f:
        w = ProtobufWriter(f)
        for i, unit in enumerate(units):
            m = CompressedVideo(frame_id="cam", data=unit, format=codec)
            m.timestamp.FromNanoseconds(T0 + i * STEP)
            w.write_message(topic, m, log_time=T0 + i * STEP, publish_time=T0 + i * STEP, sequence=i)
        w.finish()


def err(frame, planes):
    """Largest difference between handoff's NV12 frame and (Y, U, V) planes."""
    luma = np.from_dlpack(frame.luma).astype(int)
    chroma = np.from_dlpack(frame.chroma).astype(int)
    y, u, v = (p.astype(int) for p in planes)
    return max(np.abs(luma - y).max(), np.abs(chroma[..., 0] - u).max(), np.abs(chroma[..., 1] - v).max())


def check(src, i, reference):
    assert src.position == i
    frame, _ = src.read()
    e = err(frame, pattern(i))
    assert e <= 12, f"frame {i}: {e} codes from the pattern encoded"
    for j in (i - 1, i + 1):
        if 0 <= j < N:
            assert err(frame, pattern(j)) > e, f"frame {i} is nearer pattern {j}"
    assert err(frame, reference[i]) <= 1, f"frame {i} differs from PyAV's decoding"


@pytest.fixture(scope="module", params=["h264", "h265"])
def stream(request):
    return request.param, *encode(request.param)


def test_handoff_plays_pyav_video(tmp_path, stream):
    codec, units, reference = stream
    write(tmp_path / "v.mcap", units, codec)
    src = handoff.open(tmp_path / "v.mcap")
    assert (len(src), src.format, src.width, src.height, src.topic) == (N, "nv12", W, H, "/cam/video")
    for i in range(N):
        check(src, i, reference)
    assert src.read() is None
    assert [src.log_time(i) for i in (0, N - 1)] == [T0, T0 + (N - 1) * STEP]


def test_handoff_seeks_and_steps_both_ways(tmp_path, stream):
    codec, units, reference = stream
    write(tmp_path / "v.mcap", units, codec)
    src = handoff.open(tmp_path / "v.mcap")
    for i in [13, 12, 11, 10, 9, 24, 3, 19, 20, 21, 0, 15, 14]:
        src.seek(i)
        check(src, i, reference)


def test_corrupt_access_unit_is_named_and_playback_goes_on(tmp_path, stream):
    codec, units, reference = stream
    bad = bytearray(units[13])
    bad[3 if bad[2] == 1 else 4] |= 0x80  # the first NAL unit's forbidden_zero_bit
    units = units[:13] + [bytes(bad)] + units[14:]
    write(tmp_path / "bad.mcap", units, codec)
    src = handoff.open(tmp_path / "bad.mcap")
    src.seek(12)
    check(src, 12, reference)
    with pytest.raises(Exception, match=r'topic "/cam/video", frame 13.*forbidden_zero_bit.*'
                                        r"playback goes on at frame 20 \(the next keyframe\)"):
        src.read()
    assert src.position == 20
    check(src, 20, reference)


VIEW = os.environ.get("HANDOFF_VIEW_EXE", "")


def recorded_frames(path):
    """The NV12 frames of handoff-view's recording as (Y, U, V) planes, read by the `mcap` packages."""
    out = []
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
        for schema, channel, _, img in reader.iter_decoded_messages(topics=["/handoff/view"]):
            assert schema.name == "foxglove.RawImage" and img.encoding == "nv12" and (img.width, img.height) == (W, H)
            rows = np.frombuffer(img.data, np.uint8).reshape(-1, img.step)
            chroma = rows[H : H + H // 2, : W].reshape(H // 2, W // 2, 2)
            out.append((rows[:H, :W], chroma[..., 0], chroma[..., 1]))
    return out


@pytest.mark.skipif(not VIEW or not Path(VIEW).is_file(), reason="handoff-view is not part of this build (HANDOFF_VIEW_EXE unset)")
def test_handoff_view_plays_on_past_a_corrupt_access_unit(tmp_path, stream):
    """handoff-view shows every decodable frame: frames 13..19 (a corrupt unit and its group) are left out, named once;
    it exits 1 (the recording is malformed) after playing the rest."""
    codec, units, reference = stream
    bad = bytearray(units[13])
    bad[3 if bad[2] == 1 else 4] |= 0x80
    write(tmp_path / "bad.mcap", units[:13] + [bytes(bad)] + units[14:], codec)
    r = subprocess.run([VIEW, "--headless", tmp_path / "bad.mcap", "--record", tmp_path / "out.mcap"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert re.search(r'topic "/cam/video", frame 13: .*forbidden_zero_bit.*playback goes on at frame 20', r.stderr)
    assert "handoff-view: 1 malformed frame(s) skipped; the first: " in r.stderr
    shown = list(range(13)) + list(range(20, N))
    assert re.search(rf"handoff-view: {len(shown)} frames {W}x{H} nv12", r.stderr), r.stderr
    # The recorder may leave displayed frames out under load (it says how many); those it kept are
    # the frames shown, in order, each equal to PyAV's decoding of its access unit.
    m = re.search(r"recorded (\d+) frames to .* \((\d+) displayed frames left out", r.stderr)
    assert m and int(m.group(1)) + int(m.group(2)) == len(shown), r.stderr
    frames = recorded_frames(tmp_path / "out.mcap")
    assert len(frames) == int(m.group(1)) > 0
    at = 0
    for planes in frames:
        def diff(i):
            return max(np.abs(a.astype(int) - b.astype(int)).max() for a, b in zip(planes, reference[i]))
        while at < len(shown) and diff(shown[at]) > 1:
            at += 1
        assert at < len(shown), "a recorded frame is none of the frames expected, in order"
        at += 1
