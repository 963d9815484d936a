"""PyTorch on CUDA, zero copy: render frames with torch straight into the
viewer's own buffer (acquire), then present them with boxes.

    python examples/python/torch_acquire.py                # a window where there is a display
    python examples/python/torch_acquire.py --headless --frames 30

acquire() hands out a buffer of the viewer's ring mapped into CUDA;
torch.from_dlpack(f.luma) is a (H, W) uint8 CUDA tensor over it, so copy_()
writes the viewer's buffer directly. Leaving the `with` block synchronises the
CUDA context and presents the frame. Needs PyTorch with CUDA and a GPU that
CUDA and GL share.
"""
import argparse
import sys

import handoff

try:
    import torch
except ImportError:
    torch = None


def render(n, height, width):
    """An NV12 frame on the GPU: a moving luma gradient, a drifting chroma tint, and one box."""
    ys = torch.arange(height, device="cuda").view(-1, 1)
    xs = torch.arange(width, device="cuda").view(1, -1)
    luma = ((xs + ys + 4 * n) % 220 + 16).to(torch.uint8)
    chroma = torch.empty(((height + 1) // 2, (width + 1) // 2, 2), dtype=torch.uint8, device="cuda")
    chroma[..., 0] = 128 + (n % 64) - 32
    chroma[..., 1] = 128
    box = [(8 * n) % max(1, width - 120), height // 3, 120, 90]
    return luma, chroma, box


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--headless", action="store_true")
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    args = p.parse_args(argv)
    if torch is None or not torch.cuda.is_available():
        print("needs PyTorch with a CUDA GPU", file=sys.stderr)
        return 2

    with handoff.Viewer(title="torch acquire", headless=args.headless, memory="cuda") as v:
        for n in range(args.frames):
            luma, chroma, box = render(n, args.height, args.width)
            with v.acquire("nv12", args.width, args.height) as f:
                torch.from_dlpack(f.luma).copy_(luma)      # writes the viewer's buffer: no host copy
                torch.from_dlpack(f.chroma).copy_(chroma)
                f.index = n
                f.set_overlays(boxes=[box], labels=["moving"], scores=[1.0])
            if not v.is_open():
                break
        s = v.stats
        print(f"{s.submitted} frames presented, {s.shown} displayed, memory: {v.stream['memory']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
