"""handoff.open (Y4M, raw NV12 / P010, JSON Lines overlays) and handoff.open_scene,
checked against the files parsed here independently; bad files refused with
ParseError naming the file."""
import pathlib

import numpy as np
import pytest

import handoff
from viewer_helpers import assert_no_gl_errors, viewer

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def parse_y4m(path):
    """Frames of an 8-bit 4:2:0 Y4M file as (luma, U, V) arrays."""
    data = path.read_bytes()
    header, rest = data.split(b"\n", 1)
    fields = {f[:1]: f[1:] for f in header.split()[1:]}
    w, h = int(fields[b"W"]), int(fields[b"H"])
    cw, ch = (w + 1) // 2, (h + 1) // 2
    frames = []
    while rest:
        marker, rest = rest.split(b"\n", 1)
        assert marker.startswith(b"FRAME")
        y = np.frombuffer(rest[:w * h], np.uint8).reshape(h, w)
        u = np.frombuffer(rest[w * h:w * h + cw * ch], np.uint8).reshape(ch, cw)
        v = np.frombuffer(rest[w * h + cw * ch:w * h + 2 * cw * ch], np.uint8).reshape(ch, cw)
        frames.append((y, u, v))
        rest = rest[w * h + 2 * cw * ch:]
    return w, h, frames


def test_y4m_frames_equal_the_file():
    w, h, want = parse_y4m(DATA / "sample.y4m")
    with handoff.open(str(DATA / "sample.y4m")) as src:
        assert (src.width, src.height, src.format) == (w, h, "i420")  # Y4M's own planes, not interleaved
        assert len(src) == len(want)
        assert src.colorimetry == handoff.Colorimetry("bt709", "full", "left")  # XCOLORMATRIX, XCOLORRANGE, 420mpeg2
        got = list(src)
    assert len(got) == len(want)
    for i, ((frame, overlays), (y, u, v)) in enumerate(zip(got, want)):
        assert frame.index == i and frame.memory == "host"
        assert np.array_equal(np.from_dlpack(frame.luma), y)
        assert np.array_equal(np.from_dlpack(frame.u), u)
        assert np.array_equal(np.from_dlpack(frame.v), v)
        assert len(overlays) == 0


def test_seek_read_and_end():
    with handoff.open(str(DATA / "sample.y4m")) as src:
        n = len(src)
        src.seek(n - 1)
        frame, _ = src.read()
        assert frame.index == n - 1
        assert src.read() is None
        src.seek(0)
        assert src.read()[0].index == 0


def test_raw_nv12_and_p010_files(tmp_path):
    rng = np.random.default_rng(3)
    for fmt, dtype in [("nv12", np.uint8), ("p010", np.uint16)]:
        frames = []
        for _ in range(3):
            y = rng.integers(0, 1024, (18, 22)).astype(dtype)
            uv = rng.integers(0, 1024, (9, 11, 2)).astype(dtype)
            if fmt == "nv12":
                y, uv = y.astype(np.uint8), uv.astype(np.uint8)
            else:
                y, uv = (y << 6).astype(np.uint16), (uv << 6).astype(np.uint16)
            frames.append((y, uv))
        path = tmp_path / f"clip.{fmt}"
        path.write_bytes(b"".join(y.astype("<" + y.dtype.str[1:]).tobytes() + uv.astype("<" + uv.dtype.str[1:]).tobytes()
                                  for y, uv in frames))
        src = handoff.open(str(path), format=fmt, width=22, height=18, rate=50,
                           colorimetry=handoff.Colorimetry("bt2020", "limited"))
        assert len(src) == 3 and src.rate == 50
        for (frame, _), (y, uv) in zip(src, frames):
            assert frame.format == fmt and frame.colorimetry.matrix == "bt2020"
            assert np.array_equal(np.from_dlpack(frame.luma), y)
            assert np.array_equal(np.from_dlpack(frame.chroma), uv)


def test_overlay_file_travels_with_its_frames():
    src = handoff.open(str(DATA / "sample.y4m"), overlays=str(DATA / "overlays.jsonl"))
    frame, overlays = src.read()
    assert frame.index == 0
    assert overlays.labels[:2] == ["car", "dog"]
    assert overlays.boxes[0].tolist() == [40, 60, 160, 140]  # xywh [40, 60, 120, 80] as xyxy
    assert overlays.class_ids.tolist()[:2] == [2, 16] and overlays.texts == 1
    assert src.warnings == []


def test_bad_overlay_lines_are_skipped_and_listed_in_warnings(tmp_path):
    bad = tmp_path / "o.jsonl"
    bad.write_text('{"frame": 0, "objects": [{"box": [1, 2, 3]}]}\nnot json\n'
                   '{"frame": 1, "objects": [{"box": [1, 2, 3, 4], "label": "ok"}]}\n')
    src = handoff.open(str(DATA / "sample.y4m"), overlays=str(bad))
    assert len(src.warnings) == 2, src.warnings
    assert "o.jsonl: line 1: objects[0].box" in src.warnings[0] and "o.jsonl: line 2: json" in src.warnings[1]
    src.read()
    _, overlays = src.read()
    assert overlays.labels == ["ok"]


def test_scene_frames_come_with_ground_truth_overlays():
    src = handoff.open_scene(width=320, height=180, frames=3)
    assert len(src) == 3
    got = list(src)
    assert [f.index for f, _ in got] == [0, 1, 2]
    frame, overlays = got[0]
    assert (frame.width, frame.height) == (320, 180)
    assert len(overlays) > 0 and np.isfinite(overlays.scores).any()
    with pytest.raises(TypeError, match="endless"):
        len(handoff.open_scene(width=64, height=64))
    with pytest.raises(ValueError, match="frames"):
        handoff.open_scene(frames=-1)


def test_a_source_shown_in_a_viewer():
    with viewer() as v:
        for frame, overlays in handoff.open_scene(width=160, height=90, frames=4):
            v.show(frame, overlays=overlays)
        img = np.from_dlpack(v.snapshot())
        assert img.shape == (90, 160, 4)
        assert v.stats.submitted == 4 and v.stats.last_index == 3
        assert_no_gl_errors(v)


def test_bad_files_raise_parse_error_naming_the_file(tmp_path):
    bad = tmp_path / "bad.y4m"
    bad.write_bytes(b"YUV4MPEG2 W0 H6\nFRAME\n")
    with pytest.raises(handoff.ParseError, match="bad.y4m"):
        handoff.open(str(bad))
    assert issubclass(handoff.ParseError, ValueError)
    truncated = tmp_path / "short.nv12"
    truncated.write_bytes(b"\0" * 100)
    with pytest.raises(handoff.ParseError, match="short.nv12"):
        handoff.open(str(truncated), width=16, height=16)
    with pytest.raises(handoff.ParseError, match="missing.y4m"):
        handoff.open(str(tmp_path / "missing.y4m"))
    with pytest.raises(ValueError, match="width / height"):
        handoff.open(str(truncated), width=16)
    with pytest.raises(ValueError, match="colorimetry / rate"):
        handoff.open(str(DATA / "sample.y4m"), rate=30)
    with pytest.raises(ValueError, match="rate"):
        handoff.open(str(truncated), width=16, height=4, rate=-1)
    closed = handoff.open(str(DATA / "sample.y4m"))
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        closed.read()


def test_two_threads_reading_one_source_share_its_frames():
    """Reads run without the GIL; the source's own lock hands each frame to one thread."""
    import threading

    src = handoff.open_scene(width=96, height=64, frames=40)
    seen, errors = [[], []], []

    def read(k):
        try:
            for frame, _ in src:
                seen[k].append(frame.index)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=read, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(seen[0] + seen[1]) == list(range(40))
