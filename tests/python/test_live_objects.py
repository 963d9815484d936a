"""handoff.live_objects(): the public leak-hunting counts (docs/python.md,
"Finding leaks"; C++ handoff::live_objects(), handoff/diagnostics.hpp). Each
count must rise when handoff makes the object and fall when it is released."""
import gc

import numpy as np

import handoff

KEYS = {"frames", "dlpack_alive", "dlpack_exported", "dlpack_deleted"}


def counts():
    gc.collect()
    return handoff.live_objects()


def test_the_counts_are_a_dict_of_ints_and_consistent():
    c = handoff.live_objects()
    assert set(c) == KEYS
    assert all(type(v) is int and v >= 0 for v in c.values()), c
    # Since the module was loaded: every export either still alive or deleted.
    assert c["dlpack_alive"] == c["dlpack_exported"] - c["dlpack_deleted"]
    assert "live_objects" in handoff.__all__


def test_an_allocated_frame_counts_until_its_last_reference_goes():
    before = counts()
    frame = handoff.Frame.allocate(32, 16)
    plane = frame.luma  # a plane holds the frame's storage too
    assert counts()["frames"] == before["frames"] + 1
    del frame
    assert counts()["frames"] == before["frames"] + 1
    del plane
    assert counts()["frames"] == before["frames"]


def test_a_frame_over_a_producers_arrays_counts_while_it_holds_them():
    before = counts()
    frame = handoff.Frame.from_planes(np.zeros((16, 32), np.uint8), np.zeros((8, 16, 2), np.uint8))
    assert counts()["frames"] == before["frames"] + 1
    del frame
    assert counts()["frames"] == before["frames"]


def test_an_export_counts_until_its_deleter_runs():
    frame = handoff.Frame.allocate(32, 16)
    before = counts()
    capsule = frame.luma.__dlpack__(max_version=(1, 0))
    mid = counts()
    assert mid["dlpack_alive"] == before["dlpack_alive"] + 1
    assert mid["dlpack_exported"] == before["dlpack_exported"] + 1
    assert mid["dlpack_deleted"] == before["dlpack_deleted"]
    del frame
    assert counts()["frames"] == before["frames"], "the export keeps the frame's storage"
    del capsule  # an unconsumed capsule's destructor runs the deleter
    after = counts()
    assert after["dlpack_alive"] == before["dlpack_alive"]
    assert after["dlpack_exported"] == before["dlpack_exported"] + 1
    assert after["dlpack_deleted"] == before["dlpack_deleted"] + 1
    assert after["frames"] == before["frames"] - 1


def test_a_consumers_array_holds_the_export_until_it_goes():
    frame = handoff.Frame.allocate(32, 16, "p010")
    before = counts()
    array = np.from_dlpack(frame.chroma)
    assert counts()["dlpack_alive"] == before["dlpack_alive"] + 1
    del array
    assert counts()["dlpack_alive"] == before["dlpack_alive"]
    assert counts()["dlpack_deleted"] == before["dlpack_deleted"] + 1


def test_a_leaking_loop_shows_in_the_counts():
    """What a leak hunt sees: frames kept by mistake stay counted."""
    before = counts()
    kept = [handoff.Frame.allocate(16, 16) for _ in range(5)]
    kept_exports = [f.luma.__dlpack__() for f in kept]
    c = counts()
    assert c["frames"] - before["frames"] == 5
    assert c["dlpack_alive"] - before["dlpack_alive"] == 5
    del kept, kept_exports
    c = counts()
    assert c["frames"] == before["frames"] and c["dlpack_alive"] == before["dlpack_alive"]
