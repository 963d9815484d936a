"""Writes fuzz_bag seeds (tests/fuzz/corpus/bag), run by hand:
    .venv/bin/python tests/fuzz/make_db3_seeds.py
Each seed is fuzz_bag's input: [u32 little-endian yaml_size][metadata.yaml][the .db3 file]. rosbags (an
independent implementation) writes SQLite3 bags of mono8 sensor_msgs/msg/Image frames with their
vision_msgs/msg/Detection2DArray: the .db3 file alone (yaml_size 0), the folder with its metadata.yaml,
the same compressed per message (zstd), and a metadata.yaml that names a file not there.
"""
from pathlib import Path
import os
import struct
import sys
import tempfile

sys.path.insert(0, str(Path(__file__).parents[1] / "python" / "ros"))
os.environ.setdefault("HANDOFF_MCAP_TOOL", sys.executable)  # test_split_compressed_bags needs a file there
from rosbags.rosbag2 import CompressionMode, StoragePlugin  # noqa: E402

from test_split_compressed_bags import write_part  # noqa: E402

OUT = Path(__file__).parent / "corpus" / "bag"
OUT.mkdir(exist_ok=True)


def seed(name, yaml_text, db3):
    y = yaml_text.encode() if yaml_text else b""
    (OUT / name).write_bytes(struct.pack("<I", len(y)) + y + db3)


with tempfile.TemporaryDirectory() as tmp:
    for mode, tag in [(CompressionMode.NONE, "plain"), (CompressionMode.MESSAGE, "zstd_messages")]:
        bag = Path(tmp) / tag
        write_part(bag, StoragePlugin.SQLITE3, mode, range(3), range(3))
        (db3,) = bag.glob("*.db3")
        # The folder's metadata names the storage file bag_0.db3, as fuzz_bag writes it.
        meta = (bag / "metadata.yaml").read_text().replace(db3.name, "bag_0.db3")
        data = db3.read_bytes()
        seed(f"db3_{tag}.bin", None, data)
        seed(f"folder_{tag}.bin", meta, data)
        if tag == "plain":
            seed("folder_missing_file.bin", meta.replace("bag_0.db3", "gone.db3"), data)
