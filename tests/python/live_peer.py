"""The other process of the live tests (test_live.py, fake_cuda/test_fake_cuda_live.py), run as
`python live_peer.py publish|subscribe ENDPOINT ...` with the test's environment.

publish: a handoff.Publisher at ENDPOINT printing "ready <socket path> <memory>" once it listens,
then publishing frame i, index i, every --interval seconds until its stdin closes (then
"published <n> dropped_no_slot <d>"): the test pattern with seed i and one object of overlays (box [i % 40, 2, 10, 8]
xywh, label "obj<i>", score 0.5, class i % 7, track i), or the colour quadrants with none.

subscribe: a handoff.Subscriber printing one JSON line per frame it takes (index, sequence,
memory, SHA-256 of each plane's bytes, boxes, labels) until --frames frames, then exits 0
(2 when none came within --timeout seconds).
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import handoff  # noqa: E402
from viewer_helpers import quadrant_planes  # noqa: E402


def overlays_for(i):
    return dict(boxes=[[i % 40, 2, 10, 8]], labels=[f"obj{i}"], scores=[0.5], class_ids=[i % 7], track_ids=[i])


def frame_for(i, args):
    if args.pattern == "quadrants":
        return quadrant_planes(args.width, args.height, args.format)
    f = handoff.Frame.allocate(args.width, args.height, args.format)
    f.fill_test_pattern(i)
    return f


def publish(args):
    opts = dict(slots=args.slots, memory=args.memory)
    if args.record:
        opts["record"] = args.record
    pub = handoff.Publisher(args.endpoint, **opts)
    print("ready", pub.socket_path, pub.memory, flush=True)
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    i = 0
    while not stop.is_set():
        overlays = overlays_for(i) if args.pattern == "test" else {}  # nothing drawn over the quadrants
        pub.publish(frame_for(i, args), index=i, **overlays)
        i += 1
        time.sleep(args.interval)
    dropped = pub.stats.dropped_no_slot
    pub.close()
    print("published", i, "dropped_no_slot", dropped, flush=True)


def device_bytes(plane):
    """A CUDA plane's bytes, packed, read with cuMemcpyDtoH through the fake driver (the fakecuda tier)."""
    from fake_cuda.conftest import FakeDriver

    drv = FakeDriver(os.environ["HANDOFF_CUDA_DRIVER"])
    shape = plane.shape
    row = shape[1] * (shape[2] if len(shape) == 3 else 1) * (2 if plane.dtype == "uint16" else 1)
    with drv.current(plane.cuda_context):
        result, raw = drv.read(plane.ptr, plane.pitch * (shape[0] - 1) + row)
    assert result == 0, f"cuMemcpyDtoH: CUresult {result}"
    return b"".join(raw[r * plane.pitch: r * plane.pitch + row] for r in range(shape[0]))


def digest(plane):
    if plane.memory == "cuda":
        return hashlib.sha256(device_bytes(plane)).hexdigest()
    return hashlib.sha256(np.ascontiguousarray(np.from_dlpack(plane)).tobytes()).hexdigest()


def subscribe(args):
    with handoff.Subscriber(args.endpoint) as sub:
        taken = 0
        while taken < args.frames:
            f = sub.next(timeout=args.timeout)
            if f is None:
                print("no frame:", sub.status.message, file=sys.stderr, flush=True)
                sys.exit(2)
            with f:
                line = dict(index=f.index, sequence=f.sequence, memory=f.memory, luma=digest(f.luma),
                            chroma=digest(f.chroma), boxes=f.overlays.boxes.tolist(), labels=f.overlays.labels)
            print(json.dumps(line), flush=True)
            taken += 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["publish", "subscribe"])
    p.add_argument("endpoint")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--height", type=int, default=48)
    p.add_argument("--format", default="nv12")
    p.add_argument("--memory", default="host")
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--pattern", choices=["test", "quadrants"], default="test")
    p.add_argument("--record", default="")
    p.add_argument("--interval", type=float, default=0.005)
    p.add_argument("--frames", type=int, default=3)
    p.add_argument("--timeout", type=float, default=20.0)
    args = p.parse_args()
    publish(args) if args.mode == "publish" else subscribe(args)


if __name__ == "__main__":
    main()
