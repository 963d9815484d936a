"""Dense layers in recordings, read by the reference `mcap` reader as Foxglove reads them: each
layer a foxglove.RawImage on "<topic>/layers/<i>" (encoding, size, step, samples), its settings
JSON in the channel metadata, the frame's timestamps; and handoff.open plays them back."""
import json

import numpy as np
from foxglove_schemas_protobuf.RawImage_pb2 import RawImage
from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory

import handoff

T0 = 1_700_000_000_000_000_000


def layers_and_boxes():
    ids = (np.arange(6 * 10, dtype=np.uint8).reshape(6, 10) % 5)
    depth = np.linspace(-1.0, 4.0, 8 * 4, dtype=np.float64).reshape(4, 8)
    masks = np.zeros((2, 3, 5), dtype=bool)
    masks[0, 1:, :2] = True
    masks[1, 0, 4] = True
    layers = [handoff.ClassMap(ids, names=["bg", "road"], colors={1: (200, 10, 10)}, transparent=[0], opacity=0.25),
              handoff.ScalarMap(depth, colormap="magma", range=(-1.0, 4.0), opacity=0.75),
              handoff.InstanceMasks(masks, opacity=0.5)]
    return ids, depth, masks, layers


def test_reference_reader_sees_each_layer_as_a_raw_image(tmp_path):
    ids, depth, masks, layers = layers_and_boxes()
    path = str(tmp_path / "layers.mcap")
    frame = np.full((12, 16), 90, dtype=np.uint8)
    with handoff.RecordingWriter(path, topic="/py") as rec:
        rec.write(frame, format="gray8", log_time=T0, boxes=[[0, 0, 4, 4], [5, 5, 4, 4]], layers=layers)
    seen = {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()], validate_crcs=True)
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            if "/layers/" not in channel.topic:
                continue
            assert schema.name == "foxglove.RawImage"
            img = RawImage.FromString(message.data)  # the published class, as Foxglove decodes it
            for field in ("width", "height", "encoding", "step", "data"):  # the schema's own decoding agrees
                assert getattr(decoded, field) == getattr(img, field)
            assert message.log_time == T0
            assert img.timestamp.ToNanoseconds() == T0
            seen[channel.topic] = (img, json.loads(channel.metadata["handoff.layer"]))
    assert sorted(seen) == ["/py/layers/0", "/py/layers/1", "/py/layers/2"]

    img, settings = seen["/py/layers/0"]
    assert (img.encoding, img.width, img.height, img.step) == ("mono8", 10, 6, 10)
    assert np.array_equal(np.frombuffer(img.data, np.uint8).reshape(6, 10), ids)
    assert settings["kind"] == "class_map" and settings["ids"] == "u8"
    assert settings["names"] == {"0": "bg", "1": "road"} and settings["colors"] == {"1": "#c80a0a"}
    assert settings["transparent"] == [0] and settings["opacity"] == 0.25

    img, settings = seen["/py/layers/1"]
    assert (img.encoding, img.width, img.height, img.step) == ("32FC1", 8, 4, 32)
    assert np.array_equal(np.frombuffer(img.data, "<f4").reshape(4, 8), depth.astype(np.float32))
    assert settings == {"kind": "scalar_map", "colormap": "magma", "range": [-1, 4], "opacity": 0.75}

    img, settings = seen["/py/layers/2"]
    assert (img.encoding, img.width, img.height, img.step) == ("mono8", 5, 6, 5)  # two 3-row masks stacked
    assert np.array_equal(np.frombuffer(img.data, np.uint8).reshape(2, 3, 5), masks.astype(np.uint8) * 255)
    assert settings == {"kind": "instance_masks", "mask_height": 3, "opacity": 0.5}
