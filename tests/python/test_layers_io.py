"""Dense layers beyond Viewer.show: Publisher.publish(layers=...) -> Subscriber (Overlays.layers),
and RecordingWriter.write(layers=...) -> handoff.open (Overlays.layers), converted as the viewer
converts them (ids as they are, scalars float32, masks 0 / 1); bad layers are ValueErrors."""
import os
import sys

import numpy as np
import pytest

import handoff

sys.path.insert(0, os.path.dirname(__file__))
from conftest import run_isolated  # noqa: E402
from live_helpers import live_dir, wait_for_subscriber  # noqa: E402,F401

BOXES = [[0, 0, 4, 4], [5, 5, 4, 4]]


def sample_layers():
    ids = (np.arange(6 * 10, dtype=np.uint16).reshape(6, 10) * 7) % 300
    depth = np.linspace(-1.0, 4.0, 8 * 4, dtype=np.float64).reshape(4, 8)
    masks = np.zeros((2, 3, 5), dtype=bool)
    masks[0, 1:, :2] = True
    masks[1, 0, 4] = True
    layers = [handoff.ClassMap(ids, names=["bg", "road"], colors={1: (200, 10, 10)}, transparent=[0], opacity=0.25),
              handoff.ScalarMap(depth, colormap="magma", range=(-1.0, 4.0), opacity=0.75),
              handoff.InstanceMasks(masks, opacity=0.5)]
    return ids, depth, masks, layers


def assert_layers(got, ids, depth, masks):
    assert [type(layer).__name__ for layer in got] == ["ClassMap", "ScalarMap", "InstanceMasks"]
    assert got[0].ids.dtype == np.uint16 and got[0].opacity == 0.25
    assert got[0].names == {0: "bg", 1: "road"} and got[0].colors == {1: (200, 10, 10)}
    assert got[0].transparent == (0,)
    assert got[1].range == (-1.0, 4.0)
    np.testing.assert_array_equal(got[0].ids, ids)
    assert got[1].values.dtype == np.float32 and got[1].colormap == "magma" and got[1].opacity == 0.75
    np.testing.assert_array_equal(got[1].values, depth.astype(np.float32))
    assert got[2].masks.shape == (2, 3, 5)
    np.testing.assert_array_equal(got[2].masks, masks.astype(np.uint8))
    with pytest.raises(ValueError):
        got[0].ids[0, 0] = 1  # read-only views of what arrived


def test_published_layers_arrive_with_their_frame(live_dir):
    ids, depth, masks, layers = sample_layers()
    frame = np.full((18, 32), 60, dtype=np.uint8)
    with handoff.Publisher("layers") as pub, handoff.Subscriber("layers") as sub:
        wait_for_subscriber(pub)
        assert pub.publish(frame, format="gray8", boxes=BOXES, layers=layers)
        f = sub.next(timeout=20)
        assert f is not None, sub.status.message
        assert len(f.overlays) == 2
        assert_layers(f.overlays.layers, ids, depth, masks)
        with pytest.raises(ValueError, match="masks"):  # 2 masks, 1 box
            pub.publish(frame, format="gray8", boxes=BOXES[:1], layers=[layers[2]])


def test_recorded_layers_come_back_from_open(tmp_path):
    ids, depth, masks, layers = sample_layers()
    path = tmp_path / "layers.mcap"
    frame = np.full((12, 16), 90, dtype=np.uint8)
    with handoff.RecordingWriter(path, topic="/cam") as rec:
        rec.write(frame, format="gray8", boxes=BOXES, layers=layers)
        rec.write(frame, format="gray8")
        with pytest.raises(ValueError, match="masks"):
            rec.write(frame, format="gray8", boxes=BOXES[:1], layers=[layers[2]])
    src = handoff.open(path, topic="/cam")
    frames = list(src)
    assert len(frames) == 2
    assert_layers(frames[0][1].layers, ids, depth, masks)
    assert frames[1][1].layers == []


# The layer array's only owner is what publish() / write() read it through: a raw capsule, or the fresh
# export of a producer that makes a new array each call. Large enough for a mapping of its own, so that
# once freed a read of it crashes rather than finds the old values.
ONLY_THE_CALL_HOLDS = r"""
import os, sys
import numpy as np
import handoff
from live_helpers import wait_for_subscriber
N = 2048
class Fresh:
    def __dlpack__(self, **kwargs):
        return np.full((N, N), 2, np.uint8).__dlpack__(**kwargs)
    def __dlpack_device__(self):
        return (1, 0)
owner, via = sys.argv[1:3]
layers = [handoff.ClassMap(np.full((N, N), 2, np.uint8).__dlpack__() if owner == "capsule" else Fresh())]
frame = np.zeros((48, 64), np.uint8)
if via == "write":
    path = os.path.join(sys.argv[3], "layers.mcap")
    with handoff.RecordingWriter(path) as rec:
        rec.write(frame, format="gray8", layers=layers)
    got = list(handoff.open(path))[0][1].layers[0].ids
else:
    with handoff.Publisher("held") as pub, handoff.Subscriber("held") as sub:
        wait_for_subscriber(pub)
        assert pub.publish(frame, format="gray8", layers=layers)
        got = sub.next(timeout=20).overlays.layers[0].ids
print(got.shape, np.unique(got).tolist())
"""


@pytest.mark.parametrize("owner", ["capsule", "fresh"])
@pytest.mark.parametrize("via", ["write", "publish"])
def test_layer_arrays_held_for_the_call(owner, via, tmp_path, live_dir):
    """publish() and write() read the array after its only owner was freed (when reading it had ended)."""
    assert run_isolated(ONLY_THE_CALL_HOLDS, owner, via, str(tmp_path)).strip() == "(2048, 2048) [2]"


def test_a_frame_has_at_most_64_layers_wherever_it_goes(tmp_path, live_dir):
    """One limit for a frame's layers, 64, in Viewer.show, Publisher.publish and RecordingWriter.write: a 65th
    is a ValueError naming `layers` and the limit; 64 go."""
    frame = np.zeros((4, 8), np.uint8)
    many = [handoff.ScalarMap(np.zeros((2, 2), np.float32)) for _ in range(65)]
    refused = r"layers: 65 layers; a frame has at most 64"
    with handoff.Viewer(headless=True, width=160, height=120) as v:
        with pytest.raises(ValueError, match=refused):
            v.show(frame, layers=many)
        v.show(frame, layers=many[:64])
    with handoff.Publisher("many-layers") as pub:
        with pytest.raises(ValueError, match=refused):
            pub.publish(frame, format="gray8", layers=many)
        assert pub.publish(frame, format="gray8", layers=many[:64])
    path = tmp_path / "many.mcap"
    with handoff.RecordingWriter(path) as rec:
        with pytest.raises(ValueError, match=refused):
            rec.write(frame, format="gray8", layers=many)
        rec.write(frame, format="gray8", layers=many[:64])
    (_, overlays), = list(handoff.open(path))
    assert len(overlays.layers) == 64
