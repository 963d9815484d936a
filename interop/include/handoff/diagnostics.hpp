#pragma once
// Counts of what handoff made and has not released yet, for hunting leaks in a
// frame pipeline: read them before and after a loop that should leave nothing
// behind (every frame dropped, every exported tensor's deleter run).
//
//   const handoff::LiveObjects before = handoff::live_objects();
//   for (int i = 0; i < 1000; ++i) process(handoff::allocate_host_frame(PixelFormat::Nv12, 64, 64));
//   assert(handoff::live_objects().frames == before.frames);
//
// The counts are of this copy of the library: a program linking
// libhandoff_interop once sees everything it made; the Python module
// (handoff._handoff) links its own copy, so handoff.live_objects() in Python
// counts what that module made, not what a C++ extension loaded beside it did.
#include <cstddef>
#include <cstdint>

namespace handoff {

// Thread safety: a value.
struct LiveObjects {
  // Frame storage alive: host allocations (allocate_host_frame) and imported
  // producer planes (import_dlpack, which holds the producer's tensors until
  // the last copy of the frame is gone). A Frame describing memory someone
  // else owns (host_planes_frame) holds none.
  std::size_t frames = 0;
  // DLPack tensors exported (export_dlpack, export_dlpack_versioned) whose
  // deleter has not run yet. Each keeps its frame's storage alive.
  std::size_t dlpack_alive = 0;
  // DLPack tensors exported, and deleters run, since the library was loaded:
  // dlpack_alive == dlpack_exported - dlpack_deleted.
  std::uint64_t dlpack_exported = 0;
  std::uint64_t dlpack_deleted = 0;
};

// The counts now. Each field is read on its own (no lock): while other threads
// allocate or export, a snapshot may be between two of their updates.
// Thread safety: any thread.
LiveObjects live_objects() noexcept;

}  // namespace handoff
