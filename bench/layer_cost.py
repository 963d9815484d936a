"""The dense layers' cost on handoff's display rate (issue 23, "at scale": at
most 25% below the same frame with no layers): opencv_compare.py's "bgr8" and
"layers" scenarios alternated in one process, back to back, each pair measured
within seconds so that a machine's load weighs on both alike.

    PYTHONPATH=build/default/python xvfb-run -a -s "-screen 0 1920x1080x24" \\
        .venv/bin/python bench/layer_cost.py --pairs 3 --seconds 3

Prints, per pair, drawn/s of the 1080p BGR image alone and with a full-size
class map and heat map (opencv_compare.make_layers), the display thread's draw
(CPU ms a frame) and the ratio; then the median ratio (goal at least 0.75).
Needs a display (Xvfb) and opencv-python, as opencv_compare.py does.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opencv_compare as oc  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=3, help="image-alone / with-layers pairs")
    p.add_argument("--seconds", type=float, default=3.0, help="each run of a pair")
    p.add_argument("--display", default="window", choices=["window", "auto", "headless"])
    args = p.parse_args(argv)
    frames, layers = oc.make_bgr(8), oc.make_layers(8)
    ratios = []
    for k in range(args.pairs):
        load = open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"
        alone = oc.run_handoff("bgr8", frames, None, args.seconds, args.display)
        with_layers = oc.run_handoff("layers", frames, layers, args.seconds, args.display)
        ratios.append(with_layers["drawn_per_s"] / alone["drawn_per_s"])
        print(f"pair {k} (load {load}): drawn/s {alone['drawn_per_s']:.1f} alone ({alone['draw_ms']:.2f} ms draw), "
              f"{with_layers['drawn_per_s']:.1f} with layers ({with_layers['draw_ms']:.2f} ms): ratio {ratios[-1]:.3f}",
              flush=True)
    print(f"median ratio {statistics.median(ratios):.3f} (goal >= 0.75)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
