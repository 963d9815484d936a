#pragma once
// C++ access to the fake CUDA driver's control API (fake_cuda_control.h) for
// tests. Link the test to handoff::fake_cuda_control and give it the
// environment ${HANDOFF_FAKE_CUDA_ENV} (HANDOFF_CUDA_DRIVER=<the fake>):
//
//   handoff::test::FakeCuda fake;              // same instance handoff::cuda::driver() loads
//   ASSERT_TRUE(fake.ok()) << fake.error();
//   fake.fail("cuGraphicsMapResources", 999, 0);
//   ...
//   EXPECT_EQ(fake.live_registrations(), 0);
//
// The fake is dlopen'd by path, so it is the very instance handoff::cuda loads
// from the same path (the dynamic loader shares it). Thread-safe after
// construction.
#include "fake_cuda_control.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <type_traits>

namespace handoff::test {

class FakeCuda {
 public:
  // `path`: the fake's file; nullptr reads HANDOFF_CUDA_DRIVER.
  explicit FakeCuda(const char* path = nullptr) {
    if (!path) path = std::getenv("HANDOFF_CUDA_DRIVER");
    if (!path || !*path) {
      error_ = "HANDOFF_CUDA_DRIVER is not set (the test needs ENV ${HANDOFF_FAKE_CUDA_ENV})";
      return;
    }
    lib_ = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      const char* e = ::dlerror();
      error_ = e ? e : "dlopen failed";
      return;
    }
    bool all = true;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib_, name));
      if (!fn) {
        all = false;
        error_ += std::string(error_.empty() ? "" : ", ") + name;
      }
    };
    get(reset, "fake_cuda_reset");
    get(fail, "fake_cuda_fail");
    get(hold, "fake_cuda_hold");
    get(held_calls, "fake_cuda_held_calls");
    get(live_registrations, "fake_cuda_live_registrations");
    get(live_mappings, "fake_cuda_live_mappings");
    get(live_allocations, "fake_cuda_live_allocations");
    get(live_external_memories, "fake_cuda_live_external_memories");
    get(live_external_buffers, "fake_cuda_live_external_buffers");
    get(live_external_semaphores, "fake_cuda_live_external_semaphores");
    get(live_streams, "fake_cuda_live_streams");
    get(live_contexts, "fake_cuda_live_contexts");
    get(primary_context_refs, "fake_cuda_primary_context_refs");
    get(leaked_external_buffers, "fake_cuda_leaked_external_buffers");
    get(context_resets, "fake_cuda_context_resets");
    get(objects_lost_to_resets, "fake_cuda_objects_lost_to_resets");
    get(call_count, "fake_cuda_call_count");
    get(host_copies, "fake_cuda_host_copies");
    get(thread_id, "fake_cuda_thread_id");
    get(last_thread, "fake_cuda_last_thread");
    get(calls_off_thread, "fake_cuda_calls_off_thread");
    get(set_semaphores_supported, "fake_cuda_set_semaphores_supported");
    get(set_strict, "fake_cuda_set_strict");
    get(set_uuid, "fake_cuda_set_uuid");
    get(strict, "fake_cuda_strict");
    get(pause_work, "fake_cuda_pause_work");
    get(fail_sticky, "fake_cuda_fail_sticky");
    get(sticky_error, "fake_cuda_sticky_error");
    get(set_egl_images, "fake_cuda_set_egl_images");
    get(set_egl_arrays, "fake_cuda_set_egl_arrays");
    get(declare_dmabuf, "fake_cuda_declare_dmabuf");
    get(uninitialize, "fake_cuda_uninitialize");
    get(read_device, "fake_cuda_read_device");
    get(write_device, "fake_cuda_write_device");
    get(is_device_address, "fake_cuda_is_device_address");
    // interprocess sharing
    get(set_vmm_supported, "fake_cuda_set_vmm_supported");
    get(set_ipc_events_supported, "fake_cuda_set_ipc_events_supported");
    get(live_vmm_allocations, "fake_cuda_live_vmm_allocations");
    get(live_vmm_mappings, "fake_cuda_live_vmm_mappings");
    get(live_vmm_reservations, "fake_cuda_live_vmm_reservations");
    get(live_events, "fake_cuda_live_events");
    if (!all) error_ = std::string(path) + " lacks the fake control API: " + error_;
    ok_ = all;
  }
  ~FakeCuda() {
    if (lib_) ::dlclose(lib_);
  }
  FakeCuda(const FakeCuda&) = delete;
  FakeCuda& operator=(const FakeCuda&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  decltype(&fake_cuda_reset) reset = nullptr;
  decltype(&fake_cuda_fail) fail = nullptr;
  decltype(&fake_cuda_hold) hold = nullptr;
  decltype(&fake_cuda_held_calls) held_calls = nullptr;
  decltype(&fake_cuda_live_registrations) live_registrations = nullptr;
  decltype(&fake_cuda_live_mappings) live_mappings = nullptr;
  decltype(&fake_cuda_live_allocations) live_allocations = nullptr;
  decltype(&fake_cuda_live_external_memories) live_external_memories = nullptr;
  decltype(&fake_cuda_live_external_buffers) live_external_buffers = nullptr;
  decltype(&fake_cuda_live_external_semaphores) live_external_semaphores = nullptr;
  decltype(&fake_cuda_live_streams) live_streams = nullptr;
  decltype(&fake_cuda_live_contexts) live_contexts = nullptr;
  decltype(&fake_cuda_primary_context_refs) primary_context_refs = nullptr;
  decltype(&fake_cuda_leaked_external_buffers) leaked_external_buffers = nullptr;
  decltype(&fake_cuda_context_resets) context_resets = nullptr;
  decltype(&fake_cuda_objects_lost_to_resets) objects_lost_to_resets = nullptr;
  decltype(&fake_cuda_call_count) call_count = nullptr;
  decltype(&fake_cuda_host_copies) host_copies = nullptr;
  decltype(&fake_cuda_thread_id) thread_id = nullptr;
  decltype(&fake_cuda_last_thread) last_thread = nullptr;
  decltype(&fake_cuda_calls_off_thread) calls_off_thread = nullptr;
  decltype(&fake_cuda_set_semaphores_supported) set_semaphores_supported = nullptr;
  decltype(&fake_cuda_set_strict) set_strict = nullptr;
  decltype(&fake_cuda_set_uuid) set_uuid = nullptr;
  decltype(&fake_cuda_strict) strict = nullptr;
  decltype(&fake_cuda_pause_work) pause_work = nullptr;
  decltype(&fake_cuda_fail_sticky) fail_sticky = nullptr;
  decltype(&fake_cuda_sticky_error) sticky_error = nullptr;
  decltype(&fake_cuda_set_egl_images) set_egl_images = nullptr;
  decltype(&fake_cuda_set_egl_arrays) set_egl_arrays = nullptr;
  decltype(&fake_cuda_declare_dmabuf) declare_dmabuf = nullptr;
  decltype(&fake_cuda_uninitialize) uninitialize = nullptr;
  decltype(&fake_cuda_read_device) read_device = nullptr;
  decltype(&fake_cuda_write_device) write_device = nullptr;
  decltype(&fake_cuda_is_device_address) is_device_address = nullptr;
  // interprocess sharing
  decltype(&fake_cuda_set_vmm_supported) set_vmm_supported = nullptr;
  decltype(&fake_cuda_set_ipc_events_supported) set_ipc_events_supported = nullptr;
  decltype(&fake_cuda_live_vmm_allocations) live_vmm_allocations = nullptr;
  decltype(&fake_cuda_live_vmm_mappings) live_vmm_mappings = nullptr;
  decltype(&fake_cuda_live_vmm_reservations) live_vmm_reservations = nullptr;
  decltype(&fake_cuda_live_events) live_events = nullptr;

 private:
  void* lib_ = nullptr;
  bool ok_ = false;
  std::string error_;
};

// Whether the host can read the byte at `p`, asked without touching it: the
// kernel copies it into a pipe, and a PROT_NONE (or unmapped) address is
// EFAULT instead of a fault. The fake's device memory is never host-readable.
inline bool host_can_read(const void* p) {
  int fds[2];
  if (::pipe(fds) != 0) return false;
  const bool ok = ::write(fds[1], p, 1) == 1;
  ::close(fds[0]);
  ::close(fds[1]);
  return ok;
}

}  // namespace handoff::test
