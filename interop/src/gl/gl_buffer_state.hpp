#pragma once
#include "gl/worker_core.hpp"
#include "gl/worker_resource.hpp"

#include <handoff/gl_buffer.hpp>

namespace handoff::detail {

// Shared by every GlBuffer copy, CudaGlBuffer and Frame holding the buffer.
struct GlBufferState {
  std::shared_ptr<WorkerCore> core;
  unsigned name = 0;  // deleted by `resource`'s release, on the worker
  std::size_t size = 0;
  GlBufferStorage storage = GlBufferStorage::Default;
  UniqueWorkerResource resource;  // its registration with the worker (glDeleteBuffers)
};

}  // namespace handoff::detail
