#pragma once
// The one options type of the viewer's rings of GL buffers: PushRing (frames
// the application shows or presents, and CUDA frames an attached publisher
// sends) and FramePipeline (played sources: the scene, files, recordings).
// Both are users of handoff's SlotRing (slot_ring.hpp), whose SlotRingOptions
// these become; what only one ring has (PushRing's pause policy, a pipeline's
// looping and scene) is an argument of its constructor, not a field the other
// would ignore.
#include <cstddef>
#include <string>

#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/error.hpp>
#include <handoff/slot_ring.hpp>

namespace handoff::view {

struct GlRingOptions {
  std::size_t slots = 3;     // at least 3: one written, one ready, one drawn
  CudaGlOptions interop{};   // backend and CUDA device; access is always WriteDiscard
  std::string name;          // names the ring in messages; empty: the ring's own default
};

// The SlotRing options of a GL ring: UsageError, naming `where`, for fewer
// than 3 slots. `default_name` is used when options.name is empty.
inline SlotRingOptions slot_ring_options(const GlRingOptions& options, RingOrder order, const std::string& default_name,
                                         const std::string& where) {
  if (options.slots < 3)
    throw UsageError(where + ": the ring needs at least 3 buffers (" + std::to_string(options.slots) + " asked for)");
  SlotRingOptions r;
  r.slots = options.slots;
  r.order = order;
  r.name = options.name.empty() ? default_name : options.name;
  return r;
}

// The interop options every slot's registration uses.
inline CudaGlOptions write_discard(CudaGlOptions interop) {
  interop.access = CudaGlAccess::WriteDiscard;
  return interop;
}

}  // namespace handoff::view
