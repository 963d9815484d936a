#pragma once
#include "gl/worker_core.hpp"

#include <handoff/gl_buffer.hpp>

namespace handoff::detail {

// Shared by every GlBuffer copy, CudaGlBuffer and Frame holding the buffer.
struct GlBufferState {
  std::shared_ptr<WorkerCore> core;
  unsigned name = 0;
  std::size_t size = 0;
  GlBufferStorage storage = GlBufferStorage::Default;
  std::uint64_t resource = 0;  // registration with the worker (its glDeleteBuffers)

  ~GlBufferState() {
    if (resource) release(*core, resource);  // queued to the worker; no-op after shutdown
  }
};

}  // namespace handoff::detail
