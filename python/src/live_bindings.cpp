// handoff.Publisher, handoff.Subscriber, handoff.LiveFrame in Python: frames
// shared with other processes without copying them through a socket
// (docs/live.md; docs/python.md "Live attach" is the Python reference).
//
// The GIL: every call that can block (creating and closing either side,
// publish, acquire, present, next, wait_for) runs with it released;
// converting Python arrays into a frame or overlays runs with it held.
// Closing while another thread is inside a call is safe: each call holds its
// own reference to the C++ object, which goes when the last call returns.
#include "live_bindings.hpp"

#include "acquired_frame.hpp"
#include "frame_args.hpp"
#include "layer_bindings.hpp"
#include "module_common.hpp"
#include "recording_bindings.hpp"

#include <handoff/cuda.hpp>
#include <handoff/cuda_abi.hpp>
#include <handoff/live/endpoint.hpp>
#include <handoff/publisher.hpp>
#include <handoff/subscriber.hpp>
#include <handoff/cuda_check.hpp>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

namespace handoff::py {
namespace nb = nanobind;
using namespace nb::literals;

std::string endpoint_arg(nb::handle obj) {
  std::string s = path_arg(obj, "name_or_path");
  if (s.find('/') == std::string::npos && !live::is_publisher_name(s)) {
    throw nb::value_error(("name_or_path: '" + s +
                           "' is not a publisher name (1-64 of A-Z a-z 0-9 . _ -, not starting with '.') nor a "
                           "socket path (a path has a '/')")
                              .c_str());
  }
  return s;
}

namespace {

// --- arguments ------------------------------------------------------------------------
// The value of E whose to_string() is `text` (one spelling each, as C++ prints them).
template <typename E, std::size_t N>
E enum_by_name(const char* field, const std::string& text, const E (&values)[N]) {
  std::string all;
  for (E v : values) {
    if (text == to_string(v)) return v;
    all += (all.empty() ? "'" : ", '") + std::string(to_string(v)) + "'";
  }
  throw nb::value_error((std::string(field) + ": '" + text + "' is not one of " + all).c_str());
}

constexpr SlotMemory kSlotMemories[] = {SlotMemory::Host, SlotMemory::Cuda, SlotMemory::Vulkan};
constexpr LinkState kLinkStates[] = {LinkState::Waiting, LinkState::Connected, LinkState::PublisherGone,
                                     LinkState::Failed, LinkState::Stopped};

CudaExport cuda_export_arg(const std::string& text) {
  if (text == "auto") return CudaExport::Auto;
  if (text == "virtual_memory") return CudaExport::VirtualMemory;
  if (text == "legacy_ipc") return CudaExport::LegacyIpc;
  if (text == "host") return CudaExport::Host;
  throw nb::value_error(
      ("cuda_export: '" + text + "' is not one of 'auto', 'virtual_memory', 'legacy_ipc', 'host'").c_str());
}

// --- the publisher --------------------------------------------------------------------
struct PyPublisher {
  std::shared_ptr<Publisher> publisher;  // null once closed
  int cuda_device = 0;                   // CUDA slots: the device they live on

  PyPublisher() = default;
  PyPublisher(const PyPublisher&) = delete;
  PyPublisher& operator=(const PyPublisher&) = delete;
  ~PyPublisher() { close(); }

  std::shared_ptr<Publisher> get() const {
    if (!publisher) throw nb::value_error("the publisher is closed");
    return publisher;
  }
  // Says Goodbye, removes the socket, finishes the recording: without the GIL.
  void close() {
    std::shared_ptr<Publisher> p = std::move(publisher);
    without_gil([&] { p.reset(); });
  }
};

PublisherOptions publisher_options(std::size_t slots, const std::string& memory, int cuda_device,
                                   const std::string& cuda_export, std::optional<unsigned> allow_group,
                                   std::size_t max_subscribers, std::size_t max_held, nb::handle record,
                                   const std::string& record_compression, const std::optional<std::string>& record_topic,
                                   const std::string& record_codec) {
  PublisherOptions o;
  if (slots < 2 || slots > live::kMaxSlots) {
    throw nb::value_error(("slots: " + std::to_string(slots) + " is outside 2.." + std::to_string(live::kMaxSlots)).c_str());
  }
  o.slots = slots;
  o.memory = enum_by_name("memory", memory, kSlotMemories);
  if (o.memory == SlotMemory::Vulkan) {
    throw nb::value_error("memory: 'vulkan' slots need a Vulkan context, which the Python module does not make; "
                          "use 'host' or 'cuda'");
  }
  o.cuda_device = cuda_device;
  o.cuda_export = cuda_export_arg(cuda_export);
  o.allow_group = allow_group;
  if (max_subscribers == 0) throw nb::value_error("max_subscribers: must be >= 1");
  o.max_subscribers = max_subscribers;
  if (max_held > slots) {
    throw nb::value_error(("max_held_per_subscriber: " + std::to_string(max_held) + " exceeds slots (" +
                           std::to_string(slots) + ")")
                              .c_str());
  }
  o.max_held_per_subscriber = max_held;
  o.record = record_target(record, record_compression, record_topic, record_codec);
  return o;
}

bool publish(PyPublisher& p, nb::handle frame, nb::handle boxes, const std::string& box_format, bool normalized,
             nb::handle labels, nb::handle scores, nb::handle class_ids, nb::handle track_ids, nb::handle keypoints,
             nb::handle skeleton, nb::handle overlays, std::optional<std::string> format,
             std::optional<Colorimetry> colorimetry, std::optional<std::int64_t> index,
             std::optional<double> timestamp, nb::handle layers) {
  const std::shared_ptr<Publisher> pub = p.get();
  const int slot_device = p.cuda_device;
  PyFrame f = frame_of(frame, std::move(format), std::move(colorimetry));
  if (index) f.frame.index = *index;
  if (timestamp) f.frame.timestamp = *timestamp;
  media::OverlayFrame scratch;
  const media::OverlayFrame& o = resolve_overlays(
      overlay_args(boxes, box_format, normalized, labels, scores, class_ids, track_ids, keypoints, skeleton, overlays),
      f.frame, scratch);
  // Dense layers: read in place (kept alive by `keep` for the call), packed into the overlay block by publish().
  media::OverlayFrame with_layers;
  LayerKeep keep;
  if (!layers.is_none()) {
    with_layers = o;
    layers_from_objects(layers, with_layers, keep);
  }
  const media::OverlayFrame& sent_overlays = layers.is_none() ? o : with_layers;
  return without_gil([&] {
    const bool sent = pub->publish(f.frame, sent_overlays);
    // The copy publish() queued out of the caller's arrays: they may be reused once publish returns.
    synchronise_frame_context(f.frame, "publish: the copy out of the frame");
    if (f.frame.memory == MemoryKind::Host && pub->memory() == SlotMemory::Cuda) {
      // Host arrays into CUDA slots: the copy was queued in the slots'
      // context (the device's primary one), not the frame's (it has none).
      const cuda::PrimaryContext slots(cuda::driver(), slot_device);
      cuda::ScopedContext current(slots);
      HANDOFF_CU_CHECK(cuda::driver().api().cuCtxSynchronize(), "publish: the copy out of the host frame");
    }
    return sent;
  });
}

// A slot to write into (an AcquiredFrame presenting into the publisher), or
// None when every slot is held (the frame counts as dropped).
nb::object acquire(nb::handle self, const std::string& format, std::uint32_t width, std::uint32_t height,
                   std::optional<Colorimetry> colorimetry) {
  const std::shared_ptr<Publisher> pub = nb::cast<PyPublisher&>(self).get();
  const PixelFormat pf = enum_arg<PixelFormat>("format", format);
  auto slot = std::make_shared<PublishSlot>(
      without_gil([&] { return pub->acquire(pf, width, height, colorimetry.value_or(Colorimetry{})); }));
  if (!*slot) return nb::none();
  PublishSlot* held = slot.get();
  Frame frame = held->frame();
  std::weak_ptr<Publisher> weak = pub;
  auto present = [weak, held](std::shared_ptr<const void> owner, const Frame& f, const media::OverlayFrame& o) {
    const std::shared_ptr<Publisher> to = weak.lock();
    if (!to) throw UsageError("present: the publisher is closed; the slot goes back unannounced");
    PublishSlot out = std::move(*held);
    out.frame().index = f.index;
    out.frame().timestamp = f.timestamp;
    owner.reset();
    to->present(std::move(out), o);
  };
  return nb::cast(make_acquired(self, std::move(frame), std::move(slot), std::move(present)));
}

// --- the subscriber -------------------------------------------------------------------
struct PySubscriber {
  std::shared_ptr<Subscriber> subscriber;  // null once closed

  PySubscriber() = default;
  PySubscriber(const PySubscriber&) = delete;
  PySubscriber& operator=(const PySubscriber&) = delete;
  ~PySubscriber() { close(); }

  std::shared_ptr<Subscriber> get() const {
    if (!subscriber) throw nb::value_error("the subscriber is closed");
    return subscriber;
  }
  // Disconnects and joins the subscriber's thread: without the GIL. Frames
  // still held stay valid.
  void close() {
    std::shared_ptr<Subscriber> s = std::move(subscriber);
    without_gil([&] { s.reset(); });
  }
};

// handoff.LiveFrame: one received frame, holding its slot until released
// (release(), the with block's end, or garbage collection) and until every
// array exported from its planes is gone.
struct PyLiveFrame {
  LiveFrame live;

  const LiveFrame& get() const {
    if (!live) throw nb::value_error("the frame was released");
    return live;
  }
  PyFrame frame() const { return PyFrame{get().frame, false}; }
  void release() {
    LiveFrame gone = std::move(live);
    live = LiveFrame{};
    without_gil([&] { gone = LiveFrame{}; });  // sends the slot's release when it is the last hold
  }
};

SubscriberOptions subscriber_options(bool wait, bool reconnect, double retry_interval, double handshake_timeout,
                                     std::uint16_t max_held, nb::handle accepts, std::optional<unsigned> allow_group,
                                     bool cuda_synchronize, const std::string& client) {
  SubscriberOptions o;
  o.wait = wait;
  o.reconnect = reconnect;
  o.retry_interval = std::chrono::duration_cast<std::chrono::milliseconds>(seconds_arg("retry_interval", retry_interval));
  if (o.retry_interval.count() == 0) throw nb::value_error("retry_interval: must be at least 0.001 s");
  o.handshake_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(seconds_arg("handshake_timeout", handshake_timeout));
  o.max_held = max_held;
  if (!accepts.is_none()) {
    if (nb::isinstance<nb::str>(accepts)) {
      throw nb::type_error("accepts: a sequence of memory kinds, e.g. ('host', 'cuda'), not one string");
    }
    o.accepts = 0;
    if (!PyIter_Check(accepts.ptr()) && !PySequence_Check(accepts.ptr()) && !PyAnySet_Check(accepts.ptr())) {
      throw nb::type_error(("accepts: " + py_type_name(accepts) + " is not a sequence of memory kinds").c_str());
    }
    for (nb::handle item : accepts) {
      if (!nb::isinstance<nb::str>(item)) {
        throw nb::type_error(("accepts: " + py_type_name(item) + " is not a memory kind name").c_str());
      }
      o.accepts |= live::memory_bit(enum_by_name("accepts", nb::cast<std::string>(item), kSlotMemories));
    }
    if (o.accepts == 0) throw nb::value_error("accepts: empty; name at least one memory kind");
  } else {
    o.accepts = live::memory_bit(SlotMemory::Host) | live::memory_bit(SlotMemory::Cuda);
  }
  o.allow_group = allow_group;
  o.cuda_synchronize = cuda_synchronize;
  if (client.size() > live::kMaxNameBytes) {
    throw nb::value_error(("client: longer than " + std::to_string(live::kMaxNameBytes) + " bytes").c_str());
  }
  o.client = client;
  return o;
}

bool link_ended(const Subscriber& s) {
  const LinkState st = s.status().state;
  return st == LinkState::Failed || st == LinkState::Stopped;
}

// The next frame not yet taken within `timeout` seconds (None: until one
// comes or the link ends; 0: only what is there now), or None.
// Waits in slices (wait_in_slices) on `self`'s subscriber; close() from
// another thread ends the wait within a slice, and the last reference, if it
// is this one, is dropped without the GIL (it joins the subscriber's thread).
template <typename Step>
bool wait_on_subscriber(PySubscriber& self, std::optional<double> timeout, Step step) {
  std::shared_ptr<Subscriber> sub = self.get();
  const auto limit = timeout_arg("timeout", timeout);
  bool done = false;
  try {
    done = wait_in_slices(limit, [&](std::chrono::nanoseconds slice) { return step(*sub, slice); },
                          [&] { return !self.subscriber; });
  } catch (...) {
    without_gil([&] { sub.reset(); });
    throw;
  }
  without_gil([&] { sub.reset(); });
  return done;
}

nb::object next_frame(PySubscriber& self, std::optional<double> timeout) {
  LiveFrame got;
  wait_on_subscriber(self, timeout, [&](Subscriber& sub, std::chrono::nanoseconds slice) {
    got = slice.count() > 0 ? sub.next(slice) : sub.take();
    return bool(got) || link_ended(sub);
  });
  if (!got) return nb::none();
  return nb::cast(PyLiveFrame{std::move(got)});
}

bool wait_for(PySubscriber& self, const std::string& state, std::optional<double> timeout) {
  const LinkState want = enum_by_name("state", state, kLinkStates);
  return wait_on_subscriber(self, timeout,
                            [&](Subscriber& sub, std::chrono::nanoseconds slice) { return sub.wait_for(want, slice); });
}

nb::dict counters_dict(const live::PublisherCounters& c) {
  nb::dict d;
  d["published"] = c.published;
  d["dropped_no_slot"] = c.dropped_no_slot;
  d["skipped_for_you"] = c.skipped_for_you;
  return d;
}

nb::object plane_object(const PyLiveFrame& f, const char* name) { return nb::cast(f.frame()).attr(name); }

// --- bindings -------------------------------------------------------------------------
void bind_publisher_stats(nb::module_& m) {
  nb::class_<PublisherStats>(m, "PublisherStats", "Publisher.stats: a snapshot of its counters.")
      .def_ro("published", &PublisherStats::published, "Frames announced (or counted with no subscriber).")
      .def_ro("dropped_no_slot", &PublisherStats::dropped_no_slot, "Frames dropped: every slot was held.")
      .def_ro("skipped_sends", &PublisherStats::skipped_sends,
              "Per-subscriber sends skipped (its socket full, or it held its limit).")
      .def_ro("subscribers", &PublisherStats::subscribers, "Subscribers connected now.")
      .def_ro("held_slots", &PublisherStats::held_slots)
      .def_ro("held_frames", &PublisherStats::held_frames)
      .def_ro("subscribers_seen", &PublisherStats::subscribers_seen)
      .def_ro("peers_refused", &PublisherStats::peers_refused)
      .def_ro("peers_dropped", &PublisherStats::peers_dropped)
      .def_ro("route", &PublisherStats::route, "How slots are shared, and why any fallback was taken.")
      .def_ro("recorded", &PublisherStats::recorded, "record=: frames in the recording.")
      .def_ro("record_dropped", &PublisherStats::record_dropped, "record=: left out (the writer's queue was full).")
      .def_ro("record_skipped", &PublisherStats::record_skipped, "record=: not recorded (only in Vulkan memory).")
      .def_ro("record_error", &PublisherStats::record_error, "record=: the error that stopped the recording, or ''.")
      .def("__repr__", [](const PublisherStats& s) {
        return "<handoff.PublisherStats published=" + std::to_string(s.published) +
               " subscribers=" + std::to_string(s.subscribers) + " dropped_no_slot=" +
               std::to_string(s.dropped_no_slot) + ">";
      });
}

void bind_publisher(nb::module_& m) {
  bind_publisher_stats(m);
  nb::class_<PyPublisher> cls(
      m, "Publisher",
      "Shares frames with viewers and subscribers in other processes, without copying them through a socket "
      "(a ring of shared slots). publish() never waits for a subscriber. Every method may be called from any "
      "thread; blocking calls release the GIL. A context manager: closes on exit.");
  cls.def(
      "__init__",
      [](PyPublisher* self, nb::handle name_or_path, std::size_t slots, const std::string& memory, int cuda_device,
         const std::string& cuda_export, std::optional<unsigned> allow_group, std::size_t max_subscribers,
         std::size_t max_held, nb::handle record, const std::string& record_compression,
         std::optional<std::string> record_topic, const std::string& record_codec) {
        const std::string where = endpoint_arg(name_or_path);
        const PublisherOptions o = publisher_options(slots, memory, cuda_device, cuda_export, allow_group,
                                                     max_subscribers, max_held, record, record_compression,
                                                     record_topic, record_codec);
        auto made = without_gil([&] { return std::make_shared<Publisher>(where, o); });  // may throw: nothing made
        new (self) PyPublisher();
        self->publisher = std::move(made);
        self->cuda_device = o.cuda_device;
      },
      "name_or_path"_a, nb::kw_only(), "slots"_a = 4, "memory"_a = "host", "cuda_device"_a = 0,
      "cuda_export"_a = "auto", "allow_group"_a = nb::none(), "max_subscribers"_a = 16,
      "max_held_per_subscriber"_a = 0, "record"_a = nb::none(), "record_compression"_a = "zstd",
      "record_topic"_a = nb::none(), "record_codec"_a = "raw",
      "Listens at $XDG_RUNTIME_DIR/handoff/<name>.sock (or the socket path given). memory: 'host' (memfd "
      "slots) or 'cuda' (exported device memory; cuda_export 'auto', 'virtual_memory', 'legacy_ipc', "
      "'host'). record: an MCAP file recording every frame published.");
  std::apply(
      [&](auto&&... kw) {
        cls.def("publish", &publish, "frame"_a, nb::kw_only(), kw..., "format"_a = nb::none(),
                "colorimetry"_a = nb::none(), "index"_a = nb::none(), "timestamp"_a = nb::none(),
                "layers"_a = nb::none(),
                "Copies `frame` (what Viewer.show takes: a handoff.Frame, one array, a (luma, chroma) pair or "
                "(luma, u, v), with its format= rule; host or CUDA) into a free slot and announces it with its overlays. Returns once the "
                "copy is done (the arrays may be reused); False when every slot was held (dropped). index / "
                "timestamp override the frame's. layers: handoff.ClassMap / ScalarMap / InstanceMasks (host "
                "arrays), sent with the frame.");
      },
      overlay_kwargs());
  cls.def("acquire", &acquire, "format"_a, "width"_a, "height"_a, "colorimetry"_a = nb::none(),
          "A slot to write a frame into with no copy: an AcquiredFrame (a context manager announcing it on "
          "exit), or None when every slot is held (counted as dropped).")
      .def_prop_ro("stats", [](const PyPublisher& p) { return p.get()->stats(); })
      .def_prop_ro("name", [](const PyPublisher& p) { return p.get()->name(); })
      .def_prop_ro("socket_path", [](const PyPublisher& p) { return p.get()->socket_path().string(); })
      .def_prop_ro("memory", [](const PyPublisher& p) { return std::string(to_string(p.get()->memory())); },
                   "What the slots are: 'host' or 'cuda' (CUDA may fall back to host: stats.route says why).")
      .def("close", [](PyPublisher& p) { p.close(); },
           "Says goodbye to the subscribers, removes the socket, finishes the recording. Idempotent.")
      .def("is_open", [](const PyPublisher& p) { return bool(p.publisher); })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyPublisher& p, nb::handle, nb::handle, nb::handle) { p.close(); }, "type"_a.none(),
           "value"_a.none(), "traceback"_a.none())
      .def("__repr__", [](const PyPublisher& p) {
        if (!p.publisher) return std::string("<handoff.Publisher closed>");
        return "<handoff.Publisher '" + p.publisher->name() + "' " + std::string(to_string(p.publisher->memory())) +
               ">";
      });
}

void bind_live_frame(nb::module_& m) {
  nb::class_<PyLiveFrame>(
      m, "LiveFrame",
      "A frame received from a publisher. Its planes (luma, chroma; luma, u, v; or pixels, as Frame names "
      "them) export through DLPack and the array "
      "interfaces without a copy: host slots are a read-only mapping of the publisher's memory, CUDA slots "
      "imported device memory. Holds its slot until released (release(), the end of a with block, or when "
      "it and every array made from it are gone); hold few at once, or the publisher skips frames for you.")
      .def_prop_ro("frame", &PyLiveFrame::frame, "The frame as a handoff.Frame (read-only; holds the slot).")
      .def_prop_ro("luma", [](const PyLiveFrame& f) { return plane_object(f, "luma"); })
      .def_prop_ro("chroma", [](const PyLiveFrame& f) { return plane_object(f, "chroma"); })
      .def_prop_ro("u", [](const PyLiveFrame& f) { return plane_object(f, "u"); })
      .def_prop_ro("v", [](const PyLiveFrame& f) { return plane_object(f, "v"); })
      .def_prop_ro("pixels", [](const PyLiveFrame& f) { return plane_object(f, "pixels"); })
      .def_prop_ro("planes", [](const PyLiveFrame& f) { return plane_object(f, "planes"); })
      .def_prop_ro("format", [](const PyLiveFrame& f) { return std::string(to_string(f.get().frame.format)); })
      .def_prop_ro("width", [](const PyLiveFrame& f) { return f.get().frame.width; })
      .def_prop_ro("height", [](const PyLiveFrame& f) { return f.get().frame.height; })
      .def_prop_ro("memory", [](const PyLiveFrame& f) { return plane_object(f, "memory"); })
      .def_prop_ro("colorimetry", [](const PyLiveFrame& f) { return f.get().frame.colorimetry; })
      .def_prop_ro("index", [](const PyLiveFrame& f) { return f.get().frame.index; }, "The publisher's Frame.index.")
      .def_prop_ro("timestamp", [](const PyLiveFrame& f) { return f.get().frame.timestamp; },
                   "The publisher's Frame.timestamp (seconds).")
      .def_prop_ro("sequence", [](const PyLiveFrame& f) { return f.get().sequence; },
                   "The publisher's frame counter (1, 2, ...).")
      .def_prop_ro("publish_time_ns", [](const PyLiveFrame& f) { return f.get().publish_time_ns; },
                   "CLOCK_MONOTONIC (time.monotonic_ns) when the publisher announced it.")
      .def_prop_ro("receive_time_ns", [](const PyLiveFrame& f) { return f.get().receive_time_ns; },
                   "CLOCK_MONOTONIC when it arrived here.")
      .def_prop_ro("overlays", [](const PyLiveFrame& f) {
        const LiveFrame& l = f.get();
        return l.overlays ? PyOverlays{l.overlays} : PyOverlays{};
      }, "Its handoff.Overlays (empty when none were sent).")
      .def_prop_ro("counters", [](const PyLiveFrame& f) { return counters_dict(f.get().counters); },
                   "The publisher's counts when it sent this frame: published, dropped_no_slot, skipped_for_you.")
      .def_prop_ro("slot", [](const PyLiveFrame& f) {
        const LiveSlot& s = f.get().slot;
        nb::dict d;
        d["kind"] = std::string(to_string(s.kind));
        d["index"] = s.index;
        d["generation"] = s.generation;
        d["size"] = s.size;
        return d;
      }, "The shared slot it lives in: kind ('host memfd', ...), index, generation, size.")
      .def_prop_ro("cuda_event", [](const PyLiveFrame& f) -> nb::object {
        void* e = f.get().cuda_event;
        if (!e) return nb::none();
        return nb::int_(reinterpret_cast<std::uintptr_t>(e));
      }, "CUDA slots with interprocess events: the CUevent (as an int) recorded after the publisher's writes.")
      .def("release", &PyLiveFrame::release,
           "Lets the slot go (once the arrays exported from it are gone too). The frame is unusable afterwards.")
      .def("is_released", [](const PyLiveFrame& f) { return !f.live; })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyLiveFrame& f, nb::handle, nb::handle, nb::handle) { f.release(); }, "type"_a.none(),
           "value"_a.none(), "traceback"_a.none())
      .def("__repr__", [](const PyLiveFrame& f) {
        if (!f.live) return std::string("<handoff.LiveFrame released>");
        const Frame& fr = f.live.frame;
        return "<handoff.LiveFrame #" + std::to_string(f.live.sequence) + " " + std::string(to_string(fr.format)) +
               " " + std::to_string(fr.width) + "x" + std::to_string(fr.height) + " " +
               std::string(to_string(f.live.slot.kind)) + ">";
      });
}

void bind_subscriber_status(nb::module_& m) {
  nb::class_<SubscriberStatus>(m, "SubscriberStatus", "Subscriber.status: how the link to the publisher stands.")
      .def_prop_ro("state", [](const SubscriberStatus& s) { return std::string(to_string(s.state)); },
                   "'waiting', 'connected', 'publisher gone', 'failed' or 'stopped'.")
      .def_ro("message", &SubscriberStatus::message)
      .def_ro("publisher", &SubscriberStatus::publisher, "The connected (or last) publisher's name.")
      .def_ro("pid", &SubscriberStatus::pid)
      .def_prop_ro("memory", [](const SubscriberStatus& s) { return std::string(to_string(s.memory)); })
      .def_prop_ro("cuda_sync", [](const SubscriberStatus& s) { return std::string(to_string(s.cuda_sync)); })
      .def_ro("route", &SubscriberStatus::route)
      .def("__repr__", [](const SubscriberStatus& s) {
        return "<handoff.SubscriberStatus " + std::string(to_string(s.state)) + ": " + s.message + ">";
      });

  nb::class_<SubscriberStats>(m, "SubscriberStats", "Subscriber.stats: a snapshot of its counters.")
      .def_ro("received", &SubscriberStats::received, "Frames that arrived.")
      .def_ro("replaced", &SubscriberStats::replaced, "Arrived, then replaced by a newer one before taken.")
      .def_ro("taken", &SubscriberStats::taken, "Handed out by next() / take().")
      .def_ro("connections", &SubscriberStats::connections, "Sessions with a publisher so far.")
      .def_prop_ro("publisher", [](const SubscriberStats& s) { return counters_dict(s.publisher); },
                   "The latest counts the publisher sent: published, dropped_no_slot, skipped_for_you.");
}

void bind_subscriber(nb::module_& m) {
  bind_subscriber_status(m);
  nb::class_<PySubscriber>(
      m, "Subscriber",
      "Receives the frames a handoff.Publisher in another process shares, without copying them. Waits for "
      "the publisher when it is not there yet and reconnects when it comes back. Iterating yields LiveFrames "
      "until the link fails or stops. Every method may be called from any thread; blocking calls release "
      "the GIL. A context manager: closes on exit.")
      .def(
          "__init__",
          [](PySubscriber* self, nb::handle name_or_path, bool wait, bool reconnect, double retry_interval,
             double handshake_timeout, std::uint16_t max_held, nb::handle accepts, std::optional<unsigned> allow_group,
             bool cuda_synchronize, const std::string& client) {
            const std::string where = endpoint_arg(name_or_path);
            SubscriberOptions o = subscriber_options(wait, reconnect, retry_interval, handshake_timeout, max_held,
                                                     accepts, allow_group, cuda_synchronize, client);
            auto made = without_gil([&] { return std::make_shared<Subscriber>(where, std::move(o)); });
            new (self) PySubscriber();
            self->subscriber = std::move(made);
          },
          "name_or_path"_a, nb::kw_only(), "wait"_a = true, "reconnect"_a = true, "retry_interval"_a = 0.1,
          "handshake_timeout"_a = 2.0, "max_held"_a = 0, "accepts"_a = nb::none(), "allow_group"_a = nb::none(),
          "cuda_synchronize"_a = true, "client"_a = "python",
          "Connects to the publisher `name_or_path` (a name in $XDG_RUNTIME_DIR/handoff or a socket path). "
          "wait=False: no publisher there is a failure at once. accepts: the slot memories this side imports "
          "(default ('host', 'cuda')). Times in seconds.")
      .def("next", &next_frame, "timeout"_a = nb::none(),
           "The newest frame not yet taken, waiting up to `timeout` seconds (None: until one comes or the link "
           "fails / stops; 0: only what is there). None when there is none.")
      .def("take", [](PySubscriber& s) { return next_frame(s, 0.0); }, "next(timeout=0).")
      .def("wait_for", &wait_for, "state"_a, "timeout"_a = nb::none(),
           "Waits until status.state is `state` ('connected', 'publisher gone', ...); False on timeout.")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", [](PySubscriber& s) {
        nb::object f = next_frame(s, std::nullopt);
        if (f.is_none()) throw nb::stop_iteration();
        return f;
      })
      .def_prop_ro("status", [](const PySubscriber& s) { return s.get()->status(); })
      .def_prop_ro("stats", [](const PySubscriber& s) { return s.get()->stats(); })
      .def_prop_ro("socket_path", [](const PySubscriber& s) { return s.get()->socket_path().string(); })
      .def("close", [](PySubscriber& s) { s.close(); },
           "Disconnects (frames still held stay valid). Idempotent.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PySubscriber& s, nb::handle, nb::handle, nb::handle) { s.close(); }, "type"_a.none(),
           "value"_a.none(), "traceback"_a.none());
}

nb::list list_publishers(std::optional<std::string> dir, double timeout) {
  const std::chrono::nanoseconds limit = seconds_arg("timeout", timeout);
  const std::string folder = dir.value_or("");
  const auto found = without_gil([&] {
    return live::list_publishers(folder, int(std::chrono::duration_cast<std::chrono::milliseconds>(limit).count()));
  });
  nb::list out;
  for (const live::PublisherListing& p : found) {
    nb::dict d;
    d["name"] = p.name;
    d["path"] = p.path.string();
    d["live"] = p.live;
    d["status"] = p.status;
    d["pid"] = p.pid;
    d["memory"] = std::string(to_string(p.memory));
    d["route"] = p.route;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_live(nb::module_& m) {
  bind_publisher(m);
  bind_live_frame(m);
  bind_subscriber(m);
  m.def("list_publishers", &list_publishers, "dir"_a = nb::none(), "timeout"_a = 1.0,
        "The publishers in `dir` (default $XDG_RUNTIME_DIR/handoff), each asked whether it is there: a list of "
        "dicts (name, path, live, status, pid, memory, route), sorted by name.");
}

}  // namespace handoff::py
