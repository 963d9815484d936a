// handoff.RecordingWriter: frames and overlays into an MCAP file (docs/recording.md),
// the same writer handoff-view --record and the Publisher's record= use.
//
// The GIL: write (it copies the frame's pixels), flush and close run with it
// released; one lock keeps two Python threads from writing at once (the C++
// writer takes one writing thread at a time).
#include "recording_bindings.hpp"

#include "frame_args.hpp"
#include "layer_bindings.hpp"
#include "module_common.hpp"

#include <handoff/media/mcap.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

namespace handoff::py {
namespace nb = nanobind;
using namespace nb::literals;

namespace {

media::VideoCodec codec_arg(const char* field, const std::string& codec) {
  try {
    return media::parse_video_codec(codec);
  } catch (const UsageError& e) {
    throw nb::value_error((std::string(field) + ": " + e.what()).c_str());
  }
}

}  // namespace

media::RecordTarget record_target(nb::handle path, const std::string& compression,
                                   const std::optional<std::string>& topic, const std::string& codec) {
  media::RecordTarget t;
  const bool recording = path.ptr() && !path.is_none();
  if (!recording) {
    if (compression != "zstd" || topic || codec != "raw") {
      throw nb::value_error(
          "record_compression / record_topic / record_codec: given without record= (the file to record to)");
    }
    return t;
  }
  t.path = path_arg(path, "record");
  t.codec = codec_arg("record_codec", codec);
  if (t.path.empty()) throw nb::value_error("record: an empty path; None records nothing");
  try {
    t.compression = media::mcap::parse_compression(compression);
  } catch (const UsageError& e) {
    throw nb::value_error((std::string("record_compression: ") + e.what()).c_str());
  }
  if (topic) {
    if (topic->empty()) throw nb::value_error("record_topic: empty; None takes the default topic");
    t.topic = *topic;
  }
  return t;
}

namespace {

struct PyRecordingWriter {
  std::unique_ptr<std::mutex> busy = std::make_unique<std::mutex>();
  std::unique_ptr<media::RecordingWriter> writer;
  std::string path, topic;
  std::uint64_t last_log_time = 0;
  media::RecordingStats closed_stats;  // what stats says once closed

  PyRecordingWriter() = default;
  PyRecordingWriter(const PyRecordingWriter&) = delete;
  PyRecordingWriter& operator=(const PyRecordingWriter&) = delete;
  ~PyRecordingWriter() {
    // Closing joins the writer thread and finishes the file: without the GIL (errors are logged).
    without_gil([this] { writer.reset(); });
  }

  media::RecordingWriter& get() {
    if (!writer) throw nb::value_error("the recording is closed");
    return *writer;
  }
};

// The lock, taken without the GIL (a thread holding it may wait for the GIL).
std::unique_lock<std::mutex> lock_writer(PyRecordingWriter& w) {
  return without_gil([&] { return std::unique_lock<std::mutex>(*w.busy); });
}

std::uint64_t time_arg(const char* field, const std::optional<std::int64_t>& ns) {
  if (ns && *ns < 0) throw nb::value_error((std::string(field) + ": must be >= 0 (nanoseconds)").c_str());
  return std::uint64_t(*ns);
}

// The wall clock in nanoseconds, after `last` (log times of one writer increase).
std::uint64_t next_log_time(std::uint64_t last) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto ns = std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
  return ns > last ? ns : last + 1;
}

bool write(PyRecordingWriter& w, nb::handle frame, nb::handle boxes, const std::string& box_format, bool normalized,
           nb::handle labels, nb::handle scores, nb::handle class_ids, nb::handle track_ids, nb::handle keypoints,
           nb::handle skeleton, nb::handle overlays, std::optional<std::string> format,
           std::optional<Colorimetry> colorimetry, std::optional<std::string> topic,
           std::optional<std::int64_t> log_time, std::optional<std::int64_t> publish_time, nb::handle layers) {
  const PyFrame f = frame_of(frame, std::move(format), std::move(colorimetry));
  media::OverlayFrame scratch;
  const media::OverlayFrame& o = resolve_overlays(
      overlay_args(boxes, box_format, normalized, labels, scores, class_ids, track_ids, keypoints, skeleton, overlays),
      f.frame, scratch);
  if (topic && topic->empty()) throw nb::value_error("topic: empty; None takes the writer's topic");
  const std::string& t = topic ? *topic : w.topic;
  std::optional<std::uint64_t> published;
  if (publish_time) published = time_arg("publish_time", publish_time);
  const auto lock = lock_writer(w);
  media::RecordingWriter& rec = w.get();
  const std::uint64_t logged = log_time ? time_arg("log_time", log_time) : next_log_time(w.last_log_time);
  // Dense layers: read in place (kept alive by `keep`), encoded by write() before it returns.
  media::OverlayFrame with_layers;
  LayerKeep keep;
  if (!layers.is_none()) {
    with_layers = o;
    layers_from_objects(layers, with_layers, keep);
  }
  const media::OverlayFrame& written = layers.is_none() ? o : with_layers;
  const bool queued = without_gil([&] { return rec.write(f.frame, written, t, logged, published); });
  w.last_log_time = std::max(w.last_log_time, logged);
  return queued;
}

void close(PyRecordingWriter& w) {
  const auto lock = lock_writer(w);
  if (!w.writer) return;
  std::unique_ptr<media::RecordingWriter> rec = std::move(w.writer);
  without_gil([&] {
    try {
      rec->close();  // throws the recording's first error, if any
    } catch (...) {
      w.closed_stats = rec->stats();
      throw;
    }
    w.closed_stats = rec->stats();
  });
}

void init_writer(PyRecordingWriter* self, nb::handle path, const std::string& compression, int compression_level,
                 std::size_t chunk_size, std::uint64_t chunk_duration_ns, const std::string& topic,
                 bool block_when_full, std::size_t queue_capacity, const std::string& codec) {
  const std::string p = path_arg(path, "path");
  media::RecordingOptions o;
  try {
    o.compression = media::mcap::parse_compression(compression);
  } catch (const UsageError& e) {
    throw nb::value_error((std::string("compression: ") + e.what()).c_str());
  }
  if (topic.empty()) throw nb::value_error("topic: empty (e.g. \"/camera\")");
  if (queue_capacity == 0) throw nb::value_error("queue_capacity: must be >= 1");
  o.codec = codec_arg("codec", codec);
  o.compression_level = compression_level;
  o.chunk_size = chunk_size;
  o.chunk_duration_ns = chunk_duration_ns;
  o.block_when_full = block_when_full;
  o.queue_capacity = queue_capacity;
  auto made = without_gil([&] { return std::make_unique<media::RecordingWriter>(p, o); });
  new (self) PyRecordingWriter();
  self->writer = std::move(made);
  self->path = p;
  self->topic = topic;
}

}  // namespace

void bind_recording(nb::module_& m) {
  nb::class_<media::RecordingStats>(m, "RecordingStats", "RecordingWriter.stats: a snapshot of its counters.")
      .def_ro("frames_written", &media::RecordingStats::frames_written, "Frames (with their overlays) in the file.")
      .def_ro("frames_dropped", &media::RecordingStats::frames_dropped,
              "Frames refused because the queue was full (block_when_full=False).")
      .def_ro("bytes_written", &media::RecordingStats::bytes_written, "File size so far.")
      .def("__repr__", [](const media::RecordingStats& s) {
        return "<handoff.RecordingStats frames_written=" + std::to_string(s.frames_written) +
               " frames_dropped=" + std::to_string(s.frames_dropped) + ">";
      });

  nb::class_<PyRecordingWriter> cls(
      m, "RecordingWriter",
      "Records frames and overlays to an MCAP file (foxglove.RawImage + foxglove.ImageAnnotations), which "
      "handoff.open, handoff-view, Foxglove and the mcap tools read. write() copies the frame and queues it; a "
      "writer thread compresses and writes. A context manager: closes on exit. Any thread (one at a time).");
  cls.def(
      "__init__", &init_writer, "path"_a, nb::kw_only(), "compression"_a = "zstd", "compression_level"_a = 1,
      "chunk_size"_a = 4 << 20, "chunk_duration_ns"_a = 1'000'000'000, "topic"_a = "/handoff",
      "block_when_full"_a = true, "queue_capacity"_a = 4, "codec"_a = "raw",
      "Creates (truncates) `path`. compression: 'zstd', 'lz4' or 'none'. A chunk is written once it holds "
      "chunk_size bytes or its log times span chunk_duration_ns (0: no time bound), which bounds what a crash "
      "loses. codec: 'raw' (foxglove.RawImage) or 'h264' / 'h265' (foxglove.CompressedVideo: libx264 / libx265 on "
      "the writer thread; frames need an even width and height). block_when_full: write() waits for room in the queue (False: it drops the frame and returns False).");
  std::apply(
      [&](auto&&... kw) {
        cls.def("write", &write, "frame"_a, nb::kw_only(), kw..., "format"_a = nb::none(),
                "colorimetry"_a = nb::none(), "topic"_a = nb::none(), "log_time"_a = nb::none(),
                "publish_time"_a = nb::none(), "layers"_a = nb::none(),
                "Queues `frame` (host memory: a handoff.Frame, one array, a (luma, chroma) pair or (luma, u, "
                "v), as Viewer.show takes it, format= rule included) with its overlays on `topic` (default: the writer's). log_time / "
                "publish_time: nanoseconds (default: the wall clock, increasing). layers: handoff.ClassMap / "
                "ScalarMap / InstanceMasks, each on '<topic>/layers/<i>'. False when dropped.");
      },
      overlay_kwargs());
  cls.def("flush", [](PyRecordingWriter& w) {
        const auto lock = lock_writer(w);
        media::RecordingWriter& rec = w.get();
        without_gil([&] { rec.flush(); });
      }, "Waits until every queued frame is in the file.")
      .def("close", &close, "Writes the rest, the summary and the footer, and closes the file (idempotent).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyRecordingWriter& w, nb::handle, nb::handle, nb::handle) { close(w); },
           "type"_a.none(), "value"_a.none(), "traceback"_a.none())
      .def_prop_ro("stats", [](PyRecordingWriter& w) {
        const auto lock = lock_writer(w);
        return w.writer ? w.writer->stats() : w.closed_stats;
      }, "Frames written and dropped, bytes written (the final figures once closed).")
      .def_prop_ro("path", [](const PyRecordingWriter& w) { return w.path; })
      .def_prop_ro("topic", [](const PyRecordingWriter& w) { return w.topic; });
}

}  // namespace handoff::py
