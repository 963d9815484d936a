"""Why the cuda tier's Python tests cannot run here (None when they can): no
PyTorch, no GPU visible to it, or handoff cannot use CUDA. Shared by the tier's
test files, each of which skips with this reason."""
import handoff

try:
    import torch
except ImportError:
    torch = None


def why_not():
    if torch is None:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU visible to PyTorch (torch.cuda.is_available() is False)"
    if "unavailable" in handoff.cuda_status():
        return "handoff cannot use CUDA: " + handoff.cuda_status()
    return None
