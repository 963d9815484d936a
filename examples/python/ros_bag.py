"""Open a ROS 2 bag (a rosbag2 folder, or its .mcap / .db3 file) and show its
cameras with their detections: the topics are listed first (what each is, and
why one cannot be shown), then the image topics play in a viewer, each frame
with the Detection2DArray boxes of its namespace matched by header stamp;
several cameras side by side (a stream each), in log-time order.

    python examples/python/ros_bag.py bag/                       # the first image topic, in a window
    python examples/python/ros_bag.py bag/ --topic /cam/image_raw --headless --snapshot last.npy
    python examples/python/ros_bag.py bag/ --topic /left/image_raw --topic /right/image_raw
"""
import argparse
import contextlib
import heapq

import numpy as np

import handoff


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bag", help="a rosbag2 folder, or its .mcap / .db3 file")
    p.add_argument("--topic", action="append", default=None,
                   help="an image topic (default: the first); repeated: the cameras side by side")
    p.add_argument("--overlay-topic", action="append", default=None,
                   help="a Detection2DArray / ImageAnnotations topic to draw (default: the image topic's namespace)")
    p.add_argument("--headless", action="store_true", help="no window (EGL)")
    p.add_argument("--snapshot", help="write the last displayed frame (with its boxes) here as .npy")
    args = p.parse_args(argv)

    for t in handoff.list_topics(args.bag):
        what = t["shown"] if t["shown"] != "not shown" else f"not shown: {t['note']}"
        print(f"{t['topic']:<28} {t['type']:<36} {t['messages']:>6} msgs {t['rate']:7.2f} Hz  {what}")

    shown = boxes = 0
    with contextlib.ExitStack() as stack:
        sources = [stack.enter_context(handoff.open(args.bag, topic=t, overlay_topics=args.overlay_topic))
                   for t in (args.topic or [None])]
        for source in sources:
            print(f"playing {source.topic}: {len(source)} frames, {source.width}x{source.height} {source.format}")
        names = ", ".join(source.topic for source in sources)
        with handoff.Viewer(title=f"bag: {names}", headless=args.headless) as v:
            # Every camera's frames in log-time order (Frame.timestamp), each into its own tile.
            def frames(source):
                for frame, overlays in source:
                    yield frame.timestamp, source.topic, frame, overlays
            for _, topic, frame, overlays in heapq.merge(*(frames(s) for s in sources), key=lambda f: f[:2]):
                v.show(frame, overlays=overlays, stream=topic if len(sources) > 1 else "")
                shown += 1
                boxes += len(overlays.boxes)
            if args.snapshot:
                np.save(args.snapshot, np.from_dlpack(v.snapshot()))
    print(f"{shown} frames shown, {boxes} boxes drawn")


if __name__ == "__main__":
    main()
