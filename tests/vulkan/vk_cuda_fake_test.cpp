// Vulkan memory into CUDA through the fake driver (tests/fake_cuda): import,
// map, release, each failing in turn leaving nothing behind; the imported
// frame read by "CUDA" (the fake maps the OPAQUE_FD, so it sees the bytes).
#include <handoff/dlpack.hpp>
#include <handoff/log.hpp>
#include <handoff/vk_cuda.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <cstring>

#include <handoff/cuda_abi.hpp>
#include <handoff/cuda_check.hpp>
#include "fake_cuda_control.hpp"
#include "log_capture.hpp"
#include "vk_fixture.hpp"

namespace handoff::test {
namespace abi = cuda::abi;
namespace {

// The fake reads its device UUID at cuInit: make it the Vulkan device's before
// anything loads the driver, so the same-GPU check passes as on real hardware.
class FakeUuidEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string why;
    if (!have_vulkan_device(&why)) return;
    VkContextOptions o;
    o.validation = false;
    VkContext vk(o);  // drivers pinned by have_vulkan_device()
    ::setenv("HANDOFF_FAKE_CUDA_UUID", to_string(vk.info().device_uuid).c_str(), 1);
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new FakeUuidEnvironment);

class VkCudaFakeTest : public VkFixture {
 protected:
  void SetUp() override {
    VkFixture::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(fake.ok()) << fake.error();
    fake.reset();
    ASSERT_TRUE(cuda::driver().usable()) << cuda::driver().describe();
    ctx = cuda::PrimaryContext(cuda::driver(), 0);
    {
      // Warm-up: drivers open some descriptors lazily on first use.
      VkFrameProducer p(*vk, PixelFormat::NV12, 8, 8, VkFrameProducer::Target::Buffer);
      p.produce(0);
      Frame f = import_vk_frame(ctx, p);
    }
    rebaseline();
  }
  // Counts now, as the reference for expect_nothing_left(). Call after making
  // the Vulkan objects of a test: lavapipe holds a memfd per exportable
  // allocation for the allocation's life.
  void rebaseline() {
    memories = fake.live_external_memories();
    buffers = fake.live_external_buffers();
    leaked = fake.leaked_external_buffers();
    fds = open_fd_count();
  }
  void TearDown() override {
    if (fake.ok()) fake.reset();
    ctx.reset();
    VkFixture::TearDown();
  }
  void expect_nothing_left(const char* when) {
    EXPECT_EQ(fake.live_external_memories(), memories) << when;
    EXPECT_EQ(fake.live_external_buffers(), buffers) << when;
    EXPECT_EQ(fake.leaked_external_buffers(), leaked) << "mapped buffers never cuMemFree'd, " << when;
    EXPECT_EQ(open_fd_count(), fds) << "descriptors left open, " << when;
  }
  FakeCuda fake;
  cuda::PrimaryContext ctx;
  int memories = 0, buffers = 0, leaked = 0, fds = 0;
};

// What a CUDA consumer reads at `ptr` with `context` current (cuMemcpyDtoH).
std::vector<std::uint8_t> read_with_cuda(void* context, const void* ptr, std::size_t n) {
  cuda::ScopedContext cur(cuda::driver(), static_cast<cuda::abi::CUctx_st*>(context));
  std::vector<std::uint8_t> out(n);
  HANDOFF_CU_CHECK(cuda::driver().api().cuMemcpyDtoH(out.data(), reinterpret_cast<abi::CUdeviceptr>(ptr), n));
  return out;
}

TEST_F(VkCudaFakeTest, ImportMapReadReleaseAFrame) {
  for (PixelFormat fmt : {PixelFormat::NV12, PixelFormat::P010}) {
    VkFrameProducer p(*vk, fmt, 33, 17, VkFrameProducer::Target::Buffer,
                      {ColorMatrix::BT2020, ColorRange::Full});
    p.produce(9);
    auto bytes = p.buffer()->buffer().download();
    rebaseline();
    {
      Frame f = import_vk_frame(ctx, p);
      EXPECT_EQ(f.memory, MemoryKind::Cuda);
      EXPECT_EQ(f.device, 0);
      EXPECT_EQ(f.cuda_context, ctx.handle());
      EXPECT_EQ(f.index, 9);
      EXPECT_EQ(f.colorimetry.matrix, ColorMatrix::BT2020);
      EXPECT_EQ(f.format, fmt);
      EXPECT_EQ(fake.live_external_memories(), memories + 1);
      EXPECT_EQ(fake.live_external_buffers(), buffers + 1) << "one mapping covers both planes";
      const auto& l = p.buffer()->layout();
      EXPECT_EQ(static_cast<std::byte*>(f.chroma().data) - static_cast<std::byte*>(f.luma().data),
                std::ptrdiff_t(l.planes[1].offset));
      // The fake's device memory is the mmapped descriptor: the bytes Vulkan wrote
      // (read through the driver: the device pointer itself is not host memory).
      const std::vector<std::uint8_t> seen = read_with_cuda(f.cuda_context, f.luma().data, l.buffer_bytes());
      EXPECT_EQ(0, std::memcmp(seen.data(), bytes.data(), l.buffer_bytes()));

      // A frame like any other: DLPack sees a CUDA tensor on device 0.
      DLManagedTensor* t = export_dlpack(f, FramePart::Luma);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
      EXPECT_EQ(t->dl_tensor.device.device_id, 0);
      EXPECT_EQ(t->dl_tensor.data, f.luma().data);
      EXPECT_EQ(t->dl_tensor.shape[0], 17);
      EXPECT_EQ(t->dl_tensor.shape[1], 33);
      f = Frame{};  // the tensor keeps the import alive
      EXPECT_EQ(fake.live_external_memories(), memories + 1);
      t->deleter(t);
    }
    expect_nothing_left("after the frame and its tensor are gone");
    EXPECT_GE(fake.call_count("cuMemFree"), 1) << "mapped buffers are freed with cuMemFree";
  }
}

TEST_F(VkCudaFakeTest, TheFrameAndItsTensorKeepTheContextWhenTheCallersLastOneGoes) {
  VkFrameProducer p(*vk, PixelFormat::NV12, 33, 17, VkFrameProducer::Target::Buffer);
  p.produce(4);
  const std::vector<std::byte> bytes = p.buffer()->buffer().download();
  const std::size_t size = p.buffer()->layout().buffer_bytes();
  rebaseline();
  ASSERT_EQ(fake.primary_context_refs(0), 1) << "the fixture's context is the caller's only one";
  const int resets = fake.context_resets(0);
  Frame f = import_vk_frame(ctx, p);
  ctx.reset();  // the caller's last PrimaryContext goes before the frame
  EXPECT_EQ(fake.context_resets(0), resets) << "the frame keeps its context retained";
  std::vector<std::uint8_t> seen;
  ASSERT_NO_THROW(seen = read_with_cuda(f.cuda_context, f.luma().data, size));
  EXPECT_EQ(0, std::memcmp(seen.data(), bytes.data(), size)) << "the frame's pointers still hold the Vulkan bytes";

  // The consumer of a DLPack export, in the device's primary context (as
  // PyTorch or CuPy would be), after the frame is gone too.
  DLManagedTensor* t = export_dlpack(f, FramePart::Chroma);
  const std::ptrdiff_t chroma_offset =
      static_cast<std::byte*>(f.chroma().data) - static_cast<std::byte*>(f.luma().data);
  f = Frame{};
  {
    cuda::PrimaryContext consumer(cuda::driver(), 0);
    const std::size_t chroma_bytes = size - std::size_t(chroma_offset);
    ASSERT_NO_THROW(seen = read_with_cuda(consumer.handle(), t->dl_tensor.data, chroma_bytes));
    EXPECT_EQ(0, std::memcmp(seen.data(), bytes.data() + chroma_offset, chroma_bytes));
    t->deleter(t);
  }
  EXPECT_EQ(fake.objects_lost_to_resets(), 0) << "nothing was destroyed under the frame or its tensor";
  EXPECT_EQ(fake.primary_context_refs(0), 0) << "and the last owner released the context";
  expect_nothing_left("after the tensor is gone");
}

TEST_F(VkCudaFakeTest, EachAcquireStepFailingLeavesNothing) {
  VkFrameBuffer fb(*vk, PixelFormat::NV12, 64, 32);
  rebaseline();
  for (const char* entry : {"cuImportExternalMemory", "cuExternalMemoryGetMappedBuffer"}) {
    SCOPED_TRACE(entry);
    fake.reset();
    fake.fail(entry, abi::CUDA_ERROR_OUT_OF_MEMORY, 0);
    try {
      Frame f = import_vk_frame(ctx, fb);
      ADD_FAILURE() << "import succeeded while " << entry << " fails";
    } catch (const Error& e) {
      EXPECT_EQ(e.api(), Api::Cuda);
      EXPECT_EQ(e.call(), entry) << e.what();
      EXPECT_EQ(e.code_name(), "CUDA_ERROR_OUT_OF_MEMORY") << e.what();
    }
    expect_nothing_left(entry);
  }
  fake.reset();
  {
    // And the descriptor: still the caller's when the import itself failed.
    ExportedMemory m = fb.buffer().export_memory();
    fake.fail("cuImportExternalMemory", abi::CUDA_ERROR_INVALID_VALUE, 0);
    EXPECT_THROW(CudaVkMemory(ctx, m), Error);
    EXPECT_TRUE(m.fd) << "a failed import does not take the descriptor";
    fake.reset();
    CudaVkMemory ok(ctx, m);
    EXPECT_FALSE(m.fd) << "a successful one does";
    EXPECT_THROW(CudaVkMemory(ctx, m), UsageError) << "an empty export";
  }
  expect_nothing_left("after the ownership checks");
}

TEST_F(VkCudaFakeTest, ReleaseFailuresAreLoggedNotThrown) {
  VkFrameBuffer fb(*vk, PixelFormat::P010, 16, 16);
  rebaseline();
  std::vector<std::string> logged;
  {
    test::LogCapture log;
    {
      Frame f = import_vk_frame(ctx, fb);
      fake.fail("cuMemFree", abi::CUDA_ERROR_INVALID_VALUE, 0);
    }  // destructor: cuMemFree fails (logged), the external memory is still destroyed
    logged = log.texts();
  }
  fake.reset();
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("cuMemFree"), std::string::npos) << logged[0];
  EXPECT_EQ(fake.live_external_memories(), memories) << "destroyed even though cuMemFree failed";
  EXPECT_EQ(open_fd_count(), fds);
  leaked = fake.leaked_external_buffers();  // the fake counts the unfreed mapping: expected here
}

// A range that does not start on the driver's buffer alignment (the fake: 256
// bytes) is mapped from the aligned offset below it and the pointer moved on,
// as the docs advise (map a combined range, derive the part by offset).
TEST_F(VkCudaFakeTest, ARangeAtAnUnalignedOffsetIsMappedFromTheAlignedOffsetBelow) {
  VkExportableBuffer buf(*vk, 4096);
  std::vector<std::byte> bytes(4096);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 7 + 1);
  buf.upload(bytes);
  rebaseline();
  {
    ExportedMemory m = buf.export_memory();
    CudaVkMemory c(ctx, m, 100, 300);
    EXPECT_EQ(c.size(), 300u);
    const std::vector<std::uint8_t> seen = read_with_cuda(c.context(), reinterpret_cast<void*>(c.device_pointer()), 300);
    EXPECT_EQ(0, std::memcmp(seen.data(), bytes.data() + 100, 300)) << "the pointer is at byte 100 of the allocation";
    EXPECT_EQ(fake.live_external_buffers(), buffers + 1);
  }
  expect_nothing_left("after the unaligned range");
}

TEST_F(VkCudaFakeTest, DmaBufRefusedWithTheRouteNamed) {
  VkExportableBuffer buf(*vk, 4096);
  rebaseline();
  ExportedMemory m = buf.export_memory();
  m.type = VkHandleType::DmaBuf;  // as a driver offering DMA_BUF would hand it over
  fake.fail("cuImportExternalMemory", abi::CUDA_ERROR_NOT_SUPPORTED, 0);
  try {
    CudaVkMemory c(ctx, m);
    ADD_FAILURE() << "imported";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("DMA"), std::string::npos) << what;
    EXPECT_NE(what.find("cuGraphicsEGLRegisterImage"), std::string::npos) << what;
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_NOT_SUPPORTED");
  }
  EXPECT_TRUE(m.fd);
  fake.reset();
  // lavapipe exports no DMA-BUF: its memfd stands for one (the fake takes
  // DMABUF_FD only from a dma-buf or a declared stand-in).
  ASSERT_EQ(fake.declare_dmabuf(m.fd.get()), 0);
  {
    CudaVkMemory c(ctx, m);  // where the driver accepts DMABUF_FD, it imports
    EXPECT_NE(c.device_pointer(), 0u);
  }
  m.fd.reset();
  expect_nothing_left("after the DMA-BUF import");
}

TEST_F(VkCudaFakeTest, MisuseIsAUsageError) {
  VkFrameProducer images(*vk, PixelFormat::NV12, 8, 8, VkFrameProducer::Target::Images);
  EXPECT_THROW(import_vk_frame(ctx, images), UsageError);
  cuda::PrimaryContext none;
  VkFrameBuffer fb(*vk, PixelFormat::NV12, 8, 8);
  rebaseline();
  EXPECT_THROW(import_vk_frame(none, fb), UsageError);
  ExportedMemory m = fb.buffer().export_memory();
  EXPECT_THROW(CudaVkMemory(ctx, m, 0, m.allocation_size + 1), UsageError);
  EXPECT_TRUE(m.fd);
  m.fd.reset();
  expect_nothing_left("after misuse");
}

TEST_F(VkCudaFakeTest, SemaphoresImportWaitSignalReleaseOrAreRefused) {
  const int sems = fake.live_external_semaphores();
  auto descriptor = [] {
    // lavapipe exports no semaphores: any descriptor stands in for the fake.
    return UniqueFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  };
  {
    UniqueFd fd = descriptor();
    try {
      CudaVkSemaphore s(ctx, fd);
      ADD_FAILURE() << "imported where the driver has no external semaphores";
    } catch (const Error& e) {
      EXPECT_EQ(e.code_name(), "CUDA_ERROR_NOT_SUPPORTED") << e.what();
      EXPECT_NE(std::string(e.what()).find("CPU fences"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fd) << "a refused import leaves the descriptor with the caller";
  }
  fake.set_semaphores_supported(1);
  {
    UniqueFd fd = descriptor();
    CudaVkSemaphore s(ctx, fd);
    EXPECT_FALSE(fd) << "CUDA owns it after a successful import";
    EXPECT_EQ(fake.live_external_semaphores(), sems + 1);
    s.wait();
    s.signal();
    EXPECT_EQ(fake.call_count("cuWaitExternalSemaphoresAsync"), 1);
    EXPECT_EQ(fake.call_count("cuSignalExternalSemaphoresAsync"), 1);
    fake.fail("cuSignalExternalSemaphoresAsync", abi::CUDA_ERROR_INVALID_HANDLE, 0);
    EXPECT_THROW(s.signal(), Error);
    fake.fail("cuSignalExternalSemaphoresAsync", 0, 0);
  }
  {
    // The semaphore keeps its context: usable after the caller's last one goes.
    UniqueFd fd = descriptor();
    auto s = std::make_unique<CudaVkSemaphore>(ctx, fd);
    ctx.reset();
    EXPECT_NO_THROW(s->wait());
    EXPECT_NO_THROW(s->signal());
    s.reset();
    EXPECT_EQ(fake.objects_lost_to_resets(), 0);
    ctx = cuda::PrimaryContext(cuda::driver(), 0);
  }
  EXPECT_EQ(fake.live_external_semaphores(), sems);
  EXPECT_EQ(open_fd_count(), fds);
}

TEST(VkCudaDevice, AMismatchIsRefusedNamingBothUuids) {
  VkDeviceInfo vk;
  vk.name = "vk";
  vk.device_uuid.bytes.fill(1);
  cuda::DeviceInfo cu;
  cu.ordinal = 0;
  cu.name = "cu";
  cu.uuid.bytes.fill(2);
  try {
    check_vk_cuda_device(vk, cu);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(to_string(vk.device_uuid)), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(to_string(cu.uuid)), std::string::npos);
  }
  cu.uuid = vk.device_uuid;
  EXPECT_NO_THROW(check_vk_cuda_device(vk, cu));
}

}  // namespace
}  // namespace handoff::test
