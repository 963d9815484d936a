"""MCAP recordings from Python: handoff.RecordingWriter, record= on handoff.Viewer and
handoff.Publisher, and handoff.open of a .mcap yielding the frames and overlays that were
written (pixels byte for byte, log times, colorimetry, topics); a file cut short plays up to its
last whole frame; bad arguments and bad files are errors naming what is wrong. The reference
`mcap` packages read these files in tests/python/mcap/test_python_recordings.py."""
import os
import struct
import sys
import time

import lz4.frame
import numpy as np
import pytest
import zstandard

import handoff

sys.path.insert(0, os.path.dirname(__file__))
from viewer_helpers import expected_pattern  # noqa: E402
from live_helpers import live_dir  # noqa: E402,F401
from viewer_helpers import viewer  # noqa: E402

T0 = 1_700_000_000_000_000_000


def pattern_frame(w, h, fmt, seed, colorimetry=None):
    f = handoff.Frame.allocate(w, h, fmt, colorimetry=colorimetry)
    f.fill_test_pattern(seed)
    return f


def assert_frame(frame, fmt, seed):
    want_luma, want_chroma = expected_pattern(frame.width, frame.height, fmt, seed)
    np.testing.assert_array_equal(np.from_dlpack(frame.luma), want_luma)
    np.testing.assert_array_equal(np.from_dlpack(frame.chroma), want_chroma)


def boxes_for(i):
    return [[i, 1, 4, 3], [2, 2 + i, 5, 1]]  # xywh


def chunk_offsets(data):
    """The byte offsets of the Chunk records (opcode 0x06), walking the records after the magic."""
    found, at = [], 8
    while at + 9 <= len(data):
        op, length = data[at], struct.unpack_from("<Q", data, at + 1)[0]
        if op == 0x06:
            found.append(at)
        if op == 0x0F:  # DataEnd
            break
        at += 9 + length
    return found


@pytest.mark.parametrize("compression", ["zstd", "lz4", "none"])
@pytest.mark.parametrize("fmt,w,h", [("nv12", 40, 24), ("nv12", 7, 5), ("p010", 10, 6)])
def test_writer_and_open_round_trip(tmp_path, compression, fmt, w, h):
    path = tmp_path / "rec.mcap"
    c = handoff.Colorimetry("bt2020", "full", "center")
    n = 4
    with handoff.RecordingWriter(path, compression=compression, topic="/cam") as rec:
        for i in range(n):
            kw = {} if i == 2 else dict(boxes=boxes_for(i), labels=[f"a{i}", None], scores=[0.25, 0.75],
                                        class_ids=[i, 3], track_ids=[7, -1])
            assert rec.write(pattern_frame(w, h, fmt, i, c), log_time=T0 + i * 40_000_000, **kw)
        assert rec.topic == "/cam" and rec.path == str(path)
    assert rec.stats.frames_written == n and rec.stats.frames_dropped == 0
    assert rec.stats.bytes_written == path.stat().st_size

    src = handoff.open(path)
    assert (len(src), src.format, src.width, src.height) == (n, fmt, w, h)
    assert src.topic == "/cam" and src.topics == [("/cam", n)] and src.warnings == []
    for i, (frame, ov) in enumerate(src):
        assert frame.index == i and frame.colorimetry == c
        assert_frame(frame, fmt, i)
        assert src.log_time(i) == T0 + i * 40_000_000
        assert frame.timestamp == pytest.approx((T0 + i * 40_000_000) * 1e-9)
        if i == 2:
            assert len(ov) == 0
            continue
        b = np.array(boxes_for(i), float)
        np.testing.assert_allclose(ov.boxes, np.c_[b[:, :2], b[:, :2] + b[:, 2:]])
        assert ov.labels == [f"a{i}", None]
        np.testing.assert_allclose(ov.scores, [0.25, 0.75])
        assert ov.class_ids.tolist() == [i, 3] and ov.track_ids.tolist() == [7, -1]
    src.seek(1)
    frame, _ = src.read()
    assert_frame(frame, fmt, 1)


def test_writer_takes_what_viewer_show_takes(tmp_path):
    path = tmp_path / "arrays.mcap"
    luma, chroma = expected_pattern(16, 10, "nv12", 5)
    stacked = np.concatenate([luma, chroma.reshape(5, 16)])
    with handoff.RecordingWriter(path, compression="none") as rec:
        rec.write((luma, chroma), log_time=10)
        rec.write(stacked, format="nv12", log_time=20, overlays=handoff.Overlays.from_arrays(boxes=[[1, 1, 2, 2]]))
        rec.write((luma, chroma), log_time=30, topic="/other")
    src = handoff.open(path)
    assert src.topic == "/handoff" and len(src) == 2
    assert sorted(src.topics) == [("/handoff", 2), ("/other", 1)]
    for frame, _ in src:
        assert_frame(frame, "nv12", 5)
    assert len(handoff.open(path, topic="/other")) == 1


def test_default_log_times_increase(tmp_path):
    path = tmp_path / "clock.mcap"
    before = time.time_ns()
    with handoff.RecordingWriter(path) as rec:
        for i in range(5):
            rec.write(pattern_frame(8, 4, "nv12", i))
    after = time.time_ns()
    src = handoff.open(path)
    times = [src.log_time(i) for i in range(len(src))]
    assert len(times) == 5 and all(a < b for a, b in zip(times, times[1:]))
    # The wall clock read while writing: no earlier than before the first
    # write, no later than after the last (plus one ns per write where the
    # clock had not moved and the writer stepped past the previous time).
    assert before <= times[0] and times[-1] <= after + len(times), (before, times, after)


def test_viewer_records_what_it_shows(tmp_path):
    path = tmp_path / "view.mcap"
    shown = []
    with viewer(record=str(path), record_topic="/shown", record_compression="lz4") as v:
        for i in range(4):
            v.show(pattern_frame(32, 16, "nv12", 10 + i), boxes=[[i, 1, 6, 4]], labels=[f"v{i}"])
            v.snapshot()  # drawn before the next one comes
            shown.append(10 + i)
        v.close()
        recorded = v.stats.recorded
        assert v.diagnostics["record_errors"] == []
    assert recorded >= 1
    src = handoff.open(path)
    assert src.topic == "/shown" and len(src) == recorded
    at = 0
    for frame, ov in src:  # each recorded frame is the next shown one, with its overlays
        luma = np.from_dlpack(frame.luma)
        while at < len(shown) and not np.array_equal(luma, expected_pattern(32, 16, "nv12", shown[at])[0]):
            at += 1
        assert at < len(shown), "a recorded frame that was not shown"
        assert_frame(frame, "nv12", shown[at])
        assert ov.labels == [f"v{at}"]
        np.testing.assert_allclose(ov.boxes, [[at, 1, at + 6, 5]])
        at += 1


@pytest.mark.parametrize("fmt", ["rgb8", "bgra8", "gray8", "gray16", "gray32f", "uyvy"])
def test_viewer_records_frames_of_every_format(tmp_path, fmt):
    path = tmp_path / f"{fmt}.mcap"
    shown = [pattern_frame(21, 11, fmt, seed) for seed in (3, 4)]
    with viewer(record=str(path)) as v:
        for f in shown:
            v.show(f)
            v.snapshot()
        v.close()
        s = v.stats
        assert v.diagnostics["record_errors"] == []
    assert s.record_skipped == 0 and s.recorded + s.record_dropped == 2 and s.recorded >= 1
    src = handoff.open(path)
    assert src.format == fmt and len(src) == s.recorded
    want = [np.from_dlpack(f.planes[0]) for f in shown]
    for frame, _ in src:
        got = np.from_dlpack(frame.planes[0])
        assert any(np.array_equal(got, w) for w in want), "a recorded frame that was not shown"


def test_viewer_recording_skips_and_counts_frames_of_another_format(tmp_path):
    path = tmp_path / "mixed.mcap"
    with viewer(record=str(path)) as v:
        for fmt in ("nv12", "rgb8", "nv12"):
            v.show(pattern_frame(16, 8, fmt, 1))
            v.snapshot()
        v.close()
        s = v.stats
    assert s.record_skipped == 1 and s.recorded + s.record_dropped == 2
    assert handoff.open(path).format == "nv12"


def test_publisher_records_every_frame_it_publishes(tmp_path, live_dir):
    path = tmp_path / "pub.mcap"
    with handoff.Publisher("rec0", record=path, record_compression="none") as pub:
        for i in range(5):
            assert pub.publish(pattern_frame(24, 12, "p010", i), index=i, boxes=[[i, 0, 2, 2]])
        s = pub.stats
    assert s.published == 5 and s.record_error == ""
    assert s.recorded + s.record_dropped == 5 and s.recorded >= 1
    src = handoff.open(path)
    assert src.topic == "/rec0" and len(src) == s.recorded
    seeds = []
    for frame, ov in src:
        seed = int(ov.boxes[0, 0])
        assert_frame(frame, "p010", seed)
        seeds.append(seed)
    assert seeds == sorted(seeds)


def test_a_topic_holds_one_format_and_size(tmp_path, live_dir):
    """Readers refuse a topic's frames of another format or size than its first: RecordingWriter.write
    refuses them (ValueError naming both, nothing written), a recording Publisher leaves them out and counts
    them in record_skipped (it recorded them and counted them as recorded), as a recording viewer does."""
    path = tmp_path / "w.mcap"
    with handoff.RecordingWriter(path) as rec:
        rec.write(pattern_frame(24, 16, "rgb8", 1))
        for other in (pattern_frame(8, 8, "rgb8", 2), pattern_frame(24, 16, "gray8", 3)):
            with pytest.raises(ValueError, match="/handoff holds rgb8 24x16 frames .its first frame's.; this one is"):
                rec.write(other)
        rec.write(pattern_frame(8, 8, "rgb8", 4), topic="/small")  # another topic: its own first frame
    assert len(handoff.open(path, topic="/handoff")) == 1 and len(handoff.open(path, topic="/small")) == 1
    pub_path = tmp_path / "pub.mcap"
    with handoff.Publisher("shapes", record=pub_path, record_compression="none") as pub:
        for fmt, w, h in (("rgb8", 24, 16), ("rgb8", 24, 16), ("rgb8", 8, 8), ("gray8", 8, 8), ("rgb8", 24, 16)):
            assert pub.publish(pattern_frame(w, h, fmt, 1))
        s = pub.stats
    assert s.record_skipped == 2 and s.record_error == ""
    assert s.recorded + s.record_dropped == 3
    src = handoff.open(pub_path)
    assert (src.format, src.width, src.height, len(src)) == ("rgb8", 24, 16, s.recorded)
    want = np.from_dlpack(pattern_frame(24, 16, "rgb8", 1).pixels)
    for frame, _ in src:
        np.testing.assert_array_equal(np.from_dlpack(frame.pixels), want)


def test_a_frame_larger_than_a_chunk_readers_accept_is_refused(tmp_path):
    """What handoff writes, handoff reads: readers refuse a chunk over 1 GiB, so RecordingWriter.write refuses a
    frame whose message no such chunk holds (gray8 32768x32768, the largest size there is) up front, naming its
    size and the limit, and the topic takes no shape from it. (np.zeros maps no memory and nothing reads it.)"""
    path = tmp_path / "max.mcap"
    with handoff.RecordingWriter(path) as rec:
        with pytest.raises(ValueError, match=r"frame: a gray8 32768x32768 frame's foxglove.RawImage is a message of "
                                             r"1073741888 bytes; a recording holds messages of at most 1072693248 bytes"):
            rec.write(np.zeros((32768, 32768), np.uint8))
        rec.write(pattern_frame(8, 4, "gray8", 1))
    assert [(t["topic"], t["messages"]) for t in handoff.list_topics(path)] == [("/handoff", 1)]
    assert len(handoff.open(path)) == 1


def test_a_truncated_recording_plays_up_to_its_last_whole_frame(tmp_path):
    path = tmp_path / "whole.mcap"
    n = 6
    with handoff.RecordingWriter(path, compression="none", chunk_size=1) as rec:  # a chunk per message
        for i in range(n):
            rec.write(pattern_frame(20, 10, "nv12", i), log_time=T0 + i)
    data = path.read_bytes()
    chunks = chunk_offsets(data)
    # The chunk holding frame k (uncompressed: its luma rows are in the file as they are).
    frame_chunk = [max(c for c in chunks if c < data.find(expected_pattern(20, 10, "nv12", k)[0].tobytes()))
                   for k in range(n)]
    assert frame_chunk == sorted(set(frame_chunk)), "one chunk per frame, in order"
    for k in (1, 3, n - 1):
        cut = tmp_path / f"cut{k}.mcap"
        cut.write_bytes(data[: frame_chunk[k] + 30])  # inside frame k's chunk: frames 0 .. k-1 are whole
        src = handoff.open(cut)
        assert len(src) == k, f"cut inside frame {k}'s chunk"
        assert len(src.warnings) == 1, src.warnings
        for i, (frame, _) in enumerate(src):
            assert_frame(frame, "nv12", i)
    cut = tmp_path / "nofooter.mcap"
    cut.write_bytes(data[: len(data) - 40])  # the footer gone, every frame whole
    assert len(handoff.open(cut)) == n


def decodable_messages(data, chunk_at, cut, compression):
    """The whole Message records in what the compressed records of the Chunk at `chunk_at` that lie
    before `cut` decode to, worked out with python-zstandard's / python-lz4's streaming decoders."""
    content = chunk_at + 9
    records_at = content + 8 + 8 + 8 + 4 + 4 + struct.unpack_from("<I", data, content + 28)[0] + 8
    present = data[records_at:cut]
    if compression == "zstd":
        decoded = zstandard.ZstdDecompressor().decompressobj().decompress(present)
    else:
        decoded = lz4.frame.LZ4FrameDecompressor().decompress(present)
    n, at = 0, 0
    while at + 9 <= len(decoded):
        op, length = decoded[at], struct.unpack_from("<Q", decoded, at + 1)[0]
        if at + 9 + length > len(decoded):
            break
        n += op == 0x05
        at += 9 + length
    return n


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_a_recording_cut_inside_a_compressed_chunk_plays_its_whole_frames(tmp_path, compression):
    """Issue 22: 12 frames in one compressed chunk, the file cut at 60% (and elsewhere): every frame
    wholly in what the blocks written decode to plays, pixel-equal to the uncut file's frames."""
    w, h, n = 320, 180, 12
    rng = np.random.default_rng(22)  # noise: compressed, the chunk is most of the file
    planes = [(rng.integers(0, 256, (h, w), np.uint8), rng.integers(0, 256, (h // 2, w // 2, 2), np.uint8))
              for _ in range(n)]
    path = tmp_path / "rec.mcap"
    with handoff.RecordingWriter(path, compression=compression) as rec:
        for i, frame in enumerate(planes):
            rec.write(frame, log_time=T0 + i * 40_000_000)
    data = path.read_bytes()
    chunks = chunk_offsets(data)
    assert len(chunks) == 1, "every frame in one chunk, as in the issue"
    chunk_end = chunks[0] + 9 + struct.unpack_from("<Q", data, chunks[0] + 1)[0]
    for at in (0.6, 0.3, 0.45, 0.75, 0.9):
        cut = int(len(data) * at)
        assert chunks[0] + 60 < cut < chunk_end
        want = decodable_messages(data, chunks[0], cut, compression)
        assert 0 < want < n, f"cut at {at}: {want} whole frames decode"
        path_cut = tmp_path / f"cut{at}.mcap"
        path_cut.write_bytes(data[:cut])
        src = handoff.open(path_cut)
        assert len(src) == want, f"cut at {at}"
        assert len(src.warnings) == 1 and f"the {want} messages wholly in them are kept" in src.warnings[0]
        for i, (frame, _) in enumerate(src):
            np.testing.assert_array_equal(np.from_dlpack(frame.luma), planes[i][0])
            np.testing.assert_array_equal(np.from_dlpack(frame.chroma), planes[i][1])


def test_chunks_hold_about_one_second_unless_told_otherwise(tmp_path):
    """30 frames 100 ms apart (2.9 s): 3 chunks by default, 1 with chunk_duration_ns=0, 5 with 500 ms."""
    for duration, chunks in ((None, 3), (0, 1), (500_000_000, 5)):
        path = tmp_path / f"d{duration}.mcap"
        kw = {} if duration is None else dict(chunk_duration_ns=duration)
        with handoff.RecordingWriter(path, **kw) as rec:
            for i in range(30):
                rec.write(pattern_frame(8, 4, "nv12", i), log_time=T0 + i * 100_000_000)
        assert len(chunk_offsets(path.read_bytes())) == chunks, f"chunk_duration_ns={duration}"
        assert len(handoff.open(path)) == 30


def test_bad_arguments_and_files_name_what_is_wrong(tmp_path):
    good = tmp_path / "good.mcap"
    with handoff.RecordingWriter(good) as rec:
        rec.write(pattern_frame(8, 4, "nv12", 0))
        with pytest.raises(ValueError, match="topic"):
            rec.write(pattern_frame(8, 4, "nv12", 0), topic="")
        with pytest.raises(ValueError, match="log_time"):
            rec.write(pattern_frame(8, 4, "nv12", 0), log_time=-1)
        with pytest.raises(TypeError, match="frame"):
            rec.write(3.5)
        with pytest.raises(ValueError, match="scores"):
            rec.write(pattern_frame(8, 4, "nv12", 0), boxes=[[0, 0, 1, 1]], scores=[1, 2])
    with pytest.raises(ValueError, match="closed"):
        rec.write(pattern_frame(8, 4, "nv12", 0))
    rec.close()  # idempotent
    for make, error, field in [
        (lambda: handoff.RecordingWriter(tmp_path / "x.mcap", compression="bz2"), ValueError, "compression"),
        (lambda: handoff.RecordingWriter(3), TypeError, "path"),
        (lambda: handoff.RecordingWriter(tmp_path / "x.mcap", topic=""), ValueError, "topic"),
        (lambda: handoff.RecordingWriter(tmp_path / "no" / "such" / "x.mcap"), RuntimeError, "x.mcap"),
        (lambda: handoff.open(good, width=8), ValueError, "MCAP"),
        (lambda: handoff.open(good, topic=""), ValueError, "topic"),
        (lambda: handoff.open(good, topic="/nope"), handoff.ParseError, "/nope"),
        (lambda: handoff.Viewer(headless=True, record_compression="lz4"), ValueError, "record_compression"),
        (lambda: handoff.Viewer(headless=True, record=str(good), record_topic=""), ValueError, "record_topic"),
    ]:
        with pytest.raises(error, match=field):
            make()
    y4m = tmp_path / "clip.y4m"
    y4m.write_bytes(b"YUV4MPEG2 W4 H2 F25:1 C420mpeg2\nFRAME\n" + bytes(12))
    with pytest.raises(ValueError, match="topic"):
        handoff.open(y4m, topic="/cam")
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"\x89MCAX0\r\n" + bytes(64))
    with pytest.raises(handoff.ParseError, match="bad.mcap"):
        handoff.open(bad)


def test_open_topics_plays_several_topics_on_one_timeline(tmp_path):
    path = tmp_path / "two.mcap"
    # /a every 10 ns, /b every 15 ns from 5: interleaved, with equal times at 20 and 50.
    a_times, b_times = [10, 20, 30, 40, 50], [5, 20, 35, 50]
    with handoff.RecordingWriter(path, compression="none") as rec:
        writes = [(t, "/a", i) for i, t in enumerate(a_times)] + [(t, "/b", i) for i, t in enumerate(b_times)]
        for t, topic, i in sorted(writes):
            seed = i if topic == "/a" else 100 + i
            rec.write(pattern_frame(16, 8, "nv12", seed), topic=topic, log_time=t, boxes=boxes_for(i))
        rec.write(pattern_frame(8, 4, "nv12", 7), topic="/c", log_time=60)
    with handoff.open_topics(path, ["/b", "/a"]) as tl:
        assert tl.topics == ["/b", "/a"] and len(tl) == 9 and tl.warnings == []
        got = [(topic, tl.sources[topic].log_time(frame.index), frame, overlays) for topic, frame, overlays in tl]
        # Log-time order; equal times in the order the topics were given.
        assert [(topic, t) for topic, t, _, _ in got] == [
            ("/b", 5), ("/a", 10), ("/b", 20), ("/a", 20), ("/a", 30), ("/b", 35), ("/a", 40), ("/b", 50), ("/a", 50)]
        counts = {"/a": 0, "/b": 0}
        for topic, _, frame, overlays in got:
            i = counts[topic]
            counts[topic] += 1
            assert_frame(frame, "nv12", i if topic == "/a" else 100 + i)
            assert len(overlays) == 2
        # Iterating again starts over.
        assert [topic for topic, _, _ in tl][:2] == ["/b", "/a"]
    # Every image topic by default, in list_topics' order.
    with handoff.open_topics(path) as tl:
        assert sorted(tl.topics) == ["/a", "/b", "/c"] and len(tl) == 10
        assert [topic for topic, _, _ in tl][-1] == "/c"
    assert handoff.open_topics(path, "/c").topics == ["/c"]


def merge_mcap(out, inputs):
    """The messages of `inputs` in one MCAP file (by log time), their schemas and channels by topic, written
    by the `mcap` package."""
    from mcap.reader import make_reader
    from mcap.writer import Writer
    messages, channels = [], {}
    for path in inputs:
        with open(path, "rb") as f:
            for schema, channel, message in make_reader(f).iter_messages():
                channels.setdefault(channel.topic, (schema, channel))
                messages.append((message.log_time, channel.topic, message))
    with open(out, "wb") as f:
        w = Writer(f)
        w.start()
        ids = {}
        for topic, (schema, channel) in channels.items():
            sid = w.register_schema(schema.name, schema.encoding, schema.data)
            ids[topic] = w.register_channel(topic, channel.message_encoding, sid, dict(channel.metadata))
        for log_time, topic, m in sorted(messages, key=lambda x: x[0]):
            w.add_message(ids[topic], log_time, m.data, m.publish_time, m.sequence)
        w.finish()


def test_open_topics_raises_a_malformed_frame_once_and_loses_no_frame(tmp_path):
    """/a's frame at t=30 is of another size than its stream: next() yields every frame logged before it (the
    /b frame at 25 included), raises once naming it, in its turn, and then goes on with both topics."""
    good, odd, path = tmp_path / "good.mcap", tmp_path / "odd.mcap", tmp_path / "bad.mcap"
    # handoff's writer refuses a frame of another size on a topic: the odd one is written alone, then
    # merged in with the `mcap` package (an independent writer), as another tool could have.
    with handoff.RecordingWriter(good, compression="none") as rec:
        for t, topic, i in sorted([(10, "/a", 0), (20, "/a", 1), (40, "/a", 3),
                                   (15, "/b", 0), (25, "/b", 1), (45, "/b", 2)]):
            rec.write(pattern_frame(16, 8, "nv12", i), topic=topic, log_time=t)
    with handoff.RecordingWriter(odd, compression="none") as rec:
        rec.write(pattern_frame(8, 4, "nv12", 2), topic="/a", log_time=30)
    merge_mcap(path, [good, odd])
    got, errors = [], []
    with handoff.open_topics(path, ["/a", "/b"]) as tl:
        it = iter(tl)
        while True:
            try:
                topic, frame, _ = next(it)
            except StopIteration:
                break
            except handoff.ParseError as e:
                errors.append(str(e))
                got.append("error")
                continue
            got.append((topic, tl.sources[topic].log_time(frame.index)))
    assert len(errors) == 1 and 'topic "/a", frame 2' in errors[0] and "RawImage.width" in errors[0], errors
    assert got == [("/a", 10), ("/b", 15), ("/a", 20), ("/b", 25), "error", ("/a", 40), ("/b", 45)]


def test_list_topics_of_many_topics_gives_each_its_own_counts_annotations_and_layers(tmp_path):
    """A recording of 300 camera topics (1 to 3 frames each; the even ones with boxes and a layer), written
    interleaved: each topic is listed with its own count, its annotations and its layer as its overlays."""
    path = tmp_path / "many.mcap"
    n = 300
    layer = handoff.ScalarMap(np.zeros((2, 2), np.float32))
    with handoff.RecordingWriter(path, compression="none") as rec:
        for k in range(3):
            for i in range(n):
                if k <= i % 3:
                    extra = {"boxes": [[0, 0, 2, 2]], "layers": [layer]} if i % 2 == 0 else {}
                    rec.write(pattern_frame(8, 4, "gray8", i), topic=f"/cam{i}", log_time=T0 + k * n + i, **extra)
    listed = {t["topic"]: t for t in handoff.list_topics(path)}
    assert len(listed) == n + 2 * (n // 2)
    for i in range(n):
        cam = listed[f"/cam{i}"]
        assert (cam["shown"], cam["messages"]) == ("image", i % 3 + 1), cam
        if i % 2 == 0:
            assert (listed[f"/cam{i}/annotations"]["shown"], listed[f"/cam{i}/annotations"]["messages"]) == \
                ("overlay", i % 3 + 1)
            assert (listed[f"/cam{i}/layers/0"]["shown"], listed[f"/cam{i}/layers/0"]["note"]) == \
                ("overlay", f"layer of /cam{i}")


def test_open_topics_opens_at_most_max_topics(tmp_path):
    """A Timeline holds at most Timeline.max_topics topics (16, the tiles a viewer shows side by side; each
    opens the file): more named is a ValueError naming the limit; by default the first 16 listed play, with a
    warning naming the others."""
    assert handoff.Timeline.max_topics == 16
    path = tmp_path / "many.mcap"
    names = [f"/cam{i:02d}" for i in range(18)]
    with handoff.RecordingWriter(path, compression="none") as rec:
        for i, topic in enumerate(names):
            rec.write(pattern_frame(8, 4, "nv12", i), topic=topic, log_time=T0 + i)
    with pytest.raises(ValueError, match="open_topics: 17 topics; a Timeline plays at most 16"):
        handoff.open_topics(path, names[:17])
    with pytest.warns(UserWarning, match=r"18 image topics; playing the first 16, leaving out /cam16, /cam17 "
                                         r"\(name them in topics= to pick\)"):
        tl = handoff.open_topics(path)
    with tl:
        assert tl.topics == names[:16]
        assert [topic for topic, _, _ in tl] == names[:16]
    with handoff.open_topics(path, names[2:]) as tl:
        assert tl.topics == names[2:]


def test_open_topics_names_what_is_wrong(tmp_path):
    path = tmp_path / "one.mcap"
    with handoff.RecordingWriter(path) as rec:
        rec.write(pattern_frame(8, 4, "nv12", 1), topic="/a")
    with pytest.raises(ValueError, match="topics is empty"):
        handoff.open_topics(path, [])
    with pytest.raises(ValueError, match="names /a more than once"):
        handoff.open_topics(path, ["/a", "/a"])
    with pytest.raises(handoff.ParseError, match="/nope"):
        handoff.open_topics(path, ["/a", "/nope"])
    empty = tmp_path / "empty.mcap"
    with handoff.RecordingWriter(empty):
        pass
    with pytest.raises((ValueError, handoff.ParseError)):
        handoff.open_topics(empty)
