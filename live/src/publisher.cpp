#include <handoff/frame_validate.hpp>
#include <handoff/publisher.hpp>

#include "cuda_layers.hpp"
#include "publish_recorder.hpp"
#include "publisher_core.hpp"

#if HANDOFF_HAVE_VULKAN
#include "vulkan_slots.hpp"
#endif

namespace handoff {

using live::detail::FrameMeta;
using live::detail::PublisherCore;
using live::detail::slot_layout;

// --- PublishSlot ------------------------------------------------------------------------
PublishSlot::PublishSlot(PublishSlot&& o) noexcept
    : frame_(std::move(o.frame_)), core_(std::move(o.core_)), slot_(std::exchange(o.slot_, -1)) {}

PublishSlot& PublishSlot::operator=(PublishSlot&& o) noexcept {
  if (this != &o) {
    give_back();
    frame_ = std::move(o.frame_);
    core_ = std::move(o.core_);
    slot_ = std::exchange(o.slot_, -1);
  }
  return *this;
}

PublishSlot::~PublishSlot() { give_back(); }

void PublishSlot::give_back() noexcept {
  if (core_) core_->give_back(slot_);
  core_.reset();
  slot_ = -1;
}

#if HANDOFF_HAVE_VULKAN
VkFrameBuffer* PublishSlot::vulkan_buffer() const noexcept {
  return core_ ? core_->storage(slot_).vulkan_buffer() : nullptr;
}
#endif

namespace {

// What travels with a frame: nothing when there are no overlays or layers.
// Layers are checked before a slot is taken.
const media::OverlayFrame* overlays_to_send(const media::OverlayFrame& overlays) {
  if (!overlays.has_content()) return nullptr;
  live::detail::check_publish_layers(overlays);
  return &overlays;
}

// The overlays as the overlay block and a recording take them: CUDA layers
// copied to the host (into `host`) after the caller's work on `stream`.
const media::OverlayFrame* in_host_memory(const media::OverlayFrame* overlays, CudaStream stream,
                                          std::optional<media::OverlayFrame>& host) {
  if (overlays == nullptr) return nullptr;
  host = live::detail::host_layers(*overlays, stream);
  return host ? &*host : overlays;
}

// The copy a recording reads: the slot's when it is host memory (its index,
// timestamp and colorimetry the published frame's), else the frame as given
// (CUDA: counted as not recorded).
Frame recordable(PublisherCore& core, int slot, const FrameLayout& layout, const Frame& published) {
  Frame f = core.storage(slot).describe(layout);
  if (f.memory != MemoryKind::Host) return published;
  f.index = published.index;
  f.timestamp = published.timestamp;
  f.colorimetry = published.colorimetry;
  return f;
}

}  // namespace

// --- Publisher ----------------------------------------------------------------------------
Publisher::Publisher(std::string_view name_or_path, PublisherOptions options) {
  const media::RecordTarget record = options.record;
  core_ = std::make_shared<PublisherCore>(name_or_path, std::move(options));
  try {
    if (!record.path.empty()) recorder_ = std::make_unique<live::detail::PublishRecorder>(record, core_->name());
  } catch (...) {
    core_->stop();  // the socket goes with the publisher that could not start
    throw;
  }
}

Publisher::~Publisher() {
  core_->stop();
  if (recorder_) recorder_->close();
}

bool Publisher::publish(const Frame& frame, const media::OverlayFrame& overlay_frame, CudaStream cuda_stream) {
  const media::OverlayFrame* overlays = overlays_to_send(overlay_frame);
  std::optional<media::OverlayFrame> host;
  validate(frame);
  if (frame.memory != MemoryKind::Host && frame.memory != MemoryKind::Cuda)
    throw UsageError("Publisher::publish: only host and CUDA frames are copied into slots (this one is in " +
                     std::string(frame.memory == MemoryKind::GlBuffer ? "a GL buffer" : "Vulkan memory") +
                     "); acquire() a slot and write it instead");
  if (!core_->has_subscribers()) {
    core_->count_unsent();  // nobody to send to: bookkeeping only
    if (recorder_) recorder_->record(frame, in_host_memory(overlays, cuda_stream, host), cuda_stream);
    return true;
  }
  overlays = in_host_memory(overlays, cuda_stream, host);
  const FrameLayout layout = slot_layout(frame.format, frame.width, frame.height, frame.colorimetry);
  const int slot = core_->reserve(layout);
  if (slot < 0) return false;
  try {
    core_->storage(slot).write(frame, layout, cuda_stream);
  } catch (...) {
    core_->give_back(slot);
    throw;
  }
  // Recorded before it is announced (the slot is not reused before that):
  // a CUDA frame copied into a host slot is in host memory there.
  if (recorder_)
    recorder_->record(frame.memory == MemoryKind::Host ? frame : recordable(*core_, slot, layout, frame), overlays,
                      cuda_stream);
  PresentSync sync;
  sync.cuda_stream = cuda_stream;
  core_->announce(slot, FrameMeta{frame.index, frame.timestamp, frame.colorimetry}, overlays, sync);
  return true;
}

#if HANDOFF_HAVE_VULKAN
bool Publisher::publish(const VkFrameBuffer& source, std::int64_t index, double timestamp,
                        const media::OverlayFrame& overlay_frame) {
  std::optional<media::OverlayFrame> host;
  const media::OverlayFrame* overlays = in_host_memory(overlays_to_send(overlay_frame), CudaStream{}, host);
  if (core_->memory() != SlotMemory::Vulkan)
    throw UsageError("Publisher::publish(VkFrameBuffer): this publisher's slots are not Vulkan memory");
  const auto& l = source.layout();
  if (!core_->has_subscribers()) {
    core_->count_unsent();
    return true;
  }
  const FrameLayout layout = slot_layout(l.format, l.width, l.height);
  const int slot = core_->reserve(layout);
  if (slot < 0) return false;
  try {
    live::detail::vulkan_copy_frame(source, *core_->storage(slot).vulkan_buffer());
  } catch (...) {
    core_->give_back(slot);
    throw;
  }
  if (recorder_) recorder_->record(core_->storage(slot).describe(layout), overlays);  // counted as skipped
  core_->announce(slot, FrameMeta{index, timestamp, {}}, overlays, PresentSync{});
  return true;
}
#endif

PublishSlot Publisher::acquire(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry c) {
  const FrameLayout layout = slot_layout(format, width, height, c);
  const int slot = core_->reserve(layout);
  PublishSlot s;
  if (slot < 0) return s;
  s.core_ = core_;
  s.slot_ = slot;
  s.frame_ = core_->storage(slot).describe(layout);
  return s;
}

void Publisher::present(PublishSlot&& slot, const media::OverlayFrame& overlay_frame, const PresentSync& sync) {
  const media::OverlayFrame* overlays = overlays_to_send(overlay_frame);
  if (!slot || slot.core_ != core_)
    throw UsageError("Publisher::present: a slot this publisher did not hand out (or one already presented)");
  const FrameLayout& l = core_->layout(slot.slot_);
  if (slot.frame_.format != l.format || slot.frame_.width != l.width || slot.frame_.height != l.height)
    throw UsageError("Publisher::present: the slot's frame format or size was changed");
  const FrameMeta meta{slot.frame_.index, slot.frame_.timestamp, slot.frame_.colorimetry};
  std::optional<media::OverlayFrame> host;
  overlays = in_host_memory(overlays, sync.cuda_stream, host);  // a failure leaves the slot to `slot`
  // Recorded before the announce (the writes are done: the caller says so by
  // presenting; CUDA slots are read on sync.cuda_stream); Vulkan slots are counted as skipped.
  if (recorder_) recorder_->record(slot.frame_, overlays, sync.cuda_stream);
  const int index = std::exchange(slot.slot_, -1);
  slot.core_.reset();  // the slot is the core's again: announced, or given back on failure
  core_->announce(index, meta, overlays, sync);
}

PublisherStats Publisher::stats() const {
  PublisherStats s = core_->stats();
  if (recorder_) {
    const live::detail::RecordFigures r = recorder_->figures();
    s.recorded = r.recorded;
    s.record_dropped = r.dropped;
    s.record_skipped = r.skipped;
    s.record_error = r.error;
  }
  return s;
}
const std::filesystem::path& Publisher::socket_path() const noexcept { return core_->path(); }
const std::string& Publisher::name() const noexcept { return core_->name(); }
SlotMemory Publisher::memory() const noexcept { return core_->memory(); }

}  // namespace handoff
