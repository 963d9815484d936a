// handoff.Viewer and the file sources in Python (bind_viewer): show frames and
// detections from any thread, acquire the viewer's own buffers for writing
// (acquired_frame.hpp), snapshots as RGBA arrays, record= (an MCAP file),
// attach to a publisher in another process, handoff.open / handoff.open_scene
// yielding frames with their overlays (Y4M, raw, MCAP recordings, the scene).
// docs/python.md ("The viewer") is the reference.
//
// The GIL: every call that can block (opening the viewer, show, acquire,
// present, snapshot, close, attach, waits, reading a file) runs with it
// released; converting Python arrays into a frame or overlays runs with it held.
#include "viewer_bindings.hpp"

#include "acquired_frame.hpp"
#include "capsules.hpp"
#include "frame_args.hpp"
#include "layer_bindings.hpp"
#include "live_bindings.hpp"
#include "module_common.hpp"
#include "recording_bindings.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/dlpack.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/viewer.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/overlay.hpp>
#include <handoff/media/raw_reader.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/media/scene.hpp>
#include <handoff/media/y4m_reader.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace handoff::py {
namespace nb = nanobind;
using namespace nb::literals;
namespace {

// --- overlays -------------------------------------------------------------------------
nb::object numpy_array(const nb::list& values, const char* dtype) {
  return nb::module_::import_("numpy").attr("array")(values, "dtype"_a = dtype);
}

nb::object overlay_boxes(const media::OverlayFrame& f) {
  nb::list rows;
  for (const auto& o : f.objects) {
    if (o.has_box) rows.append(nb::make_tuple(o.x0, o.y0, o.x1, o.y1));
    else rows.append(nb::make_tuple(NAN, NAN, NAN, NAN));
  }
  return numpy_array(rows, "float32").attr("reshape")(f.objects.size(), 4);
}

template <typename Get>
nb::object overlay_column(const media::OverlayFrame& f, const char* dtype, Get get) {
  nb::list l;
  for (const auto& o : f.objects) l.append(get(o));
  return numpy_array(l, dtype);
}

// --- snapshots ------------------------------------------------------------------------
struct PySnapshot {
  RgbaImage image;
};

nb::object snapshot_dlpack(const PySnapshot& s, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                           nb::handle copy) {
  const DlpackRequest r = dlpack_request(DLDevice{kDLCPU, 0}, stream, max_version, dl_device, copy);
  if (r.copy) {
    const std::uint8_t* px = s.image.data();  // copies of an RgbaImage share its pixels: these are new ones
    const RgbaImage c(s.image.width(), s.image.height(),
                      std::vector<std::uint8_t>(px, px + s.image.stride() * s.image.height()));
    return dlpack_capsule(
        r.versioned, kDLPackFlagIsCopied, [&] { return c.to_dlpack_versioned(); }, [&] { return c.to_dlpack(); });
  }
  return dlpack_capsule(
      r.versioned, kDLPackFlagReadOnly, [&] { return s.image.to_dlpack_versioned(); },
      [&] { return s.image.to_dlpack(); });
}

nb::dict snapshot_interface(const PySnapshot& s) {
  nb::dict d;
  d["shape"] = nb::make_tuple(s.image.height(), s.image.width(), 4);
  d["typestr"] = "|u1";
  d["data"] = nb::make_tuple(reinterpret_cast<std::uintptr_t>(s.image.data()), true);
  d["strides"] = nb::none();
  d["version"] = 3;
  return d;
}

// --- the viewer -----------------------------------------------------------------------
struct PyViewer {
  std::unique_ptr<Viewer> viewer;
  int cuda_device = 0;  // ViewerOptions::cuda_device: where CUDA frames must be

  PyViewer() = default;
  PyViewer(const PyViewer&) = delete;
  PyViewer& operator=(const PyViewer&) = delete;
  ~PyViewer() {
    // Closing waits for the display thread: without the GIL, so no Python thread stalls.
    without_gil([this] { viewer.reset(); });
  }
  Viewer& get() { return *viewer; }
};

ViewerOptions viewer_options(const std::string& title, int width, int height, bool vsync, bool show_ui,
                             bool show_overlays, bool headless, const std::string& display, const std::string& memory,
                             int cuda_device, std::size_t ring, const std::string& paused_show,
                             const std::string& output_dir, const std::string& screenshot, bool gl_debug,
                             const std::string& convert) {
  ViewerOptions o;
  o.title = title;
  o.width = width;
  o.height = height;
  o.vsync = vsync;
  o.show_ui = show_ui;
  o.show_overlays = show_overlays;
  if (display == "auto") o.display = ViewerDisplay::Auto;
  else if (display == "window") o.display = ViewerDisplay::Window;
  else if (display == "headless") o.display = ViewerDisplay::Headless;
  else throw nb::value_error(("display: '" + display + "' is not 'auto', 'window' or 'headless'").c_str());
  if (headless) o.display = ViewerDisplay::Headless;
  if (memory == "auto") o.memory = ViewerMemory::Auto;
  else if (memory == "cuda") o.memory = ViewerMemory::Cuda;
  else if (memory == "host") o.memory = ViewerMemory::Host;
  else throw nb::value_error(("memory: '" + memory + "' is not 'auto', 'cuda' or 'host'").c_str());
  o.cuda_device = cuda_device;
  o.ring = ring;
  if (paused_show == "keep_newest") o.paused_show = PausedShow::KeepNewest;
  else if (paused_show == "block") o.paused_show = PausedShow::Block;
  else throw nb::value_error(("paused_show: '" + paused_show + "' is not 'keep_newest' or 'block'").c_str());
  o.output_dir = output_dir;
  o.screenshot = screenshot;
  o.gl_debug = gl_debug;
  if (convert == "auto") o.convert = ViewerConvert::Auto;
  else if (convert == "gpu") o.convert = ViewerConvert::Gpu;
  else if (convert == "cpu") o.convert = ViewerConvert::Cpu;
  else throw nb::value_error(("convert: '" + convert + "' is not 'auto', 'gpu' or 'cpu'").c_str());
  return o;
}

void show(PyViewer& v, nb::handle frame_obj, const OverlayArgs& ov, std::optional<std::string> format,
          std::optional<Colorimetry> colorimetry, nb::handle layers, const std::string& stream) {
  const PyFrame f = frame_of(frame_obj, format, colorimetry);
  if (f.frame.memory == MemoryKind::Cuda && f.frame.device != v.cuda_device) {
    // Before the ring's own checks, whatever the format: the array is the caller's mistake to name.
    throw InvalidFrame("frame.device", "a CUDA frame on device " + std::to_string(f.frame.device) +
                                           "; this viewer is on CUDA device " + std::to_string(v.cuda_device) +
                                           " (Viewer(cuda_device=...)): handoff does not copy between devices");
  }
  media::OverlayFrame scratch;
  const media::OverlayFrame& overlays = resolve_overlays(ov, f.frame, scratch);
  // paused_show="block": the wait for the pause in slices, so Ctrl-C ends it (show's own wait does not look).
  // Only while paused: the common call pays no extra GIL release.
  Viewer& viewer = v.get();
  if (viewer.paused()) {
    wait_in_slices(std::nullopt, [&](std::chrono::nanoseconds slice) {
      return viewer.wait_show_unblocked_for(stream, std::chrono::duration_cast<std::chrono::milliseconds>(slice));
    });
  }
  if (layers.is_none()) return without_gil([&] { v.get().show(f.frame, overlays, stream); });
  // Dense layers: read in place (kept alive by `keep` for the call), copied by show().
  media::OverlayFrame with_layers = overlays;
  LayerKeep keep;
  layers_from_objects(layers, with_layers, keep);
  without_gil([&] { v.get().show(f.frame, with_layers, stream); });
}

// Blocks until closed or `timeout` seconds (None: no limit), in short waits
// without the GIL so Ctrl-C (a pending signal) ends it.
bool wait_closed(PyViewer& v, std::optional<double> timeout) {
  Viewer& viewer = v.get();
  const bool closed = wait_in_slices(timeout_arg("timeout", timeout), [&](std::chrono::nanoseconds slice) {
    return viewer.wait_closed_for(std::chrono::duration_cast<std::chrono::milliseconds>(slice));
  });
  if (closed) without_gil([&] { viewer.wait_closed(); });  // rethrows what the display thread stopped on
  return closed;
}

// --- acquire: the viewer's own buffer, written through DLPack --------------------------
// The AcquiredFrame's owner holds the ViewerFrame; presenting moves it out.
PyAcquired acquire(nb::handle self, const std::string& format, std::uint32_t width, std::uint32_t height,
                   std::optional<Colorimetry> colorimetry, const std::string& stream) {
  Viewer& v = nb::cast<PyViewer&>(self).get();
  const PixelFormat pf = enum_arg<PixelFormat>("format", format);
  auto slot = std::make_shared<ViewerFrame>(
      without_gil([&] { return v.acquire(pf, width, height, colorimetry.value_or(Colorimetry{}), stream); }));
  ViewerFrame* held = slot.get();
  Frame frame = held->frame();
  return make_acquired(self, std::move(frame), std::move(slot),
                       [&v, held](std::shared_ptr<const void> owner, const Frame& f, const media::OverlayFrame& o) {
                         ViewerFrame out = std::move(*held);
                         out.frame().index = f.index;
                         out.frame().timestamp = f.timestamp;
                         owner.reset();
                         v.present(std::move(out), o);
                       });
}

// --- sources: handoff.open / handoff.open_scene ------------------------------------------
// A FrameSource is one thread's at a time and its reads run without the GIL:
// `busy` keeps two Python threads from reading, seeking or closing it at once.
struct PySource {
  std::unique_ptr<std::mutex> busy = std::make_unique<std::mutex>();
  std::unique_ptr<media::FrameSource> source;
  media::RecordingSource* recording = nullptr;  // `source`, when it is an MCAP recording
  media::OverlayStore file_overlays;
  bool has_file_overlays = false;
  std::int64_t limit = -1;  // frames to yield (-1: the source's end)
  std::int64_t yielded = 0;

  media::FrameSource& get() {
    if (!source) throw nb::value_error("the source is closed");
    return *source;
  }
};

// Holds the source's lock, taken without the GIL (another thread may hold the
// lock while it waits for the GIL itself).
std::unique_lock<std::mutex> lock_source(PySource& s) {
  return without_gil([&] { return std::unique_lock<std::mutex>(*s.busy); });
}

nb::object read_next(PySource& s) {
  const auto lock = lock_source(s);
  media::FrameSource& src = s.get();
  if (s.limit >= 0 && s.yielded >= s.limit) return nb::none();
  const media::SourceInfo& info = src.info();
  const std::int64_t index = src.position();
  const bool at_end = info.frame_count >= 0 && index >= info.frame_count;
  HostFrameOptions ho;
  ho.colorimetry = s.recording && !at_end ? s.recording->colorimetry(index) : info.colorimetry;
  Frame frame = allocate_host_frame(info.format, info.width, info.height, ho);
  auto overlays = std::make_shared<media::OverlayFrame>();
  const bool got = without_gil([&] {
    if (!src.read_into(media::write_target(frame))) return false;
    if (s.has_file_overlays) {
      if (const media::OverlayFrame* o = s.file_overlays.find(index)) *overlays = *o;
    } else {
      src.overlays_for(index, *overlays);
    }
    return true;
  });
  if (!got) return nb::none();
  ++s.yielded;
  frame.index = index;
  if (s.recording) frame.timestamp = double(s.recording->log_time(index)) * 1e-9;  // the recorded log time
  else frame.timestamp = info.rate.value() > 0 ? double(index) / info.rate.value() : 0.0;
  return nb::make_tuple(PyFrame{std::move(frame), true}, PyOverlays{std::move(overlays)});
}

void load_overlay_file(PySource& s, const std::optional<std::string>& path) {
  if (!path) return;
  const media::SourceInfo& info = s.get().info();
  media::OverlayParseOptions po;
  po.frame_width = float(info.width);
  po.frame_height = float(info.height);
  without_gil([&] { s.file_overlays.load_jsonl(*path, po); });
  s.has_file_overlays = true;
}

bool is_mcap(const std::string& path) { return media::is_recording_path(path); }

PySource open_recording(const std::string& path, std::optional<std::string> topic,
                        std::optional<std::vector<std::string>> overlay_topics) {
  media::RecordingOpenOptions ro;
  if (topic) {
    if (topic->empty()) throw nb::value_error("topic: empty; None plays the first image topic");
    ro.topic = *topic;
  }
  if (overlay_topics) {
    for (const std::string& t : *overlay_topics)
      if (t.empty()) throw nb::value_error("overlay_topics: an empty topic name");
    ro.overlay_topics = std::move(*overlay_topics);
  }
  PySource s;
  std::unique_ptr<media::RecordingSource> rec = without_gil([&] { return media::open_recording(path, ro); });
  s.recording = rec.get();
  s.source = std::move(rec);
  return s;
}

PySource open_file(nb::handle path_obj, std::optional<std::string> format, std::optional<std::uint32_t> width,
                   std::optional<std::uint32_t> height, std::optional<Colorimetry> colorimetry,
                   std::optional<double> rate, std::optional<std::string> overlays, std::optional<std::string> topic,
                   std::optional<std::vector<std::string>> overlay_topics) {
  const std::string path = path_arg(path_obj, "path");
  PySource s;
  const bool raw = width || height || format;
  if (is_mcap(path)) {
    if (raw || colorimetry || rate) {
      throw nb::value_error("format / width / height / colorimetry / rate: an MCAP recording says its own");
    }
    s = open_recording(path, std::move(topic), std::move(overlay_topics));
  } else if (topic) {
    throw nb::value_error("topic: only for recordings (a '.mcap' or ROS 2 '.db3' file)");
  } else if (overlay_topics) {
    throw nb::value_error("overlay_topics: only for ROS 2 bags (a '.mcap' or '.db3' file or a bag folder)");
  } else if (raw) {
    if (!width || !height) throw nb::value_error("width / height: a raw file needs both");
    media::RawOptions ro;
    ro.format = enum_arg<PixelFormat>("format", format.value_or("nv12"));
    ro.width = *width;
    ro.height = *height;
    if (colorimetry) ro.colorimetry = *colorimetry;
    if (rate) {
      if (!(*rate > 0) || !std::isfinite(*rate)) throw nb::value_error("rate: must be a positive number");
      ro.rate = media::Rational{std::int64_t(std::llround(*rate * 1000)), 1000};
    }
    s.source = without_gil([&] { return media::open_raw(path, ro); });
  } else {
    if (colorimetry || rate) {
      throw nb::value_error("colorimetry / rate: a Y4M file says its own; pass them only for raw files");
    }
    s.source = without_gil([&] { return media::open_y4m(path); });
  }
  load_overlay_file(s, overlays);
  return s;
}

PySource open_scene(std::uint32_t width, std::uint32_t height, const std::string& format,
                    std::optional<std::int64_t> frames) {
  if (frames && *frames < 0) throw nb::value_error("frames: must be >= 0 (None: endless)");
  media::SceneOptions so;
  so.width = width;
  so.height = height;
  so.format = enum_arg<PixelFormat>("format", format);
  PySource s;
  s.source = without_gil([&] { return media::make_scene_source(so); });
  s.limit = frames.value_or(-1);
  return s;
}


// --- bindings: one function per class (bind_viewer adds them in this order) -----------
PyOverlays overlays_from_args(nb::handle boxes, const std::string& box_format, bool normalized,
                              std::optional<std::uint32_t> width, std::optional<std::uint32_t> height,
                              nb::handle labels, nb::handle scores, nb::handle class_ids, nb::handle track_ids,
                              nb::handle keypoints, nb::handle skeleton) {
  if (normalized && (!width || !height)) {
    throw nb::value_error("normalized: needs the frame's width= and height=");
  }
  OverlayArrays a{boxes, labels, scores, class_ids, track_ids, keypoints, skeleton, box_format, normalized};
  auto f = std::make_shared<media::OverlayFrame>();
  overlays_from_arrays(a, width.value_or(0), height.value_or(0), *f);
  return PyOverlays{std::move(f)};
}

nb::list overlay_labels(const PyOverlays& o) {
  nb::list l;
  for (const auto& obj : o.overlays->objects) {
    if (obj.label.empty()) l.append(nb::none());
    else l.append(nb::str(o.overlays->text(obj.label).data(), obj.label.size));
  }
  return l;
}

void bind_overlays(nb::module_& m) {
  nb::class_<PyOverlays>(m, "Overlays",
                         "One frame's overlays (objects with boxes, labels, scores, class and track ids, "
                         "keypoints; shapes and texts). Pass to Viewer.show(frame, overlays=...). Immutable.")
      .def(nb::init<>())
      .def_static("from_arrays", &overlays_from_args, "boxes"_a = nb::none(), "box_format"_a = "xywh",
                  "normalized"_a = false, "width"_a = nb::none(), "height"_a = nb::none(), "labels"_a = nb::none(),
                  "scores"_a = nb::none(), "class_ids"_a = nb::none(), "track_ids"_a = nb::none(),
                  "keypoints"_a = nb::none(), "skeleton"_a = nb::none(),
                  "Overlays from arrays, as Viewer.show takes them (normalized coordinates need width= and height=).")
      .def("__len__", [](const PyOverlays& o) { return o.overlays->objects.size(); })
      .def_prop_ro("boxes", [](const PyOverlays& o) { return overlay_boxes(*o.overlays); },
                   "(N, 4) float32, xyxy pixels; NaN rows for objects without a box.")
      .def_prop_ro("labels", &overlay_labels, "N labels (None where an object has none).")
      .def_prop_ro("scores", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "float32", [](const media::OverlayObject& x) { return x.score; });
      }, "(N,) float32; NaN where an object has no score.")
      .def_prop_ro("class_ids", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "int32", [](const media::OverlayObject& x) { return x.class_id; });
      }, "(N,) int32; -1 where none.")
      .def_prop_ro("track_ids", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "int32", [](const media::OverlayObject& x) { return x.track_id; });
      }, "(N,) int32; -1 where none.")
      .def_prop_ro("keypoint_counts", [](const PyOverlays& o) {
        return overlay_column(*o.overlays, "int32",
                              [](const media::OverlayObject& x) { return std::int64_t(x.keypoint_count); });
      }, "(N,) int32: keypoints of each object.")
      .def_prop_ro("shapes", [](const PyOverlays& o) { return o.overlays->shapes.size(); },
                   "Number of polygons and polylines.")
      .def_prop_ro("texts", [](const PyOverlays& o) { return o.overlays->texts.size(); }, "Number of free texts.")
      .def_prop_ro("layers", [](const PyOverlays& o) { return layers_to_objects(*o.overlays); },
                   "The dense layers (handoff.ClassMap / ScalarMap / InstanceMasks over read-only arrays) a "
                   "Subscriber received or a recording holds for the frame; [] when none.")
      .def("__repr__", [](const PyOverlays& o) {
        return "<handoff.Overlays " + std::to_string(o.overlays->objects.size()) + " objects>";
      });
}

void bind_viewer_stats(nb::module_& m) {
  nb::class_<ViewerStats>(m, "ViewerStats", "Viewer.stats: what the viewer did (a snapshot of its counters).")
      .def_ro("submitted", &ViewerStats::submitted, "Frames handed in (show / present).")
      .def_ro("shown", &ViewerStats::shown, "Frames displayed.")
      .def_ro("dropped", &ViewerStats::dropped, "Frames replaced by a newer one before they were displayed.")
      .def_ro("last_index", &ViewerStats::last_index, "Frame.index of the frame on display (-1: none yet).")
      .def_ro("display_fps", &ViewerStats::display_fps, "Displayed frames per second (smoothed).")
      .def_ro("latency_p50_ms", &ViewerStats::latency_p50_ms, "show() to displayed, median (ms).")
      .def_ro("latency_p99_ms", &ViewerStats::latency_p99_ms, "show() to displayed, 99th percentile (ms).")
      .def_ro("frame_p50_ms", &ViewerStats::frame_p50_ms)
      .def_ro("frame_p99_ms", &ViewerStats::frame_p99_ms)
      .def_ro("copy_ms", &ViewerStats::copy_ms, "Mean time of the producer's copy into the viewer's buffer (ms).")
      .def_ro("map_ms", &ViewerStats::map_ms, "Of copy_ms: mapping the buffer (ms).")
      .def_ro("upload_ms", &ViewerStats::upload_ms, "Mean upload of a frame into the display's textures (ms).")
      .def_ro("draw_ms", &ViewerStats::draw_ms, "Mean CPU time to submit a frame's drawing (ms).")
      .def_ro("recorded", &ViewerStats::recorded, "record=: displayed frames in the recording.")
      .def_ro("record_dropped", &ViewerStats::record_dropped,
              "record=: displayed frames left out of the recording (its readback or writer queue was full).")
      .def_ro("record_skipped", &ViewerStats::record_skipped,
              "record=: displayed frames the recording cannot hold (another format or size than its first frame).")
      .def("__repr__", [](const ViewerStats& s) {
        return "<handoff.ViewerStats submitted=" + std::to_string(s.submitted) + " shown=" + std::to_string(s.shown) +
               " dropped=" + std::to_string(s.dropped) + " display_fps=" + std::to_string(s.display_fps) + ">";
      });
}

void bind_snapshot(nb::module_& m) {
  nb::class_<PySnapshot>(m, "Snapshot",
                         "RGBA8 pixels, (height, width, 4), rows top-down: numpy.from_dlpack(s) or "
                         "numpy.asarray(s) reads it without a copy (read-only).")
      .def("__dlpack__", &snapshot_dlpack, nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none())
      .def("__dlpack_device__", [](const PySnapshot&) { return nb::make_tuple(int(kDLCPU), 0); })
      .def_prop_ro("__array_interface__", &snapshot_interface)
      .def_prop_ro("width", [](const PySnapshot& s) { return s.image.width(); })
      .def_prop_ro("height", [](const PySnapshot& s) { return s.image.height(); })
      .def_prop_ro("shape", [](const PySnapshot& s) { return nb::make_tuple(s.image.height(), s.image.width(), 4); })
      .def("__repr__", [](const PySnapshot& s) {
        return "<handoff.Snapshot " + std::to_string(s.image.width()) + "x" + std::to_string(s.image.height()) + ">";
      });
}

void bind_attach_status(nb::module_& m) {
  nb::class_<AttachStatus>(m, "AttachStatus", "Viewer.attach_status: the attached publisher's link (a snapshot).")
      .def_ro("publisher", &AttachStatus::publisher, "The publisher's name.")
      .def_ro("socket", &AttachStatus::socket, "The socket path.")
      .def_ro("state", &AttachStatus::state, "'waiting', 'live', 'gone' or 'failed'.")
      .def_ro("message", &AttachStatus::message)
      .def_ro("pid", &AttachStatus::pid, "The (last) publisher's process id; 0 before the first connection.")
      .def_ro("memory", &AttachStatus::memory, "How the slots are shared, as the publisher says.")
      .def_ro("publisher_fps", &AttachStatus::publisher_fps)
      .def_ro("received", &AttachStatus::received)
      .def_ro("publisher_dropped", &AttachStatus::publisher_dropped, "Dropped by the publisher: every slot held.")
      .def_ro("publisher_skipped", &AttachStatus::publisher_skipped, "Not sent to this viewer.")
      .def_ro("viewer_dropped", &AttachStatus::viewer_dropped, "Replaced here before the display took them.")
      .def_ro("connections", &AttachStatus::connections)
      .def("__repr__", [](const AttachStatus& s) {
        return "<handoff.AttachStatus '" + s.publisher + "' " + s.state + ": " + s.message + ">";
      });
}

// --- handoff.Viewer: its methods in groups (def_viewer_*) -------------------------------
using ViewerClass = nb::class_<PyViewer>;

void init_viewer(PyViewer* self, const std::string& title, int width, int height, bool vsync, bool show_ui,
                 bool show_overlays, bool headless, const std::string& display, const std::string& memory,
                 int cuda_device, std::size_t ring, const std::string& paused_show, const std::string& output_dir,
                 const std::string& screenshot, bool gl_debug, nb::handle record, const std::string& record_compression,
                 std::optional<std::string> record_topic, const std::string& convert, const std::string& record_codec) {
  ViewerOptions o = viewer_options(title, width, height, vsync, show_ui, show_overlays, headless, display, memory,
                                   cuda_device, ring, paused_show, output_dir, screenshot, gl_debug, convert);
  o.record = record_target(record, record_compression, record_topic, record_codec);
  auto made = without_gil([&] { return std::make_unique<Viewer>(o); });  // may throw: nothing made yet
  new (self) PyViewer();
  self->viewer = std::move(made);
  self->cuda_device = cuda_device;
}

// __init__ and the context manager.
void def_viewer_open(ViewerClass& cls) {
  cls.def("__init__", &init_viewer, nb::kw_only(), "title"_a = "handoff", "width"_a = 1280, "height"_a = 720,
          "vsync"_a = true, "show_ui"_a = true, "show_overlays"_a = true, "headless"_a = false,
          "display"_a = "auto", "memory"_a = "auto", "cuda_device"_a = 0, "ring"_a = 3,
          "paused_show"_a = "keep_newest", "output_dir"_a = "", "screenshot"_a = "", "gl_debug"_a = false,
          "record"_a = nb::none(), "record_compression"_a = "zstd", "record_topic"_a = nb::none(),
          "convert"_a = "auto", "record_codec"_a = "raw")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyViewer& v, nb::handle, nb::handle, nb::handle) { without_gil([&] { v.get().close(); }); },
           "type"_a.none(), "value"_a.none(), "traceback"_a.none());
}

void show_with_overlays(PyViewer& v, nb::handle frame, nb::handle boxes, const std::string& box_format,
                        bool normalized, nb::handle labels, nb::handle scores, nb::handle class_ids,
                        nb::handle track_ids, nb::handle keypoints, nb::handle skeleton, nb::handle overlays,
                        std::optional<std::string> format, std::optional<Colorimetry> colorimetry, nb::handle layers,
                        const std::string& stream) {
  show(v, frame,
       overlay_args(boxes, box_format, normalized, labels, scores, class_ids, track_ids, keypoints, skeleton, overlays),
       std::move(format), std::move(colorimetry), layers, stream);
}

nb::object take_snapshot(PyViewer& v, const std::string& kind) {
  SnapshotKind k;
  if (kind == "frame") k = SnapshotKind::Frame;
  else if (kind == "view") k = SnapshotKind::View;
  else throw nb::value_error(("kind: '" + kind + "' is not 'frame' or 'view'").c_str());
  RgbaImage img = without_gil([&] { return v.get().snapshot(k); });
  if (img.empty()) return nb::none();
  return nb::cast(PySnapshot{std::move(img)});
}

// Frames in (show, acquire) and out (snapshot).
void def_viewer_frames(ViewerClass& cls) {
  cls.def("show", &show_with_overlays, "frame"_a, nb::kw_only(), "boxes"_a = nb::none(), "box_format"_a = "xywh",
          "normalized"_a = false, "labels"_a = nb::none(), "scores"_a = nb::none(), "class_ids"_a = nb::none(),
          "track_ids"_a = nb::none(), "keypoints"_a = nb::none(), "skeleton"_a = nb::none(),
          "overlays"_a = nb::none(), "format"_a = nb::none(), "colorimetry"_a = nb::none(), "layers"_a = nb::none(),
          "stream"_a = "",
          "Shows `frame` (a handoff.Frame, one array, a (luma, chroma) pair or (luma, u, v); NumPy, PyTorch, "
          "CuPy, host or CUDA) with its overlays and dense `layers` (handoff.ClassMap, ScalarMap, "
          "InstanceMasks: drawn over the frame in order, under the boxes). `format` always wins; without it "
          "an H x W x 3 uint8 array "
          "is rgb8, H x W x 4 uint8 rgba8, H x W uint8 / uint16 / float32 gray8 / gray16 / gray32f, a pair "
          "nv12 (p010 when uint16), three arrays i420. Anything else needs format=: 'bgr8' for OpenCV's "
          "images, 'yuyv' / 'uyvy', and 'nv12' / 'p010' for one stacked (H + H/2, W) array. Returns once the "
          "frame and layers are copied; never waits for the display. The arrays may be reused when it returns. "
          "`stream`: the tile to show it in, side by side with the other streams (made on its first frame; "
          "'' is the first tile, which takes the first stream's name when nothing was shown there yet).")
      .def("acquire", &acquire, "format"_a, "width"_a, "height"_a, "colorimetry"_a = nb::none(), nb::kw_only(),
           "stream"_a = "",
           "A buffer of the viewer's ring to write into (AcquiredFrame; a context manager presenting it); "
           "`stream` as show()'s.")
      .def("snapshot", &take_snapshot, "kind"_a = "frame",
           "What is displayed, once the newest frame handed in is: 'frame' (the frame with its overlays at "
           "its own size) or 'view' (the view as shown, UI included). None before the first frame.");
}

nb::dict stream_dict(const PyViewer& v) {
  const StreamInfo s = v.viewer->stream();
  nb::dict d;
  d["name"] = s.name;
  d["source"] = s.source;
  d["memory"] = s.memory;
  d["format"] = std::string(to_string(s.format));
  d["width"] = s.width;
  d["height"] = s.height;
  d["ring"] = s.ring;
  d["convert"] = s.convert;
  return d;
}

nb::dict diagnostics_dict(const PyViewer& v) {
  const ViewerDiagnostics dg = v.viewer->diagnostics();
  nb::dict d;
  d["gl_errors"] = dg.gl_errors;
  d["first_gl_error"] = dg.first_gl_error;
  d["output_written"] = dg.output_written;
  nb::list record_errors;
  for (const auto& e : dg.record_errors) record_errors.append(e);
  d["record_errors"] = record_errors;
  nb::list errors;
  for (const auto& e : dg.output_errors) errors.append(e);
  d["output_errors"] = errors;
  return d;
}

// Whether it is open, closing it, and what it reports (stats, stream, diagnostics).
void def_viewer_state(ViewerClass& cls) {
  cls.def("is_open", [](const PyViewer& v) { return v.viewer->is_open(); })
      .def_prop_ro("windowed", [](const PyViewer& v) { return v.viewer->windowed(); },
                   "True when the viewer has a window; False when it draws headless (headless=True, or no "
                   "display worked). Only a window is closed by a person: wait_closed() on a headless viewer "
                   "waits for close() or Ctrl-C.")
      .def("close", [](PyViewer& v) { without_gil([&] { v.get().close(); }); })
      .def("wait_closed", &wait_closed, "timeout"_a = nb::none(),
           "Blocks (GIL released) until the viewer closes or `timeout` seconds pass; True when closed. "
           "Raises what the display thread stopped on, if anything.")
      .def_prop_ro("stats", [](const PyViewer& v) { return v.viewer->stats(); })
      .def_prop_ro("stream", &stream_dict)
      .def_prop_ro("diagnostics", &diagnostics_dict);
}

void attach_viewer(PyViewer& v, nb::handle name_or_path, std::int64_t frames, std::optional<unsigned> allow_group) {
  const std::string where = endpoint_arg(name_or_path);
  if (frames < -1) throw nb::value_error("frames: must be >= 0, or -1 (until closed)");
  AttachOptions o;
  o.frames = frames;
  o.allow_group = allow_group;
  without_gil([&] { v.get().attach(where, o); });
}

nb::list tiles_list(PyViewer& v) {
  const std::vector<Viewer::TileStatus> tiles = without_gil([&] { return v.get().tiles(); });
  nb::list out;
  for (const Viewer::TileStatus& t : tiles) {
    nb::dict d;
    d["name"] = t.name;
    d["frame"] = t.frame;
    d["time_ns"] = t.time_ns;
    d["offset_ns"] = t.offset_ns;
    d["clock"] = t.clock;
    out.append(d);
  }
  return out;
}

// Pausing and stepping, and attaching to a publisher.
void def_viewer_control(ViewerClass& cls) {
  cls.def_prop_rw("paused", [](const PyViewer& v) { return v.viewer->paused(); },
                  [](PyViewer& v, bool p) { without_gil([&] { v.get().set_paused(p); }); })
      .def("step", [](PyViewer& v) { without_gil([&] { v.get().step(); }); },
           "While paused, displays the next frame and stays paused.")
      .def_prop_ro("steps", [](const PyViewer& v) { return v.viewer->steps(); })
      .def_prop_ro("tiles", &tiles_list,
                   "Each tile of the grid (streams shown with stream=, attached publishers) as the panel lists it: "
                   "a dict of name, frame (-1: none yet), time_ns (0: none), offset_ns (from the clock tile) and "
                   "clock; one entry without a grid.")
      .def("focus_tile", [](PyViewer& v, int tile) { without_gil([&] { v.get().focus_tile(tile); }); }, "tile"_a,
           "Draws tile `tile` (an index into tiles) alone over the whole view, as a double-click on it or the G key "
           "does; -1: the whole grid. snapshot() still gives every tile; snapshot('view') shows the focus.")
      .def_prop_ro("focused_tile", [](PyViewer& v) { return without_gil([&] { return v.get().focused_tile(); }); })
      .def("attach", &attach_viewer, "name_or_path"_a, "frames"_a = -1, nb::kw_only(), "allow_group"_a = nb::none(),
           "Shows what the handoff.Publisher `name_or_path` shares (another process's frames, no copy through "
           "the socket), instead of frames handed in (before any show / acquire). Waits for a publisher not "
           "there yet; keeps the last frame and reconnects when it goes. frames: close after this many "
           "displayed frames (-1: until closed). Called again: another publisher in a tile of its own, side "
           "by side.")
      .def_prop_ro("attach_status", [](const PyViewer& v) { return v.viewer->attach_status(); },
                   "How the link to the attached publisher stands (AttachStatus); None when not attached. "
                   "Several publishers (attach called again: a tile each): the first's.")
      .def_prop_ro("attach_statuses", [](const PyViewer& v) { return v.viewer->attach_statuses(); },
                   "Each attached publisher's AttachStatus, in tile order.");
}

void bind_viewer_class(nb::module_& m) {
  ViewerClass cls(m, "Viewer",
                  "A window (or headless EGL view) showing your frames and detections. Every method may "
                  "be called from any thread; blocking calls release the GIL. A context manager: closes "
                  "on exit.");
  def_viewer_open(cls);
  def_viewer_frames(cls);
  def_viewer_state(cls);
  def_viewer_control(cls);
}

// --- handoff.Source: reading, what recordings add, closing --------------------------------
using SourceClass = nb::class_<PySource>;

std::int64_t source_len(PySource& s) {
  const std::int64_t n = s.get().info().frame_count;
  if (s.limit >= 0) return n < 0 ? s.limit : std::min(n, s.limit);
  if (n < 0) throw nb::type_error("the scene is endless: pass frames= to open_scene for a length");
  return n;
}

// Iterating, seeking and the source's description.
void def_source_reading(SourceClass& cls) {
  cls.def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", [](PySource& s) {
        nb::object r = read_next(s);
        if (r.is_none()) throw nb::stop_iteration();
        return r;
      })
      .def("read", &read_next, "The next (Frame, Overlays), or None at the end.")
      .def("seek", [](PySource& s, std::int64_t index) {
        const auto lock = lock_source(s);
        s.get().seek(index);
      }, "index"_a)
      .def("__len__", &source_len)
      .def_prop_ro("position", [](PySource& s) { return s.get().position(); })
      .def_prop_ro("width", [](PySource& s) { return s.get().info().width; })
      .def_prop_ro("height", [](PySource& s) { return s.get().info().height; })
      .def_prop_ro("format", [](PySource& s) { return std::string(to_string(s.get().info().format)); })
      .def_prop_ro("colorimetry", [](PySource& s) { return s.get().info().colorimetry; })
      .def_prop_ro("rate", [](PySource& s) { return s.get().info().rate.value(); }, "Frames per second.")
      .def_prop_ro("name", [](PySource& s) { return s.get().info().name; });
}

std::int64_t recording_log_time(PySource& s, std::int64_t index) {
  const auto lock = lock_source(s);
  s.get();
  if (!s.recording) throw nb::value_error("log_time: only recordings have log times");
  const std::int64_t n = s.recording->info().frame_count;
  if (index < 0 || index >= n) {
    throw nb::index_error(("log_time: frame " + std::to_string(index) + " is outside 0.." +
                           std::to_string(n - 1)).c_str());
  }
  return s.recording->log_time(index);
}

// What only MCAP recordings have: topics, warnings, log times.
void def_source_recording(SourceClass& cls) {
  cls.def_prop_ro("topic", [](PySource& s) -> nb::object {
        s.get();
        return s.recording ? nb::cast(s.recording->topic()) : nb::none();
      }, "Recordings: the image topic played (None for other sources).")
      .def_prop_ro("topics", [](PySource& s) {
        s.get();
        nb::list l;
        if (s.recording) {
          for (const auto& t : s.recording->image_topics()) l.append(nb::make_tuple(t.topic, t.messages));
        }
        return l;
      }, "Recordings: the image topics there are, as (topic, messages) pairs.")
      .def_prop_ro("warnings", [](PySource& s) {
        s.get();
        nb::list l;
        if (s.recording) {
          for (const auto& w : s.recording->warnings()) l.append(w);
        }
        for (const auto& d : s.file_overlays.diagnostics()) l.append(d.message);
        return l;
      }, "What was wrong but played anyway: a recording's (e.g. a damaged tail, played up to its last whole frame; "
         "a split bag's file skipped, the rest of the bag played; a corrupt picture shown black) and the bad lines "
         "of an overlays= file (skipped, the others loaded).")
      .def("log_time", &recording_log_time, "index"_a, "Recordings: frame `index`'s log time (nanoseconds).");
}

void close_source(PySource& s) {
  const auto lock = lock_source(s);
  s.source.reset();
}

void bind_source(nb::module_& m) {
  SourceClass cls(m, "Source",
                  "Frames from a file or the scene (handoff.open / handoff.open_scene). Iterating yields "
                  "(Frame, Overlays): a new host frame each time. One thread at a time.");
  def_source_reading(cls);
  def_source_recording(cls);
  cls.def("close", &close_source)
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PySource& s, nb::handle, nb::handle, nb::handle) { close_source(s); },
           "type"_a.none(), "value"_a.none(), "traceback"_a.none());
}

void bind_open(nb::module_& m) {
  m.def("open", &open_file, "path"_a, nb::kw_only(), "format"_a = nb::none(), "width"_a = nb::none(),
        "height"_a = nb::none(), "colorimetry"_a = nb::none(), "rate"_a = nb::none(), "overlays"_a = nb::none(),
        "topic"_a = nb::none(), "overlay_topics"_a = nb::none(),
        "Opens a Y4M file, an MCAP recording or ROS 2 bag (a '.mcap' or '.db3' file, or a bag's folder; "
        "`topic`: the image topic, default the first; "
        "`overlay_topics`: a ROS 2 bag's Detection2DArray / ImageAnnotations topics, default those in the image "
        "topic's namespace), or a raw "
        "file of any pixel format when format= / width= / height= are given. `overlays`: a JSON Lines overlay file "
        "(docs/media.md). Raises ParseError naming the file and field.");
  // handoff.list_topics (python/handoff/__init__.py) wraps this: the rows and the warnings together.
  m.def("list_topics_and_warnings", [](const std::string& path) {
        nb::list out;
        std::vector<std::string> warnings;
        for (const auto& t : media::list_recording_topics(path, &warnings)) {
          nb::dict d;
          d["topic"] = t.topic;
          d["type"] = t.type;
          d["encoding"] = t.encoding;
          d["messages"] = t.messages;
          d["rate"] = t.rate;
          d["shown"] = std::string(media::to_string(t.kind));
          d["note"] = t.note;
          out.append(d);
        }
        nb::list problems;
        for (const auto& w : warnings) problems.append(w);
        return nb::make_tuple(out, problems);
      }, "path"_a, "A recording's topics and the warnings found listing them, as a (rows, warnings) pair; handoff.list_topics "
        "gives both as one TopicList.");
  m.def("open_scene", &open_scene, nb::kw_only(), "width"_a = 1280, "height"_a = 720, "format"_a = "nv12",
        "frames"_a = nb::none(),
        "The built-in synthetic scene with its ground-truth overlays; endless unless `frames` is given.");
}

}  // namespace

void bind_viewer(nb::module_& m) {
  static nb::exception<ViewerClosed> viewer_closed(m, "ViewerClosed", PyExc_RuntimeError);
  static nb::exception<media::ParseError> parse_error(m, "ParseError", PyExc_ValueError);
  bind_overlays(m);
  bind_layers(m);
  bind_viewer_stats(m);
  bind_snapshot(m);
  bind_acquired(m);
  bind_attach_status(m);
  bind_viewer_class(m);
  bind_source(m);
  bind_open(m);
}

}  // namespace handoff::py
