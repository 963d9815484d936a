"""The Python examples (examples/python) run as a user runs them, headless, and
do what they say: detections drawn over a Y4M clip, PNG snapshots written."""
import os
import pathlib
import struct
import subprocess
import sys
import zlib

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def run(script, *args, cwd=None, display=True):
    env = dict(os.environ)
    if not display:
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
    r = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], capture_output=True, text=True,
                       timeout=120, env=env, cwd=cwd)
    assert r.returncode == 0, f"{script} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def write_y4m(path, frames):
    h, w = frames[0].shape
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F30:1 Ip A1:1 C420mpeg2\n".encode())
        for y in frames:
            f.write(b"FRAME\n" + y.tobytes() + np.full(2 * ((h + 1) // 2) * ((w + 1) // 2), 128, np.uint8).tobytes())


def test_y4m_detections_draws_boxes_around_bright_regions(tmp_path):
    frames = []
    for n in range(6):
        y = np.full((120, 160), 40, np.uint8)
        y[40:70, 30 + 5 * n:80 + 5 * n] = 220  # a bright block moving right
        frames.append(y)
    clip = tmp_path / "clip.y4m"
    write_y4m(clip, frames)
    snap = tmp_path / "last.npy"
    out = run("y4m_detections.py", clip, "--headless", "--snapshot", snap)
    assert "6 frames shown" in out
    img = np.load(snap)
    assert img.shape == (120, 160, 4)
    # The last frame's block spans x 55..104, y 40..69: its box's left edge is drawn over the
    # block's left column, inside it and far from it the frame is unchanged.
    block = img[55, 80, :3].astype(int)
    background = img[100, 140, :3].astype(int)
    assert (block > 200).all() and (background < 40).all()
    assert np.abs(img[55, 55, :3].astype(int) - block).max() > 20, "no box edge at the block's left side"


def read_png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    idat = b""
    pos = 8
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 4 * w)
    return raw[:, 1:].reshape(h, w, 4)


def test_snapshot_writer_writes_pngs_of_the_scene(tmp_path):
    out = run("snapshot_writer.py", tmp_path / "pngs", "--frames", 3, "--every", 2)
    assert "wrote 3 snapshots" in out
    files = sorted((tmp_path / "pngs").glob("*.png"))
    assert [f.name for f in files] == ["snapshot_000000.png", "snapshot_000002.png", "snapshot_000004.png"]
    first, second = read_png(files[0]), read_png(files[1])
    assert first.shape == (360, 640, 4) and (first[..., 3] == 255).all()
    assert not np.array_equal(first, second), "the scene moves"
    assert len(np.unique(first.reshape(-1, 4), axis=0)) > 50, "a picture, not a blank"


# --- dense layers: segmentation, depth, instance masks ---------------------------------------
def test_segmentation_layer_draws_the_classes_in_their_colours(tmp_path):
    snap = tmp_path / "seg.npy"
    assert "4 frames shown" in run("segmentation_layer.py", "--headless", "--frames", 4, "--snapshot", snap)
    img = np.load(snap)[..., :3].astype(int)
    assert img.shape == (240, 320, 3)
    # Sky (70, 130, 180) at half opacity over the bright sky, road (128, 64, 128) over the dark road.
    sky_image, road_image = (180, 180, 180), (60, 60, 60)
    def blend(c, under):
        return np.round(0.5 * np.array(c) + 0.5 * (np.array(under) - 16) * 255 / 219).astype(int)
    assert np.abs(img[20, 300] - blend((70, 130, 180), sky_image)).max() <= 3, img[20, 300]
    assert np.abs(img[220, 300] - blend((128, 64, 128), road_image)).max() <= 3, img[220, 300]
    # Around the horizon class 0 is transparent: the frame as it is.
    assert abs(img[120, 300, 0] - img[120, 300, 2]) <= 2


def test_depth_layer_colours_by_distance_and_leaves_holes(tmp_path):
    snap = tmp_path / "depth.npy"
    run("depth_layer.py", "--headless", "--frames", 3, "--range", 0, 10, "--snapshot", snap)
    img = np.load(snap)[..., :3].astype(int)
    near, far = img[235, 300], img[5, 300]
    assert np.abs(near - far).sum() > 100, "near and far in different colours"
    hole = img[5, 5]
    assert np.abs(hole - hole.mean()).max() <= 2, "the NaN hole shows the grey frame"


def test_instance_masks_example_colours_each_detection(tmp_path):
    snap = tmp_path / "masks.npy"
    run("instance_masks.py", "--headless", "--frames", 3, "--snapshot", snap)
    img = np.load(snap)[..., :3].astype(int)
    first, second, frame = img[80, 44], img[160, 260], img[230, 160]
    assert np.abs(first - frame).sum() > 40 and np.abs(second - frame).sum() > 40, "the masks are drawn"
    assert np.abs(first - second).sum() > 40, "each mask in its own detection's colour"


def test_ros_bag_lists_topics_and_shows_the_camera_with_its_detections(tmp_path):
    """examples/python/ros_bag.py on a bag rosbags writes (an MCAP bag folder with an Image topic and
    the Detection2DArray topics of tests/python/ros): every topic listed, every frame shown with its box."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "ros"))
    from rosbags.rosbag2 import StoragePlugin
    from test_ros_detections import DETECTIONS, N, OTHER, TOPIC, write_bag
    write_bag(tmp_path / "bag", StoragePlugin.MCAP)
    snap = tmp_path / "last.npy"
    out = run("ros_bag.py", tmp_path / "bag", "--topic", TOPIC, "--headless", "--snapshot", snap)
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("/")}
    assert "image" in lines[TOPIC] and "overlay" in lines[DETECTIONS] and "overlay" in lines[OTHER], out
    assert f"{N} frames shown, {N} boxes drawn" in out, out
    img = np.load(snap)
    assert img.shape == (48, 64, 4)
    # The last frame (grey level N - 1) with its box (centre 25, 20; 8 x 6) outlined: the outline
    # differs from the frame's grey, the middle of the frame far from it does not.
    grey = img[40, 50, :3].astype(int)
    assert np.abs(grey - (N - 1)).max() <= 2
    assert np.abs(img[17, 25, :3].astype(int) - grey).max() > 20, "no box edge"


def test_ros_bag_shows_two_cameras_side_by_side(tmp_path):
    """examples/python/ros_bag.py --topic A --topic B: both cameras of a bag rosbags writes, a tile each
    (Viewer.show(..., stream=)), in log-time order."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "ros"))
    from rosbags.rosbag2 import StoragePlugin, Writer
    from test_ros_detections import H, START_NS, STEP_NS, T, TS, W, header
    n = 5
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        cams = {name: writer.add_connection(name, "sensor_msgs/msg/Image", typestore=TS)
                for name in ("/left/image_raw", "/right/image_raw")}
        for k in range(n):
            for name, level, offset in (("/left/image_raw", 10 + k, 0), ("/right/image_raw", 200 - k, 5_000_000)):
                ns = START_NS + k * STEP_NS + offset
                img = T["sensor_msgs/msg/Image"](header=header(ns), height=H, width=W, encoding="mono8",
                                                 is_bigendian=0, step=W, data=np.full(W * H, level, dtype=np.uint8))
                writer.write(cams[name], ns, bytes(TS.serialize_cdr(img, "sensor_msgs/msg/Image")))
    snap = tmp_path / "both.npy"
    out = run("ros_bag.py", tmp_path / "bag", "--topic", "/left/image_raw", "--topic", "/right/image_raw",
              "--headless", "--snapshot", snap)
    assert f"{2 * n} frames shown" in out, out
    img = np.load(snap)[..., :3].astype(int)
    assert img.shape == (H, 2 * W, 3), img.shape
    assert np.abs(img[:, :W] - (10 + n - 1)).max() <= 1, "the left camera's last frame in the first tile"
    assert np.abs(img[:, W:] - (200 - n + 1)).max() <= 1, "the right camera's last frame in the second tile"


def test_the_layer_examples_end_with_no_display_and_no_headless_flag():
    """They fall back to headless and end after their frames (they waited for a window to be closed that
    was never opened)."""
    for script in ("depth_layer.py", "instance_masks.py", "segmentation_layer.py"):
        assert "3 frames shown" in run(script, "--frames", "3", display=False), script
