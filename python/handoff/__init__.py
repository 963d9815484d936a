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
import heapq
import os
import warnings as _warnings

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

    class Timeline:
        """What open_topics returns: several image topics of one recording as one stream in log-time order.
        Iterating yields (topic, Frame, Overlays); `sources` maps each topic to its Source, `topics` lists
        them in the order given, `warnings` joins their warnings (each once). A malformed frame raises its
        ParseError once, after the frames before it were yielded, and its topic reads on after it (call
        next() again: `for` stops at an exception). A context manager; close() closes every source."""

        max_topics = 16  # topics open_topics plays at most: the tiles a viewer shows side by side

        def __init__(self, sources):
            self.sources = dict(sources)
            self.topics = list(self.sources)
            self._heap = None

        def __len__(self):
            return sum(len(s) for s in self.sources.values())

        @property
        def warnings(self):
            seen = []
            for s in self.sources.values():
                seen += [w for w in s.warnings if w not in seen]
            return seen

        def _pull(self, order, topic):
            # The heap holds each topic's next frame, or the ParseError of its next frame that would
            # not decode, at that frame's log time: both come out in log-time order.
            src = self.sources[topic]
            at = src.position
            try:
                item = src.read()
            except ParseError as e:  # the source is past the bad frame: raised in its turn
                heapq.heappush(self._heap, (src.log_time(at), order, topic, e))
                return
            if item is not None:
                heapq.heappush(self._heap, (src.log_time(item[0].index), order, topic, item))

        def __iter__(self):
            self._heap = []
            for order, topic in enumerate(self.topics):
                self.sources[topic].seek(0)
                self._pull(order, topic)
            return self

        def __next__(self):
            if self._heap is None:
                iter(self)
            if not self._heap:
                raise StopIteration
            _, order, topic, item = heapq.heappop(self._heap)
            self._pull(order, topic)  # a topic goes on after its bad frame too
            if isinstance(item, ParseError):
                raise item
            frame, overlays = item
            return topic, frame, overlays

        def close(self):
            for s in self.sources.values():
                s.close()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

    def open_topics(path, topics=None, *, overlay_topics=None):
        """Several image topics of one recording (MCAP, ROS 2 .db3 or bag folder) on one timeline: a
        Timeline yielding (topic, Frame, Overlays) in log-time order (equal times in the order of
        `topics`), one frame of each topic read ahead. `topics`: the image topics to play (default: every
        topic list_topics says is shown as an image, in its order); `overlay_topics` as for open().
        `viewer.show(frame, overlays=overlays, stream=topic)` shows each in its own tile, in step. Each
        topic opens the file: at most Timeline.max_topics (16, the tiles a viewer shows); by default the
        first 16 play, with a warning naming the others. Raises ParseError naming the file, ValueError for an
        empty or repeated topic list or more than 16 topics."""
        path = os.fspath(path)
        limit = Timeline.max_topics
        if topics is None:
            topics = [t["topic"] for t in list_topics(path) if t["shown"] == "image"]
            if not topics:
                raise ValueError(f"open_topics: {path} has no image topic that can be shown "
                                 "(handoff.list_topics says why)")
            if len(topics) > limit:
                _warnings.warn(f"open_topics: {path} has {len(topics)} image topics; playing the first {limit}, "
                              f"leaving out {', '.join(topics[limit:])} (name them in topics= to pick)",
                              stacklevel=2)
                topics = topics[:limit]
        else:
            topics = [topics] if isinstance(topics, str) else list(topics)
            if not topics:
                raise ValueError("open_topics: topics is empty")
            repeated = sorted({t for t in topics if topics.count(t) > 1})
            if repeated:
                raise ValueError(f"open_topics: topics names {', '.join(repeated)} more than once")
            if len(topics) > limit:
                raise ValueError(f"open_topics: {len(topics)} topics; a Timeline plays at most {limit} "
                                 "(each opens the file; a viewer shows 16 side by side)")
        sources = []
        try:
            for t in topics:
                sources.append((t, open(path, topic=t, overlay_topics=overlay_topics)))
        except BaseException:
            for _, s in sources:
                s.close()
            raise
        return Timeline(sources)

    __all__ += ["AcquiredFrame", "AcquiredPlane", "AttachStatus", "ClassMap", "InstanceMasks", "LiveFrame",
                "Overlays", "ParseError", "Publisher", "PublisherStats", "RecordingStats", "RecordingWriter",
                "ScalarMap", "Snapshot", "Source", "Subscriber", "SubscriberStats", "SubscriberStatus", "Viewer",
                "ViewerClosed", "ViewerStats", "colormap", "list_publishers", "list_topics", "open",
                "open_scene", "open_topics", "Timeline", "TopicList"]

__version__ = "0.1.0"
