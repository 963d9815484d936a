"""Ownership: exports and imports leak nothing, deleters run once, frames
outlive their consumers, capsules are consumed once."""
import gc
import sys
import weakref

import numpy as np
import pytest

import handoff
from conftest import CapsuleProducer, capsule_name, run_isolated

N = 10_000


@pytest.mark.parametrize("max_version", [(1, 0), None])
def test_many_exports_consumed_and_not_leak_nothing(max_version):
    gc.collect()
    frames0 = handoff.live_objects()["frames"]
    counts0 = handoff.live_objects()
    for i in range(N):
        f = handoff.Frame.allocate(33, 17, "nv12" if i % 2 else "p010")
        cap = f.luma.__dlpack__(max_version=max_version)  # never consumed
        a = np.from_dlpack(f.chroma)                      # consumed by NumPy
        assert a.shape == (9, 17, 2)
        del cap, a, f
    gc.collect()
    counts = handoff.live_objects()
    assert handoff.live_objects()["frames"] == frames0
    assert counts["dlpack_alive"] == counts0["dlpack_alive"]
    # Every tensor made had its deleter run, and no deleter ran twice.
    assert counts["dlpack_exported"] - counts0["dlpack_exported"] == 2 * N
    assert counts["dlpack_deleted"] - counts0["dlpack_deleted"] == 2 * N


def test_unconsumed_capsule_frees_its_tensor(no_leaks):
    f = handoff.Frame.allocate(8, 8)
    live = handoff.live_objects()["dlpack_alive"]
    cap = f.luma.__dlpack__(max_version=(1, 0))
    assert handoff.live_objects()["dlpack_alive"] == live + 1
    del cap
    assert handoff.live_objects()["dlpack_alive"] == live


def test_consumed_capsule_is_renamed_and_left_to_consumer(no_leaks):
    f = handoff.Frame.allocate(8, 8)
    live = handoff.live_objects()["dlpack_alive"]
    cap = f.luma.__dlpack__(max_version=(1, 0))
    a = np.from_dlpack(CapsuleProducer(cap))
    assert capsule_name(cap) == "used_dltensor_versioned"
    del cap  # the renamed capsule must not free the tensor NumPy holds
    assert handoff.live_objects()["dlpack_alive"] == live + 1
    assert a.sum() == 0
    del a
    assert handoff.live_objects()["dlpack_alive"] == live


@pytest.mark.parametrize("max_version", [(1, 0), None])
def test_capsule_consumed_twice_raises(max_version, no_leaks):
    f = handoff.Frame.allocate(8, 8)
    producer = CapsuleProducer(f.luma.__dlpack__(max_version=max_version))
    a = np.from_dlpack(producer)
    with pytest.raises(Exception):
        np.from_dlpack(producer)
    with pytest.raises(ValueError, match="already consumed"):
        handoff.Frame.from_planes(producer.capsule, f.chroma)
    del a


ONE_TENSOR_TWO_PLANES = r"""
import sys
import numpy as np
import handoff
from conftest import CapsuleProducer
max_version = (1, 0) if sys.argv[1] == "versioned" else None
y = np.zeros((4, 4), np.uint8)
for i in range(500):
    uv = np.zeros((2, 2), np.uint8)
    cap = uv.__dlpack__(max_version=max_version)
    same = CapsuleProducer(cap)  # its __dlpack__ hands out the same capsule each call
    for u, v in ((cap, cap), (same, same), (cap, same)):
        try:
            handoff.Frame.from_arrays(y, u, v, format="i420")
            sys.exit("one DLPack tensor imported as two planes")
        except ValueError as e:
            assert "v: the DLPack tensor already taken for plane u" in str(e), e
    # Refused before anything was consumed: the capsule still imports once, and frees its tensor once.
    f = handoff.Frame.from_arrays(y, cap, np.zeros((2, 2), np.uint8), format="i420")
    assert f.u.ptr == uv.ctypes.data
    del f, cap, same, uv
print("refused")
"""


@pytest.mark.parametrize("max_version", ["versioned", "legacy"])
def test_one_tensor_for_two_planes_refused(max_version):
    """One capsule given for two planes (or a producer whose __dlpack__ returns the same capsule each
    call) ran the tensor's deleter twice, once per plane: a use after free, then a double free. In a
    process of its own: the double free corrupts the allocator."""
    assert "refused" in run_isolated(ONE_TENSOR_TWO_PLANES, max_version)


def test_frame_outlives_its_planes_consumers(no_leaks):
    f = handoff.Frame.allocate(33, 17)
    f.fill_test_pattern(seed=5)
    a = np.from_dlpack(f.luma)
    b = np.asarray(f.chroma)  # buffer protocol: the view holds the plane
    want_a, want_b = a.copy(), b.copy()
    live = handoff.live_objects()["frames"]
    del f
    gc.collect()
    assert handoff.live_objects()["frames"] == live  # still referenced by the consumers
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(b, want_b)
    del a
    gc.collect()
    assert handoff.live_objects()["frames"] == live
    del b
    gc.collect()
    assert handoff.live_objects()["frames"] == live - 1


def test_import_calls_producer_deleter_once(no_leaks):
    luma = np.zeros((17, 33), np.uint8)
    chroma = np.zeros((9, 17, 2), np.uint8)
    rc_l, rc_c = sys.getrefcount(luma), sys.getrefcount(chroma)
    f = handoff.Frame.from_planes(luma, chroma)
    assert sys.getrefcount(luma) > rc_l  # the frame holds the producer (and NumPy's tensor does)
    del f
    gc.collect()
    # NumPy's DLPack deleter drops its reference exactly once: back to where we
    # started (twice would go below, never would stay above).
    assert sys.getrefcount(luma) == rc_l
    assert sys.getrefcount(chroma) == rc_c


def test_refused_import_leaves_nothing_behind(no_leaks):
    luma = np.zeros((17, 33), np.uint8)
    chroma = np.zeros((8, 17, 2), np.uint8)  # wrong shape
    rc_l, rc_c = sys.getrefcount(luma), sys.getrefcount(chroma)
    with pytest.raises(handoff.InvalidFrame):
        handoff.Frame.from_planes(luma, chroma)
    gc.collect()
    assert sys.getrefcount(luma) == rc_l
    assert sys.getrefcount(chroma) == rc_c


def test_frame_keeps_producers_alive(no_leaks):
    def make():
        luma = np.full((4, 6), 7, np.uint8)
        chroma = np.full((2, 3, 2), 9, np.uint8)
        return handoff.Frame.from_planes(luma, chroma), weakref.ref(luma), weakref.ref(chroma)

    f, wl, wc = make()
    gc.collect()
    assert wl() is not None and wc() is not None
    assert np.from_dlpack(f.luma)[3, 5] == 7
    del f
    gc.collect()
    assert wl() is None and wc() is None


def test_many_imports_leak_nothing():
    gc.collect()
    frames0 = handoff.live_objects()["frames"]
    luma = np.zeros((17, 33), np.uint8)
    chroma = np.zeros((9, 17, 2), np.uint8)
    rc = sys.getrefcount(luma)
    for _ in range(N // 10):
        f = handoff.Frame.from_planes(luma, chroma)
        a = np.from_dlpack(f.luma)
        del f, a
    gc.collect()
    assert handoff.live_objects()["frames"] == frames0
    assert sys.getrefcount(luma) == rc


class Producer:
    """A host array producer (the array interface) that remembers what was made from it: a cycle through
    the frame's C++ owner once it does."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


def test_cycles_through_frames_and_planes_are_collected():
    gc.collect()
    frames0 = handoff.live_objects()["frames"]
    made = []
    holder = None
    for keep in ("frame", "plane", "buffer"):
        luma = np.zeros((16, 32), np.uint8)
        p = Producer(luma) if keep != "buffer" else memoryview(luma)
        if keep == "buffer":  # a buffer view holds its exporter: a producer that refers back
            holder = Producer(np.zeros((8, 16, 2), np.uint8))
            f = handoff.Frame.from_planes(p, holder)
        else:
            f = handoff.Frame.from_planes(p, Producer(np.zeros((8, 16, 2), np.uint8)))
        if keep == "plane":
            p.back = f.luma  # the plane alone holds the frame once f goes
        elif keep == "buffer":
            holder.back = f
        else:
            p.back = f
        made.append(weakref.ref(luma))
        del p, f, luma
        holder = None
    gc.collect()
    assert handoff.live_objects()["frames"] == frames0
    assert all(w() is None for w in made)


def test_cycles_through_layers_are_collected():
    class Ids:
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    ids = Ids(np.zeros((4, 4), np.uint8))
    w = weakref.ref(ids)
    ids.layer = handoff.ClassMap(ids)
    del ids
    gc.collect()
    assert w() is None


def test_a_cycle_left_at_exit_is_freed_not_leaked(tmp_path):
    """The common form: a frame kept in a module global whose producer is an instance of a class of that
    module (frame -> producer -> class -> method globals -> frame). nanobind says "leaked" at exit for
    any instance the interpreter could not free."""
    import subprocess
    script = tmp_path / "cycle.py"
    script.write_text(
        "import numpy as np, handoff\n"
        "class P:\n"
        "    def __init__(self, a): self.a = a; self.__array_interface__ = a.__array_interface__\n"
        "    def frame(self): return FRAME\n"
        "FRAME = handoff.Frame.from_planes(P(np.zeros((4, 4), np.uint8)), P(np.zeros((2, 2, 2), np.uint8)))\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "leaked" not in r.stderr
