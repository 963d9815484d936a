"""Writes fuzz_mcap seeds (tests/fuzz/corpus/mcap) for rosbag2's compression_mode message, run by hand:
    .venv/bin/python tests/fuzz/make_bag_seeds.py
rosbags MCAP storage files whose messages are each zstd-compressed (as in a bag with
compression_mode message): mono8 sensor_msgs/msg/Image frames with their
vision_msgs/msg/Detection2DArray, and the same with one message's zstd magic spoilt.
fuzz_mcap plays each input as such a bag (twice over, as a split bag's two files).
"""
from pathlib import Path
import sys
import tempfile

sys.path.insert(0, str(Path(__file__).parents[1] / "python" / "ros"))
import os

os.environ.setdefault("HANDOFF_MCAP_TOOL", sys.executable)  # test_split_compressed_bags needs a file there
from rosbags.rosbag2 import CompressionMode, StoragePlugin  # noqa: E402

from test_split_compressed_bags import write_part  # noqa: E402

OUT = Path(__file__).parent / "corpus" / "mcap"

with tempfile.TemporaryDirectory() as tmp:
    write_part(Path(tmp) / "bag", StoragePlugin.MCAP, CompressionMode.MESSAGE, range(3), range(3))
    (mcap,) = (Path(tmp) / "bag").glob("*.mcap")
    data = mcap.read_bytes()
    (OUT / "ros2_zstd_messages.mcap").write_bytes(data)
    # The first message's zstd magic spoilt (the MCAP records around it intact): that message
    # does not decompress, the others do.
    magic = data.find(b"\x28\xb5\x2f\xfd")
    broken = bytearray(data)
    broken[magic] ^= 0xFF
    (OUT / "ros2_zstd_messages_damaged.mcap").write_bytes(bytes(broken))
print("wrote", OUT / "ros2_zstd_messages.mcap", OUT / "ros2_zstd_messages_damaged.mcap")
