#pragma once
// The publisher's side of one slot kind: how slot memory is allocated,
// written, described to the writer, and announced to subscribers. One
// SlotRoute per publisher makes every slot's SlotStorage.
#include <handoff/frame.hpp>
#include <handoff/live/protocol.hpp>
#include <handoff/publisher.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace handoff {
class VkContext;
class VkFrameBuffer;
}  // namespace handoff

namespace handoff::live::detail {

// A frame's place in a slot: luma rows, then chroma rows, one pitch for both
// planes (a multiple of 256 bytes, so a whole number of samples and aligned
// for DMA; the Frame message carries these offsets and pitches), in buffer 0.
// Throws InvalidFrame for bad dimensions.
FrameLayout slot_layout(PixelFormat format, std::uint32_t width, std::uint32_t height, Colorimetry c = {});

class SlotStorage {
 public:
  virtual ~SlotStorage() = default;
  virtual SlotKind kind() const = 0;
  // Bytes a layout may use.
  virtual std::uint64_t capacity() const = 0;
  // Whether `layout` can be written here without re-allocating.
  virtual bool fits(const FrameLayout& layout) const { return capacity() >= layout.buffer_bytes(); }
  // `layout` in this slot as the writer sees it (host / CUDA pointers, or offsets).
  virtual Frame describe(const FrameLayout& layout) const = 0;
  // Copies `src` into the slot at `layout`; CUDA copies run on `cuda_stream`.
  virtual void write(const Frame& src, const FrameLayout& layout, CudaStream cuda_stream) = 0;
  // Orders the writes before the announcement: record the CUDA event or
  // synchronise the stream; wait for the Vulkan fence (bounded).
  virtual void finish(const PresentSync& sync) { (void)sync; }
  // The Slot message's memory fields, and the descriptor sent with it (-1: none).
  virtual void announce(SlotAnnounce& out) const = 0;
  virtual int descriptor() const = 0;
  // Vulkan slots: the buffer.
  virtual VkFrameBuffer* vulkan_buffer() { return nullptr; }
};

class SlotRoute {
 public:
  virtual ~SlotRoute() = default;
  virtual SlotMemory memory() const = 0;
  virtual CudaSync cuda_sync() const { return CudaSync::None; }
  // What Welcome::route says: the kind, and why any fallback was taken.
  virtual const std::string& description() const = 0;
  // A slot for `layout` (index `slot` of the ring, for names in logs).
  virtual std::unique_ptr<SlotStorage> allocate(const FrameLayout& layout, unsigned slot) = 0;
};

// Host memfd slots. `fallback_reason`, when not empty, is said in the route.
std::unique_ptr<SlotRoute> make_host_route(const std::string& publisher, const std::string& fallback_reason = {});
// CUDA slots on `device`, exported as asked (falling back as CudaExport::Auto
// says, to host slots last).
std::unique_ptr<SlotRoute> make_cuda_route(const std::string& publisher, int device, int export_mode);
// Vulkan OPAQUE_FD slots on `ctx`.
std::unique_ptr<SlotRoute> make_vulkan_route(const std::string& publisher, VkContext& ctx);

// Copies `src` (host or CUDA memory) into `dst` (host memory) with
// copy_frame, done when it returns; refuses other memory, saying what to do.
void copy_frame_to_host(const Frame& src, const Frame& dst, CudaStream cuda_stream);

}  // namespace handoff::live::detail
