"""handoff: zero-copy NV12 / P010 video frames for Python.

A :class:`Frame` has two planes (``frame.luma``: (H, W); ``frame.chroma``:
(ceil(H/2), ceil(W/2), 2)), uint8 for NV12 and uint16 for P010 (10 bits in the
top of each little-endian sample). Planes export without copying, read-only:

* ``numpy.from_dlpack(frame.luma)``, ``torch.from_dlpack(frame.chroma)`` (DLPack),
* ``cupy.asarray(plane)`` (``__cuda_array_interface__``, CUDA planes),
* ``numpy.asarray(plane)`` (buffer protocol / ``__array_interface__``, host planes).

:meth:`Frame.from_planes` builds a frame over any DLPack, CUDA Array Interface
or buffer-protocol producer's arrays (NumPy, CuPy, PyTorch) without copying,
and holds the producers alive as long as the frame refers to their memory.
"""
from ._handoff import (  # noqa: F401
    Colorimetry,
    Frame,
    InvalidFrame,
    Plane,
    cuda_status,
    live_objects,
)

__all__ = ["Colorimetry", "Frame", "InvalidFrame", "Plane", "cuda_status", "live_objects"]

# The viewer (built where the viewer library is: every CMake preset, and pip;
# not with HANDOFF_BUILD_VIEWER=OFF).
# ``handoff.Viewer``: show frames and detections from any thread;
# ``handoff.open`` / ``handoff.open_scene``: Y4M, raw, MCAP recordings and the
# built-in scene as (Frame, Overlays); ``handoff.RecordingWriter``: MCAP files;
# ``handoff.Publisher`` / ``handoff.Subscriber``: frames shared with other
# processes. docs/python.md ("The viewer", "Recordings", "Live attach").
from . import _handoff

if hasattr(_handoff, "Viewer"):
    from ._handoff import (  # noqa: F401
        AcquiredFrame,
        AcquiredPlane,
        AttachStatus,
        ClassMap,
        InstanceMasks,
        LiveFrame,
        Overlays,
        ParseError,
        Publisher,
        PublisherStats,
        RecordingStats,
        RecordingWriter,
        ScalarMap,
        Snapshot,
        Source,
        Subscriber,
        SubscriberStats,
        SubscriberStatus,
        Viewer,
        ViewerClosed,
        ViewerStats,
        colormap,
        list_publishers,
        open,
        open_scene,
    )

    __all__ += ["AcquiredFrame", "AcquiredPlane", "AttachStatus", "ClassMap", "InstanceMasks", "LiveFrame",
                "Overlays", "ParseError", "Publisher", "PublisherStats", "RecordingStats", "RecordingWriter",
                "ScalarMap", "Snapshot", "Source", "Subscriber", "SubscriberStats", "SubscriberStatus", "Viewer",
                "ViewerClosed", "ViewerStats", "colormap", "list_publishers", "open", "open_scene"]

__version__ = "0.1.0"
