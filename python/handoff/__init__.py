"""handoff: zero-copy video frames for Python.

A :class:`Frame` has one to three planes (``frame.planes``): nv12 / p010
``frame.luma`` (H, W) and ``frame.chroma`` (ceil(H/2), ceil(W/2), 2); i420
``luma``, ``u``, ``v``; yuyv, uyvy, rgb8, bgr8, rgba8, bgra8 ``frame.pixels``
(H, W, C); gray8, gray16, gray32f ``frame.pixels`` (H, W). uint8 samples,
uint16 for p010 (10 bits in the top of each little-endian sample) and gray16,
float32 for gray32f. Planes export without copying, read-only:

* ``numpy.from_dlpack(frame.luma)``, ``torch.from_dlpack(frame.pixels)`` (DLPack),
* ``cupy.asarray(plane)`` (``__cuda_array_interface__``, CUDA planes),
* ``numpy.asarray(plane)`` (buffer protocol / ``__array_interface__``, host planes).

:meth:`Frame.from_arrays` (and :meth:`Frame.from_planes` for a (luma, chroma)
pair) builds a frame over any DLPack, CUDA Array Interface or buffer-protocol
producer's arrays (NumPy, CuPy, PyTorch) without copying, and holds the
producers alive as long as the frame refers to their memory. Without
``format=`` an (H, W, 3) / (H, W, 4) uint8 array is rgb8 / rgba8 and an (H, W)
uint8 / uint16 / float32 array gray8 / gray16 / gray32f; ``format=`` always
wins (``"bgr8"`` for OpenCV's images, ``"nv12"`` for a stacked NV12 array).
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
import os

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

    class TopicList(list):
        """What list_topics returns: a list of one dict per topic, and `warnings`, the problems found while
        listing that did not stop it (a split bag's file skipped, a damaged tail), worded as Source.warnings
        words them."""

        def __init__(self, rows, warnings):
            super().__init__(rows)
            self.warnings = list(warnings)

    def list_topics(path):
        """Every topic of a recording (MCAP, ROS 2 .db3 or bag folder; a str or os.PathLike), as
        `handoff-view FILE --list` prints them: a TopicList of dicts with topic, type, encoding, messages,
        rate (Hz), shown ('image', 'overlay' or 'not shown') and note (the image's encoding, or why it is
        not shown); its `warnings` say what was wrong but listed anyway (a split bag's file skipped). Raises
        ParseError naming the file."""
        rows, warnings = _handoff.list_topics_and_warnings(os.fspath(path))
        return TopicList(rows, warnings)

    __all__ += ["AcquiredFrame", "AcquiredPlane", "AttachStatus", "ClassMap", "InstanceMasks", "LiveFrame",
                "Overlays", "ParseError", "Publisher", "PublisherStats", "RecordingStats", "RecordingWriter",
                "ScalarMap", "Snapshot", "Source", "Subscriber", "SubscriberStats", "SubscriberStatus", "Viewer",
                "ViewerClosed", "ViewerStats", "colormap", "list_publishers", "list_topics", "open",
                "open_scene", "TopicList"]

__version__ = "0.1.0"
