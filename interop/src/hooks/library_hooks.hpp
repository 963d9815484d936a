#pragma once
// Library-wide state that handoff's C++ test hooks set from outside the
// library: the same-GPU check's default for GlWorkers made from now on (a test
// driver's GPU identity cannot match llvmpipe's). Not installed; reached
// through handoff::interop_hooks only (tests/support's hooks library, linked
// into C++ test programs, which call it in their own copy of the library).
// Nothing ships it: the Python module neither links nor publishes it (its
// tests give the fake CUDA driver the GL device's UUID instead). The live-object
// counts are public: <handoff/diagnostics.hpp>.

namespace handoff::detail {

// GlWorkers constructed from now on (a library object's own ones included)
// start with the same-GPU check skipped or not (gl/gl_worker.cpp). Thread
// safety: any thread.
void skip_same_gpu_check_in_new_workers(bool skip) noexcept;

}  // namespace handoff::detail
