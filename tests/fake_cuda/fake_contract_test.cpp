// The fake driver's own contract (README.md), so the tiers built on it can
// trust it: initialisation, contexts, memory, graphics interop on a real GL
// context (Mesa llvmpipe), external memory ownership, fault injection and the
// call log. Every GL test fails on a KHR_debug error message.
#include "fake_test_util.hpp"
#include "headless_gl.hpp"

#include <glad/gl.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#include <handoff/cuda_check.hpp>

namespace handoff::test {
namespace {

class FakeContract : public FakeCudaTest {
 protected:
  void SetUp() override {
    FakeCudaTest::SetUp();
    drv_ = cuda::Driver::load(fake_path());
    ASSERT_TRUE(drv_->usable()) << drv_->describe();
    a_ = &drv_->api();
    ctx_ = cuda::PrimaryContext(*drv_, 0);
  }
  void TearDown() override {
    ctx_.reset();
    FakeCudaTest::TearDown();
  }
  std::unique_ptr<cuda::Driver> drv_;
  const abi::DriverApi* a_ = nullptr;
  cuda::PrimaryContext ctx_;
};

TEST_F(FakeContract, CallsBeforeInitAreNotInitialized) {
  fake_.uninitialize();
  int n = -1;
  EXPECT_EQ(a_->cuDeviceGetCount(&n), abi::CUDA_ERROR_NOT_INITIALIZED);
  abi::CUdevice dev;
  EXPECT_EQ(a_->cuDeviceGet(&dev, 0), abi::CUDA_ERROR_NOT_INITIALIZED);
  int v = 0;
  EXPECT_EQ(a_->cuDriverGetVersion(&v), abi::CUDA_SUCCESS) << "the version works before cuInit";
  ASSERT_EQ(a_->cuInit(0), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDeviceGetCount(&n), abi::CUDA_SUCCESS);
  EXPECT_EQ(n, 1);
}

TEST_F(FakeContract, MemoryNeedsACurrentContext) {
  abi::CUdeviceptr p = 0;
  EXPECT_EQ(a_->cuMemAlloc(&p, 16), abi::CUDA_ERROR_INVALID_CONTEXT);
  cuda::ScopedContext cur(ctx_);
  EXPECT_EQ(a_->cuMemAlloc(&p, 16), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
}

TEST_F(FakeContract, CopiesAreBoundsChecked) {
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuMemAlloc(&p, 100), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_allocations(), base_allocations_ + 1);
  std::vector<unsigned char> in(100), out(100);
  for (int i = 0; i < 100; ++i) in[i] = static_cast<unsigned char>(i * 3);
  EXPECT_EQ(a_->cuMemcpyHtoD(p, in.data(), 100), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemcpyDtoH(out.data(), p, 100), abi::CUDA_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(a_->cuMemcpyHtoD(p + 50, in.data(), 51), abi::CUDA_ERROR_INVALID_VALUE) << "past the end";
  EXPECT_EQ(a_->cuMemcpyDtoH(out.data(), 0x1000, 4), abi::CUDA_ERROR_INVALID_VALUE) << "not device memory";
  EXPECT_EQ(a_->cuMemsetD8(p + 10, 0xAB, 5), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemcpyDtoH(out.data(), p, 100), abi::CUDA_SUCCESS);
  EXPECT_EQ(out[9], in[9]);
  EXPECT_EQ(out[10], 0xAB);
  EXPECT_EQ(out[14], 0xAB);
  EXPECT_EQ(out[15], in[15]);

  // 2D: 4 rows of 6 bytes from a host image with pitch 10 into device pitch 16.
  abi::CUdeviceptr q = 0;
  std::size_t pitch = 0;
  ASSERT_EQ(a_->cuMemAllocPitch(&q, &pitch, 6, 4, 4), abi::CUDA_SUCCESS);
  EXPECT_GE(pitch, 6u);
  std::vector<unsigned char> img(40);
  for (int i = 0; i < 40; ++i) img[i] = static_cast<unsigned char>(i);
  abi::CUDA_MEMCPY2D c{};
  c.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
  c.srcHost = img.data();
  c.srcPitch = 10;
  c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
  c.dstDevice = q;
  c.dstPitch = pitch;
  c.WidthInBytes = 6;
  c.Height = 4;
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_SUCCESS);
  std::vector<unsigned char> back(pitch * 4);
  EXPECT_EQ(a_->cuMemcpyDtoH(back.data(), q, back.size()), abi::CUDA_SUCCESS);
  EXPECT_EQ(back[pitch * 3 + 5], img[35]);
  c.dstPitch = pitch * 2;  // runs past the allocation
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_ERROR_INVALID_VALUE);

  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_ERROR_INVALID_VALUE) << "double free";
  EXPECT_EQ(a_->cuMemFree(q), abi::CUDA_SUCCESS);
}

// Device memory is not host memory: every CUdeviceptr is PROT_NONE to the
// host (a host dereference faults, as on a GPU); the driver's copies and the
// fake's read / write controls reach the bytes.
TEST_F(FakeContract, DeviceMemoryCannotBeTouchedByTheHostOnlyThroughTheDriver) {
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr p = 0, q = 0;
  std::size_t pitch = 0;
  ASSERT_EQ(a_->cuMemAlloc(&p, 100), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemAllocPitch(&q, &pitch, 100, 3, 4), abi::CUDA_SUCCESS);
  EXPECT_EQ(pitch, 512u) << "the pitch rule is unchanged";
  for (abi::CUdeviceptr d : {p, q, p + 99, q + 3 * pitch - 1}) {
    EXPECT_FALSE(host_can_read(reinterpret_cast<const void*>(d))) << "device memory is PROT_NONE to the host";
    EXPECT_EQ(fake_.is_device_address(reinterpret_cast<const void*>(d)), 1);
  }
  EXPECT_EQ(p % 256, 0u);
  EXPECT_EQ(q % 256, 0u);
  const unsigned char in[4] = {1, 2, 3, 4};
  ASSERT_EQ(a_->cuMemcpyHtoD(p + 96, in, 4), abi::CUDA_SUCCESS);
  unsigned char out[4] = {};
  ASSERT_EQ(fake_.read_device(p + 96, out, 4), 0) << "the fake's view holds what the driver wrote";
  EXPECT_EQ(std::memcmp(in, out, 4), 0);
  const unsigned char back[2] = {0xEE, 0xDD};
  ASSERT_EQ(fake_.write_device(q + 2 * pitch, back, 2), 0);
  unsigned char seen[2] = {};
  ASSERT_EQ(a_->cuMemcpyDtoH(seen, q + 2 * pitch, 2), abi::CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(seen, back, 2), 0) << "the driver sees what the fake's view wrote";
  EXPECT_EQ(fake_.read_device(p + 97, out, 4), 1) << "past the allocation: CUDA_ERROR_INVALID_VALUE";
  EXPECT_EQ(fake_.write_device(0x1000, back, 1), 1) << "not device memory";
  // Pinned host memory is host memory (handoff declares no cuMemAllocHost: GStreamer's library uses it).
  void* lib = ::dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto alloc_host = reinterpret_cast<abi::CUresult (*)(void**, std::size_t)>(::dlsym(lib, "cuMemAllocHost_v2"));
  auto free_host = reinterpret_cast<abi::CUresult (*)(void*)>(::dlsym(lib, "cuMemFreeHost"));
  ASSERT_TRUE(alloc_host && free_host);
  void* host = nullptr;
  ASSERT_EQ(alloc_host(&host, 64), abi::CUDA_SUCCESS);
  EXPECT_TRUE(host_can_read(host));
  EXPECT_EQ(fake_.is_device_address(host), 0);
  EXPECT_EQ(free_host(host), abi::CUDA_SUCCESS);
  ::dlclose(lib);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(q), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.is_device_address(reinterpret_cast<const void*>(p)), 0) << "freed";
}

// A host read of device memory is a SIGSEGV, and the fake names the address.
// (Threadsafe style: the child re-runs the test alone, so no other thread of
// the fake holds its lock at the fork.)
TEST_F(FakeContract, AHostReadOfDeviceMemoryFaultsAndTheFakeSaysWhere) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuMemAlloc(&p, 64), abi::CUDA_SUCCESS);
  EXPECT_DEATH(
      {
        const volatile unsigned char* host = reinterpret_cast<const volatile unsigned char*>(p + 8);
        std::printf("%d\n", *host);
      },
      "host access to fake device memory at 0x[0-9a-f]+");
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
}

TEST_F(FakeContract, TwoDCopyPitchesAreAtLeastTheRowAndAtMostTheMaximum) {
  int max_pitch = 0;
  ASSERT_EQ(a_->cuDeviceGetAttribute(&max_pitch, abi::CU_DEVICE_ATTRIBUTE_MAX_PITCH, 0), abi::CUDA_SUCCESS);
  EXPECT_EQ(max_pitch, 2147483647) << "what NVIDIA GPUs report";
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuMemAlloc(&p, 4096), abi::CUDA_SUCCESS);
  std::vector<unsigned char> host(4096);
  abi::CUDA_MEMCPY2D c{};
  c.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
  c.srcHost = host.data();
  c.srcPitch = 64;
  c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
  c.dstDevice = p;
  c.dstPitch = 64;
  c.WidthInBytes = 64;
  c.Height = 1;
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_SUCCESS);
  c.dstPitch = 63;  // one row: the pitch still has to hold it (the docs name no exception)
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_ERROR_INVALID_VALUE) << "destination pitch below the row";
  c.dstPitch = 64;
  c.srcPitch = 0;
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_ERROR_INVALID_VALUE) << "source pitch 0 for one row";
  c.srcPitch = 64;
  c.srcXInBytes = 1;  // the row starts one byte in: the pitch must hold WidthInBytes + srcXInBytes
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_ERROR_INVALID_VALUE);
  c.srcXInBytes = 0;
  c.srcPitch = std::size_t(max_pitch) + 1;  // one row, so nothing past the host buffer is read
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_ERROR_INVALID_VALUE) << "source pitch above CU_DEVICE_ATTRIBUTE_MAX_PITCH";
  c.srcPitch = 64;
  c.dstMemoryType = abi::CU_MEMORYTYPE_HOST;
  c.dstHost = host.data() + 2048;
  c.dstPitch = std::size_t(max_pitch) + 1;
  EXPECT_EQ(a_->cuMemcpy2D(&c), abi::CUDA_ERROR_INVALID_VALUE) << "destination pitch above the maximum";
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
}

TEST_F(FakeContract, ModulesAreNotSupported) {
  cuda::ScopedContext cur(ctx_);
  abi::CUmodule m = nullptr;
  const char ptx[] = ".version 8.0\n";
  EXPECT_EQ(a_->cuModuleLoadData(&m, ptx), abi::CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeContract, StreamsAreCounted) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream st = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&st, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_streams(), 1);
  EXPECT_EQ(a_->cuStreamSynchronize(st), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(st), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(st), abi::CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(FakeContract, GetProcAddressIsVersioned) {
  void* old_sync = nullptr;
  void* new_sync = nullptr;
  abi::CUdriverProcAddressQueryResult q{};
  ASSERT_NE(a_->cuGetProcAddress, nullptr);
  EXPECT_EQ(a_->cuGetProcAddress("cuCtxSynchronize", &old_sync, 12080, 0, &q), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGetProcAddress("cuCtxSynchronize", &new_sync, 13000, 0, &q), abi::CUDA_SUCCESS);
  EXPECT_NE(old_sync, new_sync);
  // Not found is CUDA_SUCCESS with a null pointer; the status says why.
  void* p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(a_->cuGetProcAddress("cuDeviceGetUuid", &p, 9020, 0, &q), abi::CUDA_SUCCESS);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(q, abi::CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
  p = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(a_->cuGetProcAddress("cuNoSuchThing", &p, 13000, 0, &q), abi::CUDA_SUCCESS);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(q, abi::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  EXPECT_EQ(a_->cuGetProcAddress("cuMemAlloc", &p, 13010, 0, &q), abi::CUDA_ERROR_INVALID_VALUE)
      << "a version newer than the driver's";
}

TEST_F(FakeContract, CallLogRecordsThreads) {
  fake_.reset();  // forget the fixture's own calls
  const unsigned long long me = fake_.thread_id();
  unsigned long long other = 0;
  int n = 0;
  a_->cuDeviceGetCount(&n);
  std::thread t([&] {
    other = fake_.thread_id();
    int k = 0;
    a_->cuDeviceGetCount(&k);
    a_->cuDeviceGetCount(&k);
  });
  t.join();
  EXPECT_NE(me, other);
  EXPECT_EQ(fake_.call_count("cuDeviceGetCount"), 3);
  EXPECT_EQ(fake_.last_thread("cuDeviceGetCount"), other);
  EXPECT_EQ(fake_.calls_off_thread("cuDeviceGetCount", me), 2);
  EXPECT_EQ(fake_.calls_off_thread("cuDeviceGetCount", other), 1);
  EXPECT_EQ(fake_.call_count("cuNeverCalled"), 0);
  EXPECT_EQ(fake_.last_thread("cuNeverCalled"), 0u);
}

TEST_F(FakeContract, AHeldEntryPointWaitsUntilLetGo) {
  std::atomic<bool> returned{false};
  fake_.hold("cuDeviceGetCount", 60'000);
  std::thread caller([&] {
    int n = 0;
    EXPECT_EQ(a_->cuDeviceGetCount(&n), abi::CUDA_SUCCESS);
    returned = true;
  });
  for (int i = 0; i < 10'000 && fake_.held_calls("cuDeviceGetCount") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(fake_.held_calls("cuDeviceGetCount"), 1);
  EXPECT_FALSE(returned);
  abi::CUdevice dev = -1;
  EXPECT_EQ(a_->cuDeviceGet(&dev, 0), abi::CUDA_SUCCESS) << "other entry points are not held";
  fake_.hold("cuDeviceGetCount", 0);
  caller.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(fake_.held_calls("cuDeviceGetCount"), 0);
  fake_.hold("cuDeviceGetCount", 1);  // a bound alone lets the call go on
  int n = 0;
  EXPECT_EQ(a_->cuDeviceGetCount(&n), abi::CUDA_SUCCESS);
}

// --- external memory ---------------------------------------------------------
class ExternalMemory : public FakeContract {
 protected:
  int make_fd(std::size_t size) {
    int fd = ::memfd_create("handoff-fake-cuda-test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    return fd;
  }
  static bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }
  abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc(int fd, std::size_t size) {
    abi::CUDA_EXTERNAL_MEMORY_HANDLE_DESC d{};
    d.type = abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    d.handle.fd = fd;
    d.size = size;
    return d;
  }
};

TEST_F(ExternalMemory, ImportMapFreeDestroy) {
  cuda::ScopedContext cur(ctx_);
  const int fd = make_fd(8192);
  // The exporter's own view of the memory.
  auto* view = static_cast<unsigned char*>(::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  const int exporter_fd = ::dup(fd);
  auto d = desc(fd, 8192);
  abi::CUexternalMemory mem = nullptr;
  ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_external_memories(), 1);
  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.offset = 4096;
  b.size = 4096;
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuExternalMemoryGetMappedBuffer(&p, mem, &b), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_external_buffers(), 1);
  const unsigned char data[4] = {1, 2, 3, 4};
  ASSERT_EQ(a_->cuMemcpyHtoD(p + 8, data, 4), abi::CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(view + 4096 + 8, data, 4), 0) << "CUDA writes are seen by the exporter";
  b.offset = 4097;  // past the end with size 4096
  abi::CUdeviceptr bad = 0;
  EXPECT_EQ(a_->cuExternalMemoryGetMappedBuffer(&bad, mem, &b), abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.leaked_external_buffers(), 0);
  EXPECT_FALSE(fd_open(fd)) << "the import owned the fd and closed it";
  ::munmap(view, 8192);
  ::close(exporter_fd);
}

TEST_F(ExternalMemory, AMappedBufferIsDeviceMemoryTheHostCannotTouch) {
  cuda::ScopedContext cur(ctx_);
  const int fd = make_fd(8192);
  auto* view = static_cast<unsigned char*>(::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  auto d = desc(fd, 8192);
  abi::CUexternalMemory mem = nullptr;
  ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS);
  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.offset = 256;
  b.size = 4096;
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuExternalMemoryGetMappedBuffer(&p, mem, &b), abi::CUDA_SUCCESS);
  EXPECT_FALSE(host_can_read(reinterpret_cast<const void*>(p)));
  EXPECT_FALSE(host_can_read(reinterpret_cast<const void*>(p + 4095)));
  view[256 + 10] = 0x42;  // the exporter writes its own mapping
  unsigned char x = 0;
  ASSERT_EQ(fake_.read_device(p + 10, &x, 1), 0);
  EXPECT_EQ(x, 0x42) << "the same pages";
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_SUCCESS);
  ::munmap(view, 8192);
}

TEST_F(ExternalMemory, MesaMemoryFdIsMappedAtItsDataOffset) {
  // The layout lavapipe exports (Mesa 22.3): a header page, then the allocation.
  cuda::ScopedContext cur(ctx_);
  const std::size_t total = 4096 + 8192 + 40;
  const int fd = make_fd(total);
  const std::uint64_t header[2] = {total, 4096};
  ASSERT_EQ(::pwrite(fd, header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
  auto* view = static_cast<unsigned char*>(::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(view, MAP_FAILED);
  auto d = desc(fd, 8192);
  abi::CUexternalMemory mem = nullptr;
  ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS);
  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.size = 8192;
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuExternalMemoryGetMappedBuffer(&p, mem, &b), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemsetD8(p, 0x77, 2), abi::CUDA_SUCCESS);
  EXPECT_EQ(view[4096], 0x77);
  EXPECT_EQ(view[4097], 0x77);
  EXPECT_EQ(view[4098], 0);
  EXPECT_EQ(reinterpret_cast<const std::uint64_t*>(view)[0], total) << "the header is untouched";
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_SUCCESS);
  ::munmap(view, total);
}

TEST_F(ExternalMemory, ImportRefusesWhatIsNotMemoryOfTheDeclaredType) {
  cuda::ScopedContext cur(ctx_);
  abi::CUexternalMemory mem = nullptr;
  int pipe_fds[2] = {-1, -1};
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  auto d = desc(pipe_fds[0], 4096);
  EXPECT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_ERROR_INVALID_VALUE) << "a pipe";
  EXPECT_TRUE(fd_open(pipe_fds[0])) << "a refused import leaves the fd with the caller";
  char path[] = "/tmp/handoff-fake-cuda-file-XXXXXX";
  const int file = ::mkostemp(path, O_CLOEXEC);
  ASSERT_GE(file, 0);
  ::unlink(path);
  ASSERT_EQ(::ftruncate(file, 4096), 0);
  d = desc(file, 4096);
  EXPECT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_ERROR_INVALID_VALUE) << "a file on disk";
  const int memfd = make_fd(4096);
  d = desc(memfd, 4096);
  d.type = abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
  EXPECT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_ERROR_INVALID_VALUE) << "a memfd is no DMA-BUF";
  EXPECT_EQ(fake_.live_external_memories(), 0);
  ASSERT_EQ(fake_.declare_dmabuf(memfd), 0);
  EXPECT_EQ(fake_.declare_dmabuf(pipe_fds[1]), -1) << "only a memfd can stand for a DMA-BUF";
  ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS) << "the declared stand-in";
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_SUCCESS);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::close(file);
}

TEST_F(ExternalMemory, TheDedicatedFlagMustFitTheAllocation) {
  cuda::ScopedContext cur(ctx_);
  abi::CUexternalMemory first = nullptr, second = nullptr;
  // A DMA-BUF import's flags "must be zero" (the docs).
  const int dmabuf = make_fd(4096);
  ASSERT_EQ(fake_.declare_dmabuf(dmabuf), 0);
  auto d = desc(dmabuf, 4096);
  d.type = abi::CU_EXTERNAL_MEMORY_HANDLE_TYPE_DMABUF_FD;
  d.flags = abi::kCudaExternalMemoryDedicated;
  EXPECT_EQ(a_->cuImportExternalMemory(&first, &d), abi::CUDA_ERROR_INVALID_VALUE);
  ::close(dmabuf);
  // Two imports of one memory object that disagree about it.
  const int fd = make_fd(4096);
  const int again = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  d = desc(fd, 4096);
  d.flags = abi::kCudaExternalMemoryDedicated;
  ASSERT_EQ(a_->cuImportExternalMemory(&first, &d), abi::CUDA_SUCCESS);
  d = desc(again, 4096);
  EXPECT_EQ(a_->cuImportExternalMemory(&second, &d), abi::CUDA_ERROR_INVALID_VALUE)
      << "imported as dedicated once, so always";
  d.flags = abi::kCudaExternalMemoryDedicated;
  ASSERT_EQ(a_->cuImportExternalMemory(&second, &d), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(second), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(first), abi::CUDA_SUCCESS);
  // A cuMemCreate allocation is no dedicated resource.
  abi::CUmemAllocationProp prop{};
  prop.type = abi::CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = abi::CU_MEM_LOCATION_TYPE_DEVICE;
  prop.requestedHandleTypes = abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  std::size_t granularity = 0;
  ASSERT_EQ(a_->cuMemGetAllocationGranularity(&granularity, &prop, abi::CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            abi::CUDA_SUCCESS);
  abi::CUmemGenericAllocationHandle vmm = 0;
  ASSERT_EQ(a_->cuMemCreate(&vmm, granularity, &prop, 0), abi::CUDA_SUCCESS);
  int exported = -1;
  ASSERT_EQ(a_->cuMemExportToShareableHandle(&exported, vmm, abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            abi::CUDA_SUCCESS);
  d = desc(exported, granularity);
  d.flags = abi::kCudaExternalMemoryDedicated;
  EXPECT_EQ(a_->cuImportExternalMemory(&first, &d), abi::CUDA_ERROR_INVALID_VALUE);
  d.flags = 0;
  ASSERT_EQ(a_->cuImportExternalMemory(&first, &d), abi::CUDA_SUCCESS) << "as plain memory it imports";
  EXPECT_EQ(a_->cuDestroyExternalMemory(first), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemRelease(vmm), abi::CUDA_SUCCESS);
}

TEST_F(ExternalMemory, MappedBufferOffsetsAreAlignedTo256Bytes) {
  cuda::ScopedContext cur(ctx_);
  auto d = desc(make_fd(8192), 8192);
  abi::CUexternalMemory mem = nullptr;
  ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS);
  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.offset = 100;
  b.size = 256;
  abi::CUdeviceptr p = 0;
  EXPECT_EQ(a_->cuExternalMemoryGetMappedBuffer(&p, mem, &b), abi::CUDA_ERROR_INVALID_VALUE) << "offset 100";
  EXPECT_EQ(fake_.live_external_buffers(), 0);
  b.offset = 256;
  b.size = 100;  // any size
  ASSERT_EQ(a_->cuExternalMemoryGetMappedBuffer(&p, mem, &b), abi::CUDA_SUCCESS);
  EXPECT_EQ(p % 256, 0u);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_SUCCESS);
}

TEST_F(ExternalMemory, DestroyBeforeFreeIsCountedAsALeak) {
  cuda::ScopedContext cur(ctx_);
  auto d = desc(make_fd(4096), 4096);
  abi::CUexternalMemory mem = nullptr;
  ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS);
  abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
  b.size = 4096;
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuExternalMemoryGetMappedBuffer(&p, mem, &b), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.leaked_external_buffers(), 1);
  EXPECT_EQ(fake_.live_external_buffers(), 0);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_ERROR_INVALID_VALUE) << "its memory is gone";
}

TEST_F(ExternalMemory, FailedImportLeavesTheFdWithTheCaller) {
  cuda::ScopedContext cur(ctx_);
  const int fd = make_fd(4096);
  auto d = desc(fd, 8192);  // larger than the allocation
  abi::CUexternalMemory mem = nullptr;
  EXPECT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_TRUE(fd_open(fd));
  d.size = 4096;
  fake_.fail("cuImportExternalMemory", abi::CUDA_ERROR_OUT_OF_MEMORY, 0);
  EXPECT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(fd_open(fd));
  EXPECT_EQ(fake_.live_external_memories(), 0);
  ::close(fd);
}

TEST_F(ExternalMemory, ReleasingTheLastRetainResetsTheContextAndEverythingInIt) {
  ASSERT_EQ(fake_.primary_context_refs(0), 1) << "the fixture's context is the only retain";
  fake_.set_semaphores_supported(1);
  const abi::CUcontext handle = ctx_.get();
  abi::CUdeviceptr p = 0, buffer = 0;
  abi::CUstream stream = nullptr;
  abi::CUexternalMemory mem = nullptr;
  abi::CUexternalSemaphore sem = nullptr;
  const int memory_fd = make_fd(4096), semaphore_fd = make_fd(16);
  {
    cuda::ScopedContext cur(ctx_);
    ASSERT_EQ(a_->cuMemAlloc(&p, 64), abi::CUDA_SUCCESS);
    ASSERT_EQ(a_->cuStreamCreate(&stream, 0), abi::CUDA_SUCCESS);
    auto d = desc(memory_fd, 4096);
    ASSERT_EQ(a_->cuImportExternalMemory(&mem, &d), abi::CUDA_SUCCESS);
    abi::CUDA_EXTERNAL_MEMORY_BUFFER_DESC b{};
    b.size = 4096;
    ASSERT_EQ(a_->cuExternalMemoryGetMappedBuffer(&buffer, mem, &b), abi::CUDA_SUCCESS);
    abi::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC sd{};
    sd.type = abi::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
    sd.handle.fd = semaphore_fd;
    ASSERT_EQ(a_->cuImportExternalSemaphore(&sem, &sd), abi::CUDA_SUCCESS);
  }
  const int resets = fake_.context_resets(0);
  ctx_.reset();  // the last retain
  EXPECT_EQ(fake_.context_resets(0), resets + 1);
  EXPECT_EQ(fake_.objects_lost_to_resets(), 5) << "allocation, stream, external memory and buffer, semaphore";
  EXPECT_EQ(fake_.live_allocations(), base_allocations_);
  EXPECT_EQ(fake_.live_streams(), 0);
  EXPECT_EQ(fake_.live_external_memories(), 0);
  EXPECT_EQ(fake_.live_external_buffers(), 0);
  EXPECT_EQ(fake_.live_external_semaphores(), 0);
  EXPECT_FALSE(fd_open(memory_fd)) << "the driver closed the descriptors it owned";
  EXPECT_FALSE(fd_open(semaphore_fd));
  EXPECT_EQ(a_->cuCtxPushCurrent(handle), abi::CUDA_ERROR_INVALID_CONTEXT) << "not retained by anyone";

  // Retained again: the same handle, a new context without the old objects.
  ctx_ = cuda::PrimaryContext(*drv_, 0);
  EXPECT_EQ(ctx_.get(), handle);
  cuda::ScopedContext cur(ctx_);
  unsigned char byte = 0;
  EXPECT_EQ(a_->cuMemcpyDtoH(&byte, p, 1), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuMemsetD8(buffer, 0, 1), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuMemFree(buffer), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuStreamSynchronize(stream), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuStreamDestroy(stream), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuDestroyExternalMemory(mem), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuDestroyExternalSemaphore(sem), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuMemcpyDtoH(&byte, 0x1000, 1), abi::CUDA_ERROR_INVALID_VALUE) << "never device memory";
  abi::CUdeviceptr q = 0;
  ASSERT_EQ(a_->cuMemAlloc(&q, 64), abi::CUDA_SUCCESS) << "the new context works";
  EXPECT_EQ(a_->cuMemFree(q), abi::CUDA_SUCCESS);
  fake_.reset();  // the losses were this test's point
}

// Entry points only GStreamer's CUDA library calls (not in handoff's ABI):
// reached by their exported names.
template <typename F>
F fake_symbol(const char* name);

TEST_F(FakeContract, StreamsOfAnotherContextTakeNoWorkAndEventsRecordOnlyInTheirOwn) {
  using Create = abi::CUresult (*)(abi::CUcontext*, unsigned, abi::CUdevice);
  using Destroy = abi::CUresult (*)(abi::CUcontext);
  const auto create = fake_symbol<Create>("cuCtxCreate_v2");
  const auto destroy = fake_symbol<Destroy>("cuCtxDestroy_v2");
  ASSERT_TRUE(create && destroy);
  abi::CUcontext own = nullptr;
  ASSERT_EQ(create(&own, 0, 0), abi::CUDA_SUCCESS);  // current on this thread now
  abi::CUstream theirs = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&theirs, 0), abi::CUDA_SUCCESS);
  abi::CUevent their_event = nullptr;
  ASSERT_EQ(a_->cuEventCreate(&their_event, abi::CU_EVENT_DISABLE_TIMING), abi::CUDA_SUCCESS);
  abi::CUcontext popped = nullptr;
  ASSERT_EQ(a_->cuCtxPopCurrent(&popped), abi::CUDA_SUCCESS);
  {
    cuda::ScopedContext cur(ctx_);  // the primary context
    abi::CUdeviceptr p = 0;
    ASSERT_EQ(a_->cuMemAlloc(&p, 256), abi::CUDA_SUCCESS);
    unsigned char host[16] = {};
    abi::CUDA_MEMCPY2D c{};
    c.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 16;
    c.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
    c.dstDevice = p;
    c.dstPitch = 16;
    c.WidthInBytes = 16;
    c.Height = 1;
    EXPECT_EQ(a_->cuMemcpy2DAsync(&c, theirs), abi::CUDA_ERROR_INVALID_HANDLE) << "a stream of another context";
    EXPECT_EQ(a_->cuMemcpy2DAsync(&c, nullptr), abi::CUDA_SUCCESS);
    abi::CUevent mine = nullptr;
    ASSERT_EQ(a_->cuEventCreate(&mine, abi::CU_EVENT_DISABLE_TIMING), abi::CUDA_SUCCESS);
    EXPECT_EQ(a_->cuEventRecord(mine, theirs), abi::CUDA_ERROR_INVALID_HANDLE) << "the docs: same context or INVALID_HANDLE";
    EXPECT_EQ(a_->cuEventRecord(their_event, nullptr), abi::CUDA_ERROR_INVALID_HANDLE)
        << "an event of another context on this context's default stream";
    EXPECT_EQ(a_->cuEventRecord(mine, nullptr), abi::CUDA_SUCCESS);
    EXPECT_EQ(a_->cuStreamWaitEvent(theirs, mine, 0), abi::CUDA_SUCCESS) << "the docs: the event may be of another context";
    EXPECT_EQ(a_->cuStreamSynchronize(theirs), abi::CUDA_SUCCESS) << "synchronising needs no particular context";
    EXPECT_EQ(a_->cuEventDestroy(mine), abi::CUDA_SUCCESS);
    EXPECT_EQ(a_->cuMemFree(p), abi::CUDA_SUCCESS);
  }
  ASSERT_EQ(a_->cuCtxPushCurrent(own), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventRecord(their_event, theirs), abi::CUDA_SUCCESS) << "both of the current context";
  EXPECT_EQ(a_->cuEventDestroy(their_event), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(theirs), abi::CUDA_SUCCESS);
  EXPECT_EQ(destroy(own), abi::CUDA_SUCCESS);
}

TEST_F(FakeContract, StaleInterprocessEventHandlesAreRefused) {
  cuda::ScopedContext cur(ctx_);
  abi::CUevent e = nullptr;
  ASSERT_EQ(a_->cuEventCreate(&e, abi::CU_EVENT_INTERPROCESS | abi::CU_EVENT_DISABLE_TIMING), abi::CUDA_SUCCESS);
  abi::CUipcEventHandle h{};
  ASSERT_EQ(a_->cuIpcGetEventHandle(&h, e), abi::CUDA_SUCCESS);
  abi::CUevent opened = nullptr;
  ASSERT_EQ(a_->cuIpcOpenEventHandle(&opened, h), abi::CUDA_SUCCESS) << "a live event's handle opens";
  EXPECT_EQ(a_->cuEventDestroy(opened), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventDestroy(e), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuIpcOpenEventHandle(&opened, h), abi::CUDA_ERROR_INVALID_VALUE) << "its event was destroyed";
  // A handle from a process that has exited.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::int32_t gone = child;
  std::memcpy(h.reserved + 4, &gone, 4);
  EXPECT_EQ(a_->cuIpcOpenEventHandle(&opened, h), abi::CUDA_ERROR_INVALID_VALUE) << "its process has exited";
  EXPECT_EQ(fake_.live_events(), 0);
}

TEST_F(FakeContract, AResetContextStillCurrentIsDestroyed) {
  const abi::CUcontext handle = ctx_.get();
  {
    cuda::ScopedContext cur(ctx_);
    ctx_.reset();  // reset while current: the release does not pop it
    abi::CUdeviceptr p = 0;
    EXPECT_EQ(a_->cuMemAlloc(&p, 16), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
    EXPECT_EQ(a_->cuCtxSynchronize(), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
    abi::CUcontext current = nullptr;
    EXPECT_EQ(a_->cuCtxGetCurrent(&current), abi::CUDA_SUCCESS);
    EXPECT_EQ(current, handle);
  }  // the pop still works
  abi::CUcontext current = handle;
  EXPECT_EQ(a_->cuCtxGetCurrent(&current), abi::CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr);
}

template <typename F>
F fake_symbol(const char* name) {
  void* lib = ::dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
  F f = lib ? reinterpret_cast<F>(::dlsym(lib, name)) : nullptr;
  if (lib) ::dlclose(lib);
  return f;
}

TEST_F(FakeContract, ContextsOfTheirOwnLiveUntilDestroyedAndTakeWhatWasMadeInThem) {
  using Create = abi::CUresult (*)(abi::CUcontext*, unsigned, abi::CUdevice);
  using Destroy = abi::CUresult (*)(abi::CUcontext);
  const auto create = fake_symbol<Create>("cuCtxCreate_v2");
  const auto destroy = fake_symbol<Destroy>("cuCtxDestroy_v2");
  ASSERT_TRUE(create && destroy);
  abi::CUcontext own = nullptr;
  ASSERT_EQ(create(&own, 0, 0), abi::CUDA_SUCCESS);
  abi::CUcontext current = nullptr;
  EXPECT_EQ(a_->cuCtxGetCurrent(&current), abi::CUDA_SUCCESS);
  EXPECT_EQ(current, own) << "current on the creating thread";
  EXPECT_NE(own, ctx_.get()) << "not the primary context";
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuMemAlloc(&p, 64), abi::CUDA_SUCCESS);
  const int lost = fake_.objects_lost_to_resets();
  EXPECT_EQ(destroy(own), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.objects_lost_to_resets(), lost + 1) << "its allocation went with it";
  EXPECT_EQ(a_->cuCtxGetCurrent(&current), abi::CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr) << "popped from the destroying thread";
  EXPECT_EQ(a_->cuCtxPushCurrent(own), abi::CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(destroy(own), abi::CUDA_ERROR_INVALID_CONTEXT) << "destroyed twice";
  EXPECT_EQ(destroy(ctx_.get()), abi::CUDA_ERROR_INVALID_CONTEXT) << "a primary context is released, not destroyed";
  fake_.reset();  // the allocation was lost on purpose: not a leak for the fixture to report
}

TEST_F(FakeContract, PinnedHostMemoryNeedsAContextAndIsFreedOnce) {
  using AllocHost = abi::CUresult (*)(void**, std::size_t);
  using FreeHost = abi::CUresult (*)(void*);
  const auto alloc = fake_symbol<AllocHost>("cuMemAllocHost_v2");
  const auto free_host = fake_symbol<FreeHost>("cuMemFreeHost");
  ASSERT_TRUE(alloc && free_host);
  void* p = nullptr;
  EXPECT_EQ(alloc(&p, 100), abi::CUDA_ERROR_INVALID_CONTEXT);
  cuda::ScopedContext cur(ctx_);
  ASSERT_EQ(alloc(&p, 100), abi::CUDA_SUCCESS);
  std::memset(p, 7, 100);
  EXPECT_EQ(free_host(p), abi::CUDA_SUCCESS);
  EXPECT_EQ(free_host(p), abi::CUDA_ERROR_INVALID_VALUE) << "freed twice";
}

TEST_F(ExternalMemory, SemaphoresAreNotSupportedUnlessEnabled) {
  cuda::ScopedContext cur(ctx_);
  const int fd = make_fd(16);
  abi::CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d{};
  d.type = abi::CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD;
  d.handle.fd = fd;
  abi::CUexternalSemaphore sem = nullptr;
  EXPECT_EQ(a_->cuImportExternalSemaphore(&sem, &d), abi::CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_TRUE(fd_open(fd));
  fake_.set_semaphores_supported(1);
  ASSERT_EQ(a_->cuImportExternalSemaphore(&sem, &d), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_external_semaphores(), 1);
  abi::CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS sp{};
  abi::CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS wp{};
  EXPECT_EQ(a_->cuSignalExternalSemaphoresAsync(&sem, &sp, 1, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuWaitExternalSemaphoresAsync(&sem, &wp, 1, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuDestroyExternalSemaphore(sem), abi::CUDA_SUCCESS);
  EXPECT_FALSE(fd_open(fd));
  EXPECT_EQ(fake_.live_external_semaphores(), 0);
}

// --- graphics interop on a real GL context ------------------------------------
class GraphicsInterop : public FakeContract {
 protected:
  void SetUp() override {
    FakeContract::SetUp();
    gl_ = std::make_unique<HeadlessGl>();
    ASSERT_TRUE(gl_->error().empty()) << "headless GL: " << gl_->error();
    cur_.emplace(ctx_);
  }
  void TearDown() override {
    for (GLuint b : buffers_) glDeleteBuffers(1, &b);
    if (gl_) gl_->messages().fail_on_any("KHR_debug error");
    cur_.reset();
    gl_.reset();
    FakeContract::TearDown();
  }
  GLuint buffer(std::size_t size, bool immutable_unmappable = false) {
    GLuint b = 0;
    glCreateBuffers(1, &b);
    std::vector<unsigned char> init(size);
    for (std::size_t i = 0; i < size; ++i) init[i] = static_cast<unsigned char>(i);
    if (immutable_unmappable) glNamedBufferStorage(b, static_cast<GLsizeiptr>(size), init.data(), GL_DYNAMIC_STORAGE_BIT);
    else glNamedBufferData(b, static_cast<GLsizeiptr>(size), init.data(), GL_DYNAMIC_DRAW);
    buffers_.push_back(b);
    return b;
  }
  std::vector<unsigned char> read(GLuint b, std::size_t size) {
    std::vector<unsigned char> v(size);
    glGetNamedBufferSubData(b, 0, static_cast<GLsizeiptr>(size), v.data());
    return v;
  }
  std::unique_ptr<HeadlessGl> gl_;
  std::optional<cuda::ScopedContext> cur_;
  std::vector<GLuint> buffers_;
};

TEST_F(GraphicsInterop, RegisterMapWriteUnmap) {
  const GLuint b = buffer(256);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, abi::CU_GRAPHICS_REGISTER_FLAGS_NONE), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_registrations(), 1);
  abi::CUdeviceptr p = 0;
  std::size_t size = 0;
  EXPECT_EQ(a_->cuGraphicsResourceGetMappedPointer(&p, &size, r), abi::CUDA_ERROR_NOT_MAPPED);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_mappings(), 1);
  EXPECT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_ERROR_ALREADY_MAPPED);
  EXPECT_EQ(a_->cuGraphicsResourceSetMapFlags(r, abi::CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY),
            abi::CUDA_ERROR_ALREADY_MAPPED);
  ASSERT_EQ(a_->cuGraphicsResourceGetMappedPointer(&p, &size, r), abi::CUDA_SUCCESS);
  EXPECT_EQ(size, 256u);
  std::vector<unsigned char> seen(256);
  ASSERT_EQ(a_->cuMemcpyDtoH(seen.data(), p, 256), abi::CUDA_SUCCESS);
  EXPECT_EQ(seen[200], 200) << "the mapped pointer holds the buffer's contents";
  const unsigned char value[3] = {9, 8, 7};
  ASSERT_EQ(a_->cuMemcpyHtoD(p + 100, value, 3), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemcpyHtoD(p + 254, value, 3), abi::CUDA_ERROR_INVALID_VALUE) << "past the buffer";
  ASSERT_EQ(a_->cuGraphicsUnmapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_mappings(), 0);
  EXPECT_EQ(a_->cuGraphicsUnmapResources(1, &r, nullptr), abi::CUDA_ERROR_NOT_MAPPED);
  EXPECT_EQ(a_->cuMemcpyDtoH(seen.data(), p, 4), abi::CUDA_ERROR_INVALID_VALUE) << "unmapped: no longer device memory";
  auto after = read(b, 256);
  EXPECT_EQ(after[100], 9);
  EXPECT_EQ(after[102], 7);
  EXPECT_EQ(after[103], 103);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_ERROR_INVALID_HANDLE);
}

// GL's host mapping cannot be mapped twice: the CUDA pointer is device memory
// of the fake's own (PROT_NONE), filled at map and written back at unmap.
TEST_F(GraphicsInterop, TheMappedPointerIsDeviceMemoryNotGlsHostMapping) {
  const GLuint b = buffer(256);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  abi::CUdeviceptr p = 0;
  std::size_t size = 0;
  ASSERT_EQ(a_->cuGraphicsResourceGetMappedPointer(&p, &size, r), abi::CUDA_SUCCESS);
  EXPECT_FALSE(host_can_read(reinterpret_cast<const void*>(p)));
  EXPECT_EQ(fake_.is_device_address(reinterpret_cast<const void*>(p + 255)), 1);
  unsigned char x = 0;
  ASSERT_EQ(fake_.read_device(p + 17, &x, 1), 0);
  EXPECT_EQ(x, 17);
  ASSERT_EQ(a_->cuGraphicsUnmapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
}

TEST_F(GraphicsInterop, AnEglImagesPlaneIsDeviceMemory) {
  fake_.set_egl_images(16, 4, 4, 1);
  abi::CUgraphicsResource r = nullptr;
  int stand_in = 0;  // any non-null EGLImage registers
  ASSERT_EQ(a_->cuGraphicsEGLRegisterImage(&r, &stand_in, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  abi::CUeglFrame f{};
  ASSERT_EQ(a_->cuGraphicsResourceGetMappedEglFrame(&f, r, 0, 0), abi::CUDA_SUCCESS);
  EXPECT_FALSE(host_can_read(f.frame.pPitch[0]));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.frame.pPitch[0]) % 256, 0u);
  const unsigned char px[4] = {1, 2, 3, 4};
  ASSERT_EQ(a_->cuMemcpyHtoD(reinterpret_cast<abi::CUdeviceptr>(f.frame.pPitch[0]) + f.pitch, px, 4),
            abi::CUDA_SUCCESS);
  unsigned char seen[4] = {};
  ASSERT_EQ(fake_.read_device(reinterpret_cast<abi::CUdeviceptr>(f.frame.pPitch[0]) + f.pitch, seen, 4), 0);
  EXPECT_EQ(std::memcmp(seen, px, 4), 0);
  ASSERT_EQ(a_->cuGraphicsUnmapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
}

TEST_F(GraphicsInterop, RegisterRefusesWhatIsNotABuffer) {
  abi::CUgraphicsResource r = nullptr;
  EXPECT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, 4242, 0), abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, 0, 0), abi::CUDA_ERROR_INVALID_VALUE);
  const GLuint b = buffer(16);
  EXPECT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, abi::CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST),
            abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(fake_.live_registrations(), 0);
}

TEST_F(GraphicsInterop, UnregisterOfAMappedResourceUnmapsIt) {
  const GLuint b = buffer(64);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_mappings(), 0);
  GLint mapped = 1;
  glGetNamedBufferParameteriv(b, GL_BUFFER_MAPPED, &mapped);
  EXPECT_EQ(mapped, GL_FALSE);
}

TEST_F(GraphicsInterop, BatchMapIsAllOrNothing) {
  abi::CUgraphicsResource r[2] = {};
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r[0], buffer(32), 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r[1], buffer(48), 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r[1], nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsMapResources(2, r, nullptr), abi::CUDA_ERROR_ALREADY_MAPPED);
  EXPECT_EQ(fake_.live_mappings(), 1) << "r[0] must not stay mapped after the failed batch";
  ASSERT_EQ(a_->cuGraphicsUnmapResources(1, &r[1], nullptr), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(2, r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.live_mappings(), 2);
  EXPECT_EQ(fake_.call_count("cuGraphicsMapResources"), 3);
  ASSERT_EQ(a_->cuGraphicsUnmapResources(2, r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsUnregisterResource(r[0]), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsUnregisterResource(r[1]), abi::CUDA_SUCCESS);
}

TEST_F(GraphicsInterop, AResourceListedTwiceIsAnInvalidHandleAndNothingIsMappedOrUnmapped) {
  abi::CUgraphicsResource r[3] = {};
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r[0], buffer(32), 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r[1], buffer(48), 0), abi::CUDA_SUCCESS);
  r[2] = r[0];
  EXPECT_EQ(a_->cuGraphicsMapResources(3, r, nullptr), abi::CUDA_ERROR_INVALID_HANDLE) << "the docs of both calls";
  EXPECT_EQ(fake_.live_mappings(), 0);
  ASSERT_EQ(a_->cuGraphicsMapResources(2, r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsUnmapResources(3, r, nullptr), abi::CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(fake_.live_mappings(), 2) << "nothing unmapped";
  ASSERT_EQ(a_->cuGraphicsUnmapResources(2, r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsUnregisterResource(r[0]), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsUnregisterResource(r[1]), abi::CUDA_SUCCESS);
}

TEST_F(GraphicsInterop, ImmutableStorageGLCannotMapStillWorks) {
  const GLuint b = buffer(128, /*immutable_unmappable=*/true);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  abi::CUdeviceptr p = 0;
  std::size_t size = 0;
  ASSERT_EQ(a_->cuGraphicsResourceGetMappedPointer(&p, &size, r), abi::CUDA_SUCCESS);
  EXPECT_EQ(size, 128u);
  unsigned char x = 0;
  ASSERT_EQ(a_->cuMemcpyDtoH(&x, p + 77, 1), abi::CUDA_SUCCESS);
  EXPECT_EQ(x, 77);
  ASSERT_EQ(a_->cuMemsetD8(p, 0x5A, 10), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsUnmapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  auto after = read(b, 128);
  EXPECT_EQ(after[9], 0x5A);
  EXPECT_EQ(after[10], 10);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
}

TEST_F(GraphicsInterop, PersistentlyMappedBufferKeepsItsMappingAndGetsTheBytesAtUnmap) {
  GLuint b = 0;
  glCreateBuffers(1, &b);
  buffers_.push_back(b);
  const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
  glNamedBufferStorage(b, 64, nullptr, flags);
  auto* host = static_cast<unsigned char*>(glMapNamedBufferRange(b, 0, 64, flags));
  ASSERT_NE(host, nullptr);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  abi::CUdeviceptr p = 0;
  std::size_t size = 0;
  ASSERT_EQ(a_->cuGraphicsResourceGetMappedPointer(&p, &size, r), abi::CUDA_SUCCESS);
  EXPECT_EQ(size, 64u);
  EXPECT_NE(reinterpret_cast<void*>(p), static_cast<void*>(host)) << "device memory, not the host mapping";
  ASSERT_EQ(a_->cuMemsetD8(p + 3, 0x3C, 1), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsUnmapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(host[3], 0x3C) << "written back through the application's persistent mapping";
  GLint mapped = 0;
  glGetNamedBufferParameteriv(b, GL_BUFFER_MAPPED, &mapped);
  EXPECT_EQ(mapped, GL_TRUE) << "the application's persistent mapping is left alone";
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
  glUnmapNamedBuffer(b);
}

TEST_F(GraphicsInterop, BufferMappedByGlForAPartIsRefused) {
  const GLuint b = buffer(64);
  ASSERT_NE(glMapNamedBufferRange(b, 0, 32, GL_MAP_READ_BIT), nullptr);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_ERROR_MAP_FAILED);
  glUnmapNamedBuffer(b);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
}

TEST_F(GraphicsInterop, GraphicsCallsNeedTheGlContextOnTheCallingThread) {
  const GLuint b = buffer(32);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  const unsigned long long me = fake_.thread_id();
  abi::CUresult reg = abi::CUDA_SUCCESS, map = abi::CUDA_SUCCESS, unreg = abi::CUDA_SUCCESS;
  std::thread t([&] {
    // A CUDA context but no GL context on this thread.
    cuda::ScopedContext cur(ctx_);
    abi::CUgraphicsResource r2 = nullptr;
    reg = a_->cuGraphicsGLRegisterBuffer(&r2, b, 0);
    abi::CUgraphicsResource rr = r;
    map = a_->cuGraphicsMapResources(1, &rr, nullptr);
    unreg = a_->cuGraphicsUnregisterResource(r);
  });
  t.join();
  EXPECT_EQ(reg, abi::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
  EXPECT_EQ(map, abi::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
  EXPECT_EQ(unreg, abi::CUDA_ERROR_INVALID_GRAPHICS_CONTEXT);
  EXPECT_EQ(fake_.calls_off_thread("cuGraphicsMapResources", me), 1);
  EXPECT_EQ(fake_.live_registrations(), 1);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
  EXPECT_EQ(fake_.calls_off_thread("cuGraphicsUnregisterResource", me), 1);
  EXPECT_EQ(fake_.last_thread("cuGraphicsUnregisterResource"), me);
}

TEST_F(GraphicsInterop, AResetUnmapsAndDestroysRegistrations) {
  const GLuint b = buffer(64);
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, b, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_SUCCESS);
  abi::CUdeviceptr p = 0;
  ASSERT_EQ(a_->cuGraphicsResourceGetMappedPointer(&p, nullptr, r), abi::CUDA_SUCCESS);
  cur_.reset();
  ctx_.reset();  // the last retain, with the GL context current here
  EXPECT_EQ(fake_.live_registrations(), 0);
  EXPECT_EQ(fake_.live_mappings(), 0);
  EXPECT_EQ(fake_.objects_lost_to_resets(), 1);
  GLint mapped = 1;
  glGetNamedBufferParameteriv(b, GL_BUFFER_MAPPED, &mapped);
  EXPECT_EQ(mapped, GL_FALSE) << "GL's mapping was undone";
  ctx_ = cuda::PrimaryContext(*drv_, 0);
  cur_.emplace(ctx_);
  unsigned char byte = 0;
  EXPECT_EQ(a_->cuMemcpyDtoH(&byte, p, 1), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_ERROR_CONTEXT_IS_DESTROYED);
  fake_.reset();
}

TEST_F(GraphicsInterop, InjectedMapFailureMapsNothing) {
  abi::CUgraphicsResource r = nullptr;
  ASSERT_EQ(a_->cuGraphicsGLRegisterBuffer(&r, buffer(32), 0), abi::CUDA_SUCCESS);
  fake_.fail("cuGraphicsMapResources", abi::CUDA_ERROR_UNKNOWN, 0);
  EXPECT_EQ(a_->cuGraphicsMapResources(1, &r, nullptr), abi::CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(fake_.live_mappings(), 0);
  try {
    HANDOFF_CU_CHECK(a_->cuGraphicsMapResources(1, &r, nullptr));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_UNKNOWN");
  }
  fake_.fail("cuGraphicsMapResources", 0, 0);
  ASSERT_EQ(a_->cuGraphicsUnregisterResource(r), abi::CUDA_SUCCESS);
}

}  // namespace
}  // namespace handoff::test
