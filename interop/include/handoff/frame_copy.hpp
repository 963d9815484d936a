#pragma once
// copy_frame: the one copy of a frame's planes between memories, used by every
// route that moves frames (the viewer's rings, the publisher's slots, the
// recording of CUDA frames, handoffsrc's system-memory buffers).
//
// Thread safety: any thread; `dst`'s memory must not be written by anyone
// else during the copy.
#include <handoff/cuda_stream.hpp>
#include <handoff/frame.hpp>

namespace handoff {

enum class CopyCompletion {
  Queued,    // CUDA: returns once the copies are queued on the stream (order later work on it)
  Finished,  // returns once the copies are done (the stream synchronised)
};

// Copies every plane of `src` into `dst`: the same format, width and height,
// each frame with its own pitches; host or CUDA memory on either side (a GL
// buffer mapped into host or CUDA memory is one of these). Host to host:
// row copies on the calling thread, done when it returns, whatever
// `completion` says; when the two pitches match, one memcpy per plane (the
// padding between rows comes along), else each row's samples only. With CUDA memory
// on either side: one cuMemcpy2DAsync per plane on `stream`, in the stream's
// context where it says one, else in the CUDA frame's (src's when both are
// CUDA), then as `completion` says.
//
// Throws InvalidFrame naming the field for frames that fail validate() or
// differ in format or size ("dst.width: 64, the source's is 66"), UsageError
// for memory it cannot address (GL buffers and Vulkan memory by offset:
// map them first), handoff::Error for a CUDA failure.
void copy_frame(const Frame& src, const Frame& dst, CudaStream stream = {},
                CopyCompletion completion = CopyCompletion::Finished);

}  // namespace handoff
