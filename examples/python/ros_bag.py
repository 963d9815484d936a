"""Open a ROS 2 bag (a rosbag2 folder, or its .mcap / .db3 file) and show one
camera with its detections: the topics are listed first (what each is, and why
one cannot be shown), then the image topic plays in a viewer, each frame with
the Detection2DArray boxes of its namespace matched by header stamp.

    python examples/python/ros_bag.py bag/                       # the first image topic, in a window
    python examples/python/ros_bag.py bag/ --topic /cam/image_raw --headless --snapshot last.npy
"""
import argparse

import numpy as np

import handoff


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bag", help="a rosbag2 folder, or its .mcap / .db3 file")
    p.add_argument("--topic", help="the image topic (default: the first)")
    p.add_argument("--overlay-topic", action="append", default=None,
                   help="a Detection2DArray / ImageAnnotations topic to draw (default: the image topic's namespace)")
    p.add_argument("--headless", action="store_true", help="no window (EGL)")
    p.add_argument("--snapshot", help="write the last displayed frame (with its boxes) here as .npy")
    args = p.parse_args(argv)

    for t in handoff.list_topics(args.bag):
        what = t["shown"] if t["shown"] != "not shown" else f"not shown: {t['note']}"
        print(f"{t['topic']:<28} {t['type']:<36} {t['messages']:>6} msgs {t['rate']:7.2f} Hz  {what}")

    shown = boxes = 0
    with handoff.open(args.bag, topic=args.topic, overlay_topics=args.overlay_topic) as source:
        print(f"playing {source.topic}: {len(source)} frames, {source.width}x{source.height} {source.format}")
        with handoff.Viewer(title=f"bag: {source.topic}", headless=args.headless) as v:
            for frame, overlays in source:
                v.show(frame, overlays=overlays)
                shown += 1
                boxes += len(overlays.boxes)
            if args.snapshot:
                np.save(args.snapshot, np.from_dlpack(v.snapshot()))
    print(f"{shown} frames shown, {boxes} boxes drawn")


if __name__ == "__main__":
    main()
