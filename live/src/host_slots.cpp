// Host slots: sealed memfds, mapped read-write by the publisher and sent to
// subscribers as read-only descriptors.
#include <handoff/frame_copy.hpp>
#include <handoff/frame_validate.hpp>

#include "cuda_slots.hpp"
#include "memfd.hpp"
#include "slot_storage.hpp"

#include <unistd.h>

#include <algorithm>

namespace handoff::live::detail {

FrameLayout slot_layout(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry c) {
  FrameLayout l = FrameLayout::contiguous(format, width, height, 256, true);
  l.colorimetry = c;
  return l;
}

namespace {

class HostStorage final : public SlotStorage {
 public:
  HostStorage(const std::string& name, std::size_t bytes)
      : fd_(create_slot_memfd(name, bytes)), map_(fd_.get(), bytes, true, name) {
    // Readers get a read-only descriptor: they can neither write the frames
    // nor add seals (sealing needs write access).
    read_only_ = reopen_read_only(fd_.get());
  }
  SlotKind kind() const override { return SlotKind::HostMemfd; }
  std::uint64_t capacity() const override { return map_.size(); }
  Frame describe(const FrameLayout& l) const override { return l.describe(MemoryKind::Host, {map_.data()}); }
  void write(const Frame& src, const FrameLayout& l, CudaStream cuda_stream) override {
    copy_frame_to_host(src, describe(l), cuda_stream);
  }
  void announce(SlotAnnounce& out) const override {
    out.kind = SlotKind::HostMemfd;
    out.size = out.allocation_size = map_.size();
    out.offset = 0;
  }
  int descriptor() const override { return read_only_ ? read_only_.get() : fd_.get(); }

 private:
  UniqueFd fd_;
  UniqueFd read_only_;
  MemoryMap map_;
};

class HostRoute final : public SlotRoute {
 public:
  HostRoute(std::string publisher, const std::string& reason) : publisher_(std::move(publisher)) {
    description_ = "host memfd";
    if (!reason.empty()) description_ += " (" + reason + ")";
  }
  SlotMemory memory() const override { return SlotMemory::Host; }
  const std::string& description() const override { return description_; }
  std::unique_ptr<SlotStorage> allocate(const FrameLayout& l, unsigned slot) override {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t bytes = (l.buffer_bytes() + page - 1) / page * page;
    return std::make_unique<HostStorage>("handoff-live:" + publisher_ + ":" + std::to_string(slot), bytes);
  }

 private:
  std::string publisher_;
  std::string description_;
};

}  // namespace

std::unique_ptr<SlotRoute> make_host_route(const std::string& publisher, const std::string& fallback_reason) {
  return std::make_unique<HostRoute>(publisher, fallback_reason);
}

void copy_frame_to_host(const Frame& src, const Frame& dst, CudaStream cuda_stream) {
  if (src.memory != MemoryKind::Host && src.memory != MemoryKind::Cuda)
    throw UsageError("live publish: a frame in " + std::string(src.memory == MemoryKind::GlBuffer ? "a GL buffer" : "Vulkan memory") +
                     " cannot be copied into a slot; give host or CUDA memory (or acquire() a slot and write it)");
  copy_frame(src, dst, cuda_stream, CopyCompletion::Finished);
}

}  // namespace handoff::live::detail
