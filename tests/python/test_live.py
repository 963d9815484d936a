"""handoff.Publisher / handoff.Subscriber / Viewer.attach from Python, publisher and consumer in
separate processes (live_peer.py is the other one): host memfd frames arrive byte for byte and
export to NumPy without a copy (the arrays point into the shared mapping and stay valid while
held, even after the publisher is killed), overlays travel with them, a headless viewer attaches
and shows the publisher's pixels, faults are reported by status, and bad arguments are errors
naming the argument."""
import gc
import hashlib
import json
import os
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import handoff

sys.path.insert(0, os.path.dirname(__file__))
from viewer_helpers import expected_pattern  # noqa: E402
from live_helpers import live_dir, mapping_of, peers, wait_for_subscriber  # noqa: E402,F401
from viewer_helpers import assert_no_gl_errors, assert_quadrants, viewer  # noqa: E402


def take(sub, timeout=20.0):
    f = sub.next(timeout=timeout)
    assert f is not None, f"no frame within {timeout} s: {sub.status.message}"
    return f


def assert_pattern(frame, fmt):
    """The frame's planes, read through DLPack, are the test pattern with seed frame.index."""
    want_luma, want_chroma = expected_pattern(frame.width, frame.height, fmt, frame.index)
    luma, chroma = np.from_dlpack(frame.luma), np.from_dlpack(frame.chroma)
    assert luma.dtype == want_luma.dtype and chroma.shape == want_chroma.shape
    np.testing.assert_array_equal(luma, want_luma)
    np.testing.assert_array_equal(chroma, want_chroma)
    return luma, chroma


@pytest.mark.parametrize("fmt", ["nv12", "p010"])
def test_host_frames_arrive_byte_for_byte_in_the_shared_mapping(live_dir, peers, fmt):
    pub = peers("publish", "cam0", "--width", 70, "--height", 46, "--format", fmt)
    path, memory = pub.wait_ready()
    assert path == os.path.join(live_dir, "handoff", "cam0.sock") and memory == "host"
    with handoff.Subscriber("cam0") as sub:
        seen = set()
        while len(seen) < 3:
            with take(sub) as f:
                assert (f.format, f.width, f.height, f.memory) == (fmt, 70, 46, "host")
                assert f.slot["kind"] == "host memfd"
                luma, chroma = assert_pattern(f, fmt)
                for a in (luma, chroma):  # no copy: NumPy reads the publisher's memfd, read-only
                    assert mapping_of(a.ctypes.data).startswith("/memfd:"), mapping_of(a.ctypes.data)
                    assert not a.flags.writeable
                assert luma.ctypes.data == f.luma.ptr
                del luma, chroma
                seen.add(f.index)
        assert sub.status.state == "connected" and sub.status.memory == "host"
        assert sub.stats.taken >= 3
    assert pub.stop() == 0
    assert pub.line().startswith("published ")


def test_overlays_arrive_with_their_frame(live_dir, peers):
    pub = peers("publish", "dets")
    pub.wait_ready()
    with handoff.Subscriber("dets") as sub:
        for _ in range(3):
            with take(sub) as f:
                i = f.index
                o = f.overlays
                assert len(o) == 1
                np.testing.assert_allclose(o.boxes, [[i % 40, 2, i % 40 + 10, 10]])  # xywh -> xyxy
                assert o.labels == [f"obj{i}"]
                np.testing.assert_allclose(o.scores, [0.5])
                assert o.class_ids.tolist() == [i % 7] and o.track_ids.tolist() == [i]
                assert f.sequence >= 1 and f.counters["published"] >= f.sequence - 1
                assert f.receive_time_ns >= f.publish_time_ns > 0


def test_arrays_outlive_the_frame_and_the_killed_publisher(live_dir, peers):
    pub = peers("publish", str(os.path.join(live_dir, "direct.sock")))  # a socket path instead of a name
    path, _ = pub.wait_ready()
    sub = handoff.Subscriber(path)
    f = take(sub)
    luma = np.from_dlpack(f.luma)  # the DLPack tensor holds the slot, not the LiveFrame object
    want_luma, _ = expected_pattern(f.width, f.height, "nv12", f.index)
    address = luma.ctypes.data
    del f
    gc.collect()
    pub.kill()  # SIGKILL: no goodbye
    assert sub.wait_for("publisher gone", timeout=20), sub.status.message
    assert "gone" in sub.status.message
    np.testing.assert_array_equal(luma, want_luma)  # still the publisher's memory, still mapped
    assert mapping_of(address).startswith("/memfd:")
    sub.close()
    np.testing.assert_array_equal(luma, want_luma)  # the subscriber closed: the array still holds the slot
    del luma
    gc.collect()
    assert not (mapping_of(address) or "").startswith("/memfd:"), "the slot's mapping outlived the last array"


def test_a_subscriber_gone_while_its_frame_is_held_stalls_nobody(live_dir, peers):
    """Issue 22, defect 1, as a user met it: a publisher process publishing 320x240 NV12 every 5 ms, `sub`
    taking frames, a second subscriber taking one frame and deleted while that frame is kept. The departed
    subscriber keeps that one slot and no other: `sub` goes on getting new frames, a viewer attached after it
    shows frames (it waited forever: every other slot stayed held), and the kept frame is never overwritten."""
    pub = peers("publish", "cam0", "--width", 320, "--height", 240, "--interval", 0.005)
    pub.wait_ready()
    sub = handoff.Subscriber("cam0")
    with take(sub):
        pass
    sub2 = handoff.Subscriber("cam0")
    f2 = take(sub2)
    del sub2
    gc.collect()
    seen = set()
    while len(seen) < 20:
        with take(sub) as f:
            seen.add(f.index)
    v = viewer()
    try:
        v.attach("cam0")
        deadline = time.monotonic() + 60
        while v.stats.shown < 5:
            assert time.monotonic() < deadline, f"the attached viewer showed {v.stats.shown} frames: {v.attach_status}"
            time.sleep(0.02)
        assert_no_gl_errors(v)
    finally:
        v.close()
    assert_pattern(f2, "nv12")  # its slot was never reused
    del f2
    sub.close()
    assert pub.stop() == 0
    assert pub.line().startswith("published ")


def test_a_subscriber_waits_for_a_publisher_and_a_live_name_is_refused(live_dir, peers):
    with handoff.Subscriber("later", retry_interval=0.02) as sub:
        assert sub.status.state == "waiting"
        assert sub.next(timeout=0.1) is None
        pub = peers("publish", "later")
        pub.wait_ready()
        assert sub.wait_for("connected", timeout=20), sub.status.message
        with take(sub) as f:
            assert_pattern(f, "nv12")
        with pytest.raises(RuntimeError, match="later"):  # the peer's publisher is alive
            handoff.Publisher("later")
        assert pub.stop() == 0
        assert sub.wait_for("publisher gone", timeout=20)
        assert "stopped" in sub.status.message, sub.status.message
    with handoff.Subscriber("nobody", wait=False) as sub:
        assert sub.wait_for("failed", timeout=20), sub.status.message
        assert sub.next(timeout=1) is None
        assert list(sub) == [], "iteration ends when the link failed"


def test_a_publisher_acquires_slots_a_subscriber_process_reads(live_dir, peers):
    with handoff.Publisher("slots", slots=3) as pub:
        sub = peers("subscribe", "slots", "--frames", 2)
        wait_for_subscriber(pub)
        for i in range(2):
            with pub.acquire("nv12", 32, 18) as a:
                luma, chroma = expected_pattern(32, 18, "nv12", 40 + i)
                np.from_dlpack(a.luma)[:] = luma  # written straight into the shared slot
                np.from_dlpack(a.chroma)[:] = chroma
                a.index = 40 + i
                a.set_overlays(boxes=[[1, 2, 3, 4]], labels=["acquired"])
            got = json.loads(sub.line())  # taken before the next one comes (the newest would win)
            assert got["index"] == 40 + i
            assert got["luma"] == hashlib.sha256(luma.tobytes()).hexdigest()
            assert got["chroma"] == hashlib.sha256(chroma.tobytes()).hexdigest()
            assert got["labels"] == ["acquired"] and got["boxes"] == [[1, 2, 4, 6]]
        assert sub.stop() == 0
        assert pub.stats.published == 2


def test_acquired_slot_refuses_a_present_while_an_array_still_holds_it(live_dir):
    with handoff.Publisher("held") as pub:
        a = pub.acquire("nv12", 16, 8)
        keep = np.from_dlpack(a.luma)
        with pytest.raises(BufferError, match="still refer"):
            a.present()
        del keep
        with pytest.raises(ValueError, match="presented or given back"):
            a.present()


def test_a_publisher_holding_its_acquired_slot_is_collected(live_dir):
    class Holding(handoff.Publisher):
        pass

    held = Holding("cycle")
    held.pending = held.acquire("nv12", 16, 8)
    gone = weakref.ref(held)
    del held
    gc.collect()
    assert gone() is None


def test_a_viewer_process_attaches_and_shows_the_published_pixels(live_dir, peers):
    pub = peers("publish", "quads", "--width", 96, "--height", 64, "--pattern", "quadrants")
    pub.wait_ready()
    v = viewer()
    try:
        assert v.attach_status is None
        v.attach("quads")
        deadline = time.monotonic() + 30
        while v.stats.shown < 2:
            assert time.monotonic() < deadline, f"nothing shown: {v.attach_status}"
            time.sleep(0.02)
        s = v.attach_status
        assert (s.publisher, s.state) == ("quads", "live"), s
        assert s.pid == pub.proc.pid and s.received >= 2
        img = np.from_dlpack(v.snapshot())
        assert img.shape == (64, 96, 4)
        assert_quadrants(img, "nv12", "bt709", "limited")
        with pytest.raises(ValueError):  # attached: frames from the application are refused
            v.show(handoff.Frame.allocate(16, 8))
        pub.kill()
        deadline = time.monotonic() + 20
        while v.attach_status.state != "gone":
            assert time.monotonic() < deadline, v.attach_status
            time.sleep(0.02)
        assert_quadrants(np.from_dlpack(v.snapshot()), "nv12", "bt709", "limited")  # the last frame stays
        assert_no_gl_errors(v)
    finally:
        v.close()


def test_publish_counts_frames_with_nobody_connected(live_dir):
    with handoff.Publisher("alone") as pub:
        assert pub.name == "alone" and pub.memory == "host"
        assert pub.publish(handoff.Frame.allocate(16, 8)) is True
        assert pub.publish(expected_pattern(16, 8, "p010", 1)) is True  # a (luma, chroma) pair of NumPy arrays
        s = pub.stats
        assert s.published == 2 and s.subscribers == 0
        assert handoff.list_publishers()[0]["name"] == "alone"
    assert not pub.is_open()
    with pytest.raises(ValueError, match="closed"):
        pub.publish(handoff.Frame.allocate(16, 8))


def test_bad_names_and_arguments_name_what_is_wrong(live_dir):
    cases = [
        (lambda: handoff.Publisher("no spaces"), ValueError, "name_or_path"),
        (lambda: handoff.Publisher(42), TypeError, "name_or_path"),
        (lambda: handoff.Subscriber(".hidden"), ValueError, "name_or_path"),
        (lambda: handoff.Publisher("p", slots=1), ValueError, "slots"),
        (lambda: handoff.Publisher("p", slots=65), ValueError, "slots"),
        (lambda: handoff.Publisher("p", memory="gpu"), ValueError, "memory"),
        (lambda: handoff.Publisher("p", memory="vulkan"), ValueError, "memory"),
        (lambda: handoff.Publisher("p", cuda_export="magic"), ValueError, "cuda_export"),
        (lambda: handoff.Publisher("p", max_subscribers=0), ValueError, "max_subscribers"),
        (lambda: handoff.Publisher("p", slots=2, max_held_per_subscriber=3), ValueError, "max_held_per_subscriber"),
        (lambda: handoff.Publisher("p", record_compression="lz4"), ValueError, "record_compression"),
        (lambda: handoff.Publisher("p", record="/tmp/x.mcap", record_compression="bz2"), ValueError,
         "record_compression"),
        (lambda: handoff.Publisher("p", record=3), TypeError, "record"),
        (lambda: handoff.Subscriber("s", accepts="host"), TypeError, "accepts"),
        (lambda: handoff.Subscriber("s", accepts=["gpu"]), ValueError, "accepts"),
        (lambda: handoff.Subscriber("s", accepts=[]), ValueError, "accepts"),
        (lambda: handoff.Subscriber("s", retry_interval=-1), ValueError, "retry_interval"),
    ]
    for make, error, field in cases:
        with pytest.raises(error, match=field):
            make()
    folder = os.path.join(live_dir, "handoff")
    assert not os.path.isdir(folder) or os.listdir(folder) == [], "a refused publisher left a socket behind"
    with handoff.Publisher("p") as pub, handoff.Subscriber("p") as sub:
        with pytest.raises(TypeError, match="frame"):
            pub.publish("not a frame")
        with pytest.raises(ValueError, match="boxes"):
            pub.publish(handoff.Frame.allocate(16, 8), boxes=[[1, 2, 3]])
        with pytest.raises(ValueError, match="format"):
            pub.acquire("rgb", 16, 8)
        with pytest.raises(ValueError, match="timeout"):
            sub.next(timeout=-1)
        with pytest.raises(ValueError, match="state"):
            sub.wait_for("asleep", timeout=0)
    with pytest.raises(ValueError, match="name_or_path"):
        with viewer() as v:
            v.attach("bad name")


def test_close_ends_the_waits_of_other_threads(live_dir):
    """Subscriber.close() from one thread ends next() / iteration / wait_for waiting in others (with no
    limit, they waited for ever), and the subscriber leaves its publisher."""
    pub = handoff.Publisher("waits")
    sub = handoff.Subscriber("waits")
    wait_for_subscriber(pub)
    got = {}
    threads = [threading.Thread(target=lambda: got.__setitem__("next", sub.next())),
               threading.Thread(target=lambda: got.__setitem__("iter", list(sub))),
               threading.Thread(target=lambda: got.__setitem__("wait_for", sub.wait_for("failed")))]
    for t in threads:
        t.start()
    time.sleep(0.2)  # all three inside their waits (were they not yet, they would find it closed)
    sub.close()
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a wait outlived close()"
    assert got == {"next": None, "iter": [], "wait_for": False}
    deadline = time.monotonic() + 20
    while pub.stats.subscribers:
        assert time.monotonic() < deadline, "the closed subscriber stayed connected"
        time.sleep(0.01)
    with pytest.raises(ValueError, match="closed"):
        sub.next(0)
    pub.close()


def test_unset_runtime_dir_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    with pytest.raises(RuntimeError, match="XDG_RUNTIME_DIR"):
        handoff.Publisher("cam0")
