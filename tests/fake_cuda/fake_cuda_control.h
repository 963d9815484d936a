/* Control API of the fake CUDA driver (libhandoff_fake_cuda.so).
 *
 * The fake exports these C functions next to the CUDA entry points. A test
 * reaches them on the SAME loaded instance as the code under test: dlopen the
 * path in HANDOFF_CUDA_DRIVER (RTLD_NOLOAD once the driver is loaded, or plain
 * dlopen before, which the later handoff::cuda load then shares) and dlsym
 * each name; fake_cuda_control.hpp does that for C++ tests.
 *
 * Entry names are CUDA's base names ("cuMemAlloc", not "cuMemAlloc_v2"): a
 * call through the versioned symbol or through cuGetProcAddress counts under
 * the base name. All functions are thread-safe.
 * See README.md in this folder for the contract the fake implements. */
#ifndef HANDOFF_FAKE_CUDA_CONTROL_H
#define HANDOFF_FAKE_CUDA_CONTROL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Clears fault rules, holds, the call log and the leak counters (leaked
 * external buffers, objects lost to context resets), and turns external
 * semaphore support off. Live objects (registrations, allocations, contexts)
 * are left alone and stay counted: a reset never hides a leak. */
void fake_cuda_reset(void);

/* From now on, `entry` returns `code` once it has been called `after_calls`
 * more times successfully (0: the next call fails). Every later call fails
 * too, until fake_cuda_reset() or fake_cuda_fail(entry, 0, 0). A failing call
 * has no effect (no object is made, no fd is taken). */
void fake_cuda_fail(const char* entry, int code, int after_calls);

/* A slow driver call: from now on each call to `entry` waits, before it does
 * anything, until fake_cuda_hold(entry, 0) lets it go or `max_wait_ms` has
 * passed (then it goes on as usual). For tests of what other threads can do
 * while one is inside the driver. fake_cuda_held_calls: calls waiting now. */
void fake_cuda_hold(const char* entry, int max_wait_ms);
int fake_cuda_held_calls(const char* entry);

/* Live objects. */
int fake_cuda_live_registrations(void);      /* GL buffers and EGL images not yet unregistered */
int fake_cuda_live_mappings(void);           /* graphics resources mapped now */
int fake_cuda_live_allocations(void);        /* cuMemAlloc / cuMemAllocPitch not yet freed */
int fake_cuda_live_external_memories(void);  /* cuImportExternalMemory not yet destroyed */
int fake_cuda_live_external_buffers(void);   /* cuExternalMemoryGetMappedBuffer not yet cuMemFree'd */
int fake_cuda_live_external_semaphores(void);
int fake_cuda_live_streams(void);
int fake_cuda_live_contexts(void);           /* devices whose primary context is retained */
int fake_cuda_primary_context_refs(int ordinal); /* retain count of one device's primary context */
/* Mapped buffers that were still mapped when their external memory was
 * destroyed (the docs say: cuMemFree them first). Counted, then dropped. */
int fake_cuda_leaked_external_buffers(void);

/* Context resets. A primary context whose retain count falls to 0
 * (cuDevicePrimaryCtxRelease) is reset, as on the real driver: everything made
 * in it is destroyed, and later use of it is CUDA_ERROR_CONTEXT_IS_DESTROYED.
 * fake_cuda_context_resets: how often device `ordinal`'s primary context was
 * reset (never cleared). fake_cuda_objects_lost_to_resets: objects
 * (allocations, graphics registrations, external memories / buffers /
 * semaphores, streams) a reset destroyed while they were still alive: such an
 * object's owner released the context too early, or leaked the object. */
int fake_cuda_context_resets(int ordinal);
int fake_cuda_objects_lost_to_resets(void);

/* The call log. */
int fake_cuda_call_count(const char* entry);
/* Copies whose source or destination is host memory (cuMemcpyHtoD / DtoH,
 * cuMemcpy2D / 2DAsync with a CU_MEMORYTYPE_HOST side) made with a context current, since
 * the last fake_cuda_reset(): a test of a path that must stay on the device
 * asserts it does not grow. */
int fake_cuda_host_copies(void);
/* A small, stable id of the calling thread (1, 2, ...), as the log records it. */
unsigned long long fake_cuda_thread_id(void);
/* The thread of the last call to `entry`; 0 when it was never called. */
unsigned long long fake_cuda_last_thread(const char* entry);
/* Calls to `entry` made by any thread other than `thread`. */
int fake_cuda_calls_off_thread(const char* entry, unsigned long long thread);

/* External semaphores: NOT_SUPPORTED by default; 1 makes import / signal /
 * wait / destroy work (host-side: signal and wait complete at once). */
void fake_cuda_set_semaphores_supported(int supported);

/* EGL images: cuGraphicsEGLRegisterImage returns NOT_SUPPORTED until this
 * says what every registered image looks like (width 0: back to that). Each
 * registration then gets one pitched plane of host memory (pitch: the row
 * rounded up to 256 bytes), which cuGraphicsResourceGetMappedEglFrame
 * describes while mapped (CU_EGL_FRAME_TYPE_PITCH). Reset turns it off. */
void fake_cuda_set_egl_images(unsigned width, unsigned height, unsigned channels, unsigned bytes_per_channel);
/* 1: from now on registered EGL images are CUDA arrays, as a driver that keeps
 * an image tiled makes them: cuGraphicsResourceGetMappedEglFrame describes
 * CU_EGL_FRAME_TYPE_ARRAY (pArray[0], pitch 0) and
 * cuGraphicsResourceGetMappedPointer is CUDA_ERROR_NOT_MAPPED_AS_POINTER.
 * 0 (and reset): one pitched plane. */
void fake_cuda_set_egl_arrays(int arrays);

/* Declares the memfd `fd` a stand-in for a DMA-BUF: cuImportExternalMemory
 * takes its memory object as CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD (a
 * DMA-BUF import otherwise needs a real dma-buf, which nothing on a machine
 * without a GPU makes). Returns -1 (and declares nothing) for anything but a
 * memfd. Reset forgets every declaration. */
int fake_cuda_declare_dmabuf(int fd);

/* Interprocess sharing (handoff::live; README.md "Interprocess sharing").
 * Virtual memory (cuMemCreate ... exported as POSIX fds) and interprocess
 * events work unless turned off here or by HANDOFF_FAKE_CUDA_VMM=0 /
 * HANDOFF_FAKE_CUDA_IPC_EVENTS=0 (reset goes back to the environment's say). */
void fake_cuda_set_vmm_supported(int supported);
void fake_cuda_set_ipc_events_supported(int supported);
int fake_cuda_live_vmm_allocations(void);   /* cuMemCreate / imported handles not yet freed (released and unmapped) */
int fake_cuda_live_vmm_mappings(void);      /* cuMemMap not yet cuMemUnmap'd */
int fake_cuda_live_vmm_reservations(void);  /* cuMemAddressReserve not yet freed */
int fake_cuda_live_events(void);            /* cuEventCreate / cuIpcOpenEventHandle not yet destroyed */

/* Strict mode (README.md "Strict mode"): asynchronous work is queued per
 * stream and run later by a worker of the fake, in stream order, honouring
 * events, stream waits and the legacy null stream; queries answer
 * CUDA_ERROR_NOT_READY until it has run, synchronising calls wait.
 * HANDOFF_FAKE_CUDA_STRICT=1 (read at cuInit and at reset) or this switch
 * (reset goes back to the environment's say). */
void fake_cuda_set_strict(int strict);
int fake_cuda_strict(void);
/* 1: the worker runs no queued work until 0 (or reset): a test of ordering
 * queues work on several streams, then lets it all go at once. */
void fake_cuda_pause_work(int paused);

/* A sticky fault: the `after_calls`+1-th successful call of `entry` from now
 * poisons its context with `code` (e.g. 700, CUDA_ERROR_ILLEGAL_ADDRESS):
 * for queued work (cuMemcpy2DAsync, cuEventRecord, ...) when the work runs
 * (the call itself succeeds); for a synchronous call at once (it fails).
 * From then on every call in that context (synchronise, query, copy,
 * allocate, free, ...) returns `code`, until the context is reset (its last
 * retain released, or cuCtxDestroy). Fires once; code 0 withdraws it.
 * fake_cuda_reset() also clears poisoned contexts (between tests).
 * fake_cuda_sticky_error: the code device `ordinal`'s primary context holds. */
void fake_cuda_fail_sticky(const char* entry, int code, int after_calls);
int fake_cuda_sticky_error(int ordinal);

/* Device memory the host cannot touch (README.md "Device memory"): every
 * CUdeviceptr the fake hands out is PROT_NONE to the host, so a test reads or
 * writes it through the driver (cuMemcpyDtoH, cuMemcpy2D ...) or through
 * these, which use the fake's private read-write view. No context needed, no
 * queued work waited for (synchronise first). [device, device + bytes) must
 * lie inside one piece of live device memory (an allocation, a mapped
 * external buffer, a mapped graphics resource, an accessible VMM mapping).
 * Returns 0, or the CUresult the driver would (1 INVALID_VALUE, 709
 * CONTEXT_IS_DESTROYED). */
int fake_cuda_read_device(unsigned long long device, void* dst, size_t bytes);
int fake_cuda_write_device(unsigned long long device, const void* src, size_t bytes);
/* 1: `p` lies in fake device memory (live, destroyed with its context, an EGL
 * image's plane, or a VMM reservation): a host access there faults. */
int fake_cuda_is_device_address(const void* p);

/* Device 0's UUID from now on (device n adds n to the last byte), as
 * HANDOFF_FAKE_CUDA_UUID would give it, but at once, without a new cuInit (which
 * keeps it): `hex` is 32 hex digits, dashes allowed (handoff::to_string's form).
 * NULL or "" goes back to the environment's say (HANDOFF_FAKE_CUDA_UUID at the
 * last cuInit, else ASCII "HANDOFF-FAKE-GPU"); so does fake_cuda_reset().
 * Returns 0, or 1 (CUDA_ERROR_INVALID_VALUE) for text that is not a UUID
 * (nothing changes). To pass a same-GPU check: the GL / Vulkan device's UUID. */
int fake_cuda_set_uuid(const char* hex);

/* Forgets cuInit: every call that needs it returns CUDA_ERROR_NOT_INITIALIZED
 * until the next cuInit. For testing that contract only. */
void fake_cuda_uninitialize(void);

#ifdef __cplusplus
}
#endif

#endif
