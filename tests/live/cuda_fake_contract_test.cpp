// The fake CUDA driver's interprocess block (tests/fake_cuda/README.md,
// "Interprocess sharing"): virtual memory exported as POSIX fds, the order of
// calls the driver API docs give, interprocess events, and the counters a
// leak test reads.
#include <handoff/cuda.hpp>

#include <handoff/cuda_abi.hpp>
#include "fake_cuda_control.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace handoff::test {
namespace {

class FakeVmm : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake.ok()) << fake.error();
    fake.reset();
    ASSERT_TRUE(drv().usable()) << drv().describe();
    ctx = std::make_unique<cuda::PrimaryContext>(drv(), 0);
    current = std::make_unique<cuda::ScopedContext>(*ctx);
  }
  void TearDown() override {
    current.reset();
    ctx.reset();
    fake.reset();
    EXPECT_EQ(fake.live_vmm_allocations(), 0);
    EXPECT_EQ(fake.live_vmm_mappings(), 0);
    EXPECT_EQ(fake.live_vmm_reservations(), 0);
    EXPECT_EQ(fake.live_events(), 0);
  }
  static const cuda::Driver& drv() { return cuda::driver(); }
  static const cuda::abi::DriverApi& api() { return drv().api(); }
  static cuda::abi::CUmemAllocationProp prop(cuda::abi::CUmemAllocationHandleType t = cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
    cuda::abi::CUmemAllocationProp p{};
    p.type = cuda::abi::CU_MEM_ALLOCATION_TYPE_PINNED;
    p.requestedHandleTypes = t;
    p.location.type = cuda::abi::CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
  }
  static std::size_t granularity() {
    std::size_t g = 0;
    const auto p = prop();
    EXPECT_EQ(api().cuMemGetAllocationGranularity(&g, &p, cuda::abi::CU_MEM_ALLOC_GRANULARITY_MINIMUM), cuda::abi::CUDA_SUCCESS);
    return g;
  }
  // reserve + map + set access of `h` (size g), as an importer does
  static cuda::abi::CUdeviceptr map(cuda::abi::CUmemGenericAllocationHandle h, std::size_t g) {
    cuda::abi::CUdeviceptr p = 0;
    EXPECT_EQ(api().cuMemAddressReserve(&p, g, 0, 0, 0), cuda::abi::CUDA_SUCCESS);
    EXPECT_EQ(api().cuMemMap(p, g, 0, h, 0), cuda::abi::CUDA_SUCCESS);
    cuda::abi::CUmemAccessDesc a{};
    a.location = prop().location;
    a.flags = cuda::abi::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    EXPECT_EQ(api().cuMemSetAccess(p, g, &a, 1), cuda::abi::CUDA_SUCCESS);
    return p;
  }
  static void unmap(cuda::abi::CUdeviceptr p, std::size_t g) {
    EXPECT_EQ(api().cuMemUnmap(p, g), cuda::abi::CUDA_SUCCESS);
    EXPECT_EQ(api().cuMemAddressFree(p, g), cuda::abi::CUDA_SUCCESS);
  }

  FakeCuda fake;
  std::unique_ptr<cuda::PrimaryContext> ctx;
  std::unique_ptr<cuda::ScopedContext> current;
};

TEST_F(FakeVmm, EntryPointsResolveAndAttributesFollowTheSwitches) {
  EXPECT_NE(api().cuMemCreate, nullptr);
  EXPECT_NE(api().cuIpcOpenEventHandle, nullptr);
  EXPECT_NE(api().cuIpcOpenMemHandle, nullptr);
  int v = -1;
  EXPECT_EQ(api().cuDeviceGetAttribute(&v, cuda::abi::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0),
            cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(v, 1);
  fake.set_vmm_supported(0);
  fake.set_ipc_events_supported(0);
  EXPECT_EQ(api().cuDeviceGetAttribute(&v, cuda::abi::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0),
            cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(v, 0);
  EXPECT_EQ(api().cuDeviceGetAttribute(&v, cuda::abi::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, 0), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(v, 0);
  std::size_t g = 0;
  const auto p = prop();
  EXPECT_EQ(api().cuMemGetAllocationGranularity(&g, &p, cuda::abi::CU_MEM_ALLOC_GRANULARITY_MINIMUM), cuda::abi::CUDA_ERROR_NOT_SUPPORTED);
}

TEST_F(FakeVmm, CreateWantsGranularSizesAndValidProperties) {
  const std::size_t g = granularity();
  EXPECT_EQ(g, std::size_t{2} << 20);
  cuda::abi::CUmemGenericAllocationHandle h = 0;
  const auto p = prop();
  EXPECT_EQ(api().cuMemCreate(&h, g + 4096, &p, 0), cuda::abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemCreate(&h, g, &p, 1), cuda::abi::CUDA_ERROR_INVALID_VALUE);
  auto host = prop();
  host.location.type = cuda::abi::CU_MEM_LOCATION_TYPE_HOST;
  EXPECT_EQ(api().cuMemCreate(&h, g, &host, 0), cuda::abi::CUDA_ERROR_INVALID_VALUE);
  auto other = prop();
  other.location.id = 7;
  EXPECT_EQ(api().cuMemCreate(&h, g, &other, 0), cuda::abi::CUDA_ERROR_INVALID_DEVICE);
  ASSERT_EQ(api().cuMemCreate(&h, g, &p, 0), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(fake.live_vmm_allocations(), 1);
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_ERROR_INVALID_VALUE);
}

TEST_F(FakeVmm, OnlyTheHandleTypeAskedForAtCreateExports) {
  const std::size_t g = granularity();
  const auto none = prop(cuda::abi::CU_MEM_HANDLE_TYPE_NONE);
  cuda::abi::CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(api().cuMemCreate(&h, g, &none, 0), cuda::abi::CUDA_SUCCESS);
  int fd = -1;
  EXPECT_EQ(api().cuMemExportToShareableHandle(&fd, h, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            cuda::abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_SUCCESS);
  const auto p = prop();
  ASSERT_EQ(api().cuMemCreate(&h, g, &p, 0), cuda::abi::CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemExportToShareableHandle(&fd, h, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), cuda::abi::CUDA_SUCCESS);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);  // a real descriptor, the caller's
  EXPECT_EQ(static_cast<std::size_t>(st.st_size), g);
  ::close(fd);
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_SUCCESS);
}

// The order the docs give: reserve, map, then set access; unmap whole ranges,
// and only then free the range.
TEST_F(FakeVmm, TheDocumentedOrderIsEnforced) {
  const std::size_t g = granularity();
  const auto p = prop();
  cuda::abi::CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(api().cuMemCreate(&h, 2 * g, &p, 0), cuda::abi::CUDA_SUCCESS);
  cuda::abi::CUdeviceptr va = 0;
  ASSERT_EQ(api().cuMemAddressReserve(&va, 2 * g, 0, 0, 0), cuda::abi::CUDA_SUCCESS);
  cuda::abi::CUmemAccessDesc a{};
  a.location = p.location;
  a.flags = cuda::abi::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  EXPECT_EQ(api().cuMemSetAccess(va, 2 * g, &a, 1), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "access before map";
  EXPECT_EQ(api().cuMemMap(va, 2 * g, g, h, 0), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "offset must be 0";
  EXPECT_EQ(api().cuMemMap(va + 4096, g, 0, h, 0), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "unaligned address";
  EXPECT_EQ(api().cuMemMap(va, 4 * g, 0, h, 0), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "beyond the allocation";
  ASSERT_EQ(api().cuMemMap(va, 2 * g, 0, h, 0), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemMap(va, g, 0, h, 0), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "mapped twice";
  ASSERT_EQ(api().cuMemSetAccess(va, 2 * g, &a, 1), cuda::abi::CUDA_SUCCESS);
  std::vector<unsigned char> bytes(64, 0xab), back(64);
  EXPECT_EQ(api().cuMemcpyHtoD(va + g, bytes.data(), bytes.size()), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemFree(va), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "cuMemFree of a mapping";
  EXPECT_EQ(api().cuMemUnmap(va, g), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "part of a mapping";
  EXPECT_EQ(api().cuMemAddressFree(va, 2 * g), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "free while mapped";
  // Releasing the handle while mapped is allowed: the memory stays until unmapped.
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(fake.live_vmm_allocations(), 1);
  EXPECT_EQ(api().cuMemcpyDtoH(back.data(), va + g, back.size()), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(back, bytes);
  EXPECT_EQ(api().cuMemUnmap(va, 2 * g), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(fake.live_vmm_allocations(), 0);
  EXPECT_EQ(api().cuMemcpyDtoH(back.data(), va + g, back.size()), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "unmapped";
  EXPECT_EQ(api().cuMemAddressFree(va, g), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "size must match the reservation";
  EXPECT_EQ(api().cuMemAddressFree(va, 2 * g), cuda::abi::CUDA_SUCCESS);
}

TEST_F(FakeVmm, AnImportedDescriptorSharesTheBytes) {
  const std::size_t g = granularity();
  const auto p = prop();
  cuda::abi::CUmemGenericAllocationHandle h = 0, h2 = 0;
  ASSERT_EQ(api().cuMemCreate(&h, g, &p, 0), cuda::abi::CUDA_SUCCESS);
  int fd = -1;
  ASSERT_EQ(api().cuMemExportToShareableHandle(&fd, h, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), cuda::abi::CUDA_SUCCESS);
  void* os = reinterpret_cast<void*>(static_cast<std::intptr_t>(fd));
  EXPECT_EQ(api().cuMemImportFromShareableHandle(&h2, os, cuda::abi::CU_MEM_HANDLE_TYPE_WIN32), cuda::abi::CUDA_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(api().cuMemImportFromShareableHandle(&h2, os, cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), cuda::abi::CUDA_SUCCESS);
  ::close(fd);  // the importer's descriptor is its own to close; the import stands
  const cuda::abi::CUdeviceptr a = map(h, g), b = map(h2, g);
  std::vector<unsigned char> bytes(256), back(256);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7);
  ASSERT_EQ(api().cuMemcpyHtoD(a + 1000, bytes.data(), bytes.size()), cuda::abi::CUDA_SUCCESS);
  ASSERT_EQ(api().cuMemcpyDtoH(back.data(), b + 1000, back.size()), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(back, bytes);
  unmap(a, g);
  unmap(b, g);
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuMemRelease(h2), cuda::abi::CUDA_SUCCESS);
}

TEST_F(FakeVmm, MappedVirtualMemoryIsDeviceMemoryTheHostCannotTouch) {
  const std::size_t g = granularity();
  const auto p = prop();
  cuda::abi::CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(api().cuMemCreate(&h, g, &p, 0), cuda::abi::CUDA_SUCCESS);
  const cuda::abi::CUdeviceptr a = map(h, g);  // read-write access for the device
  EXPECT_FALSE(handoff::test::host_can_read(reinterpret_cast<const void*>(a)));
  EXPECT_FALSE(handoff::test::host_can_read(reinterpret_cast<const void*>(a + g - 1)));
  const unsigned char in[3] = {5, 6, 7};
  ASSERT_EQ(api().cuMemcpyHtoD(a + 4096, in, 3), cuda::abi::CUDA_SUCCESS);
  unsigned char out[3] = {};
  ASSERT_EQ(fake.read_device(a + 4096, out, 3), 0);
  EXPECT_EQ(std::memcmp(in, out, 3), 0);
  unmap(a, g);
  EXPECT_EQ(api().cuMemRelease(h), cuda::abi::CUDA_SUCCESS);
}

TEST_F(FakeVmm, OnlyItsOwnDescriptorsImport) {
  const int other = ::memfd_create("not-cuda", MFD_CLOEXEC);
  ASSERT_EQ(::ftruncate(other, 2 << 20), 0);
  cuda::abi::CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(api().cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(other)),
                                                 cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            cuda::abi::CUDA_ERROR_INVALID_VALUE);
  ::close(other);
  EXPECT_EQ(api().cuMemImportFromShareableHandle(&h, reinterpret_cast<void*>(std::intptr_t{-1}),
                                                 cuda::abi::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            cuda::abi::CUDA_ERROR_INVALID_VALUE);
}

TEST_F(FakeVmm, InterprocessEvents) {
  cuda::abi::CUevent e = nullptr;
  EXPECT_EQ(api().cuEventCreate(&e, cuda::abi::CU_EVENT_INTERPROCESS), cuda::abi::CUDA_ERROR_INVALID_VALUE)
      << "interprocess needs DISABLE_TIMING";
  ASSERT_EQ(api().cuEventCreate(&e, cuda::abi::CU_EVENT_DEFAULT), cuda::abi::CUDA_SUCCESS);
  cuda::abi::CUipcEventHandle ipc{};
  EXPECT_EQ(api().cuIpcGetEventHandle(&ipc, e), cuda::abi::CUDA_ERROR_INVALID_VALUE) << "not an interprocess event";
  EXPECT_EQ(api().cuEventDestroy(e), cuda::abi::CUDA_SUCCESS);
  ASSERT_EQ(api().cuEventCreate(&e, cuda::abi::CU_EVENT_INTERPROCESS | cuda::abi::CU_EVENT_DISABLE_TIMING), cuda::abi::CUDA_SUCCESS);
  ASSERT_EQ(api().cuIpcGetEventHandle(&ipc, e), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventRecord(e, nullptr), cuda::abi::CUDA_SUCCESS);
  cuda::abi::CUevent opened = nullptr;
  ASSERT_EQ(api().cuIpcOpenEventHandle(&opened, ipc), cuda::abi::CUDA_SUCCESS);
  cuda::abi::CUstream s = nullptr;
  ASSERT_EQ(api().cuStreamCreate(&s, 0), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamWaitEvent(s, opened, 0), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuStreamWaitEvent(s, opened, 4), cuda::abi::CUDA_ERROR_INVALID_VALUE);
  // The record may not have run yet (the fake's strict mode, as a GPU): a query
  // is NOT_READY or SUCCESS; after a synchronise it is SUCCESS.
  const cuda::abi::CUresult early = api().cuEventQuery(opened);
  EXPECT_TRUE(early == cuda::abi::CUDA_SUCCESS || early == cuda::abi::CUDA_ERROR_NOT_READY) << early;
  EXPECT_EQ(api().cuEventSynchronize(opened), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventQuery(opened), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(fake.live_events(), 2);
  cuda::abi::CUipcEventHandle junk{};
  cuda::abi::CUevent bad = nullptr;
  EXPECT_EQ(api().cuIpcOpenEventHandle(&bad, junk), cuda::abi::CUDA_ERROR_INVALID_VALUE);
  fake.set_ipc_events_supported(0);
  EXPECT_EQ(api().cuIpcGetEventHandle(&ipc, e), cuda::abi::CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(api().cuStreamDestroy(s), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(opened), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(e), cuda::abi::CUDA_SUCCESS);
  EXPECT_EQ(api().cuEventDestroy(e), cuda::abi::CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(FakeVmm, LegacyIpcMemoryIsNotOffered) {
  cuda::abi::CUdeviceptr p = 0;
  ASSERT_EQ(api().cuMemAlloc(&p, 4096), cuda::abi::CUDA_SUCCESS);
  cuda::abi::CUipcMemHandle h{};
  EXPECT_EQ(api().cuIpcGetMemHandle(&h, p), cuda::abi::CUDA_ERROR_NOT_SUPPORTED);
  cuda::abi::CUdeviceptr q = 0;
  EXPECT_EQ(api().cuIpcOpenMemHandle(&q, h, cuda::abi::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), cuda::abi::CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(api().cuMemFree(p), cuda::abi::CUDA_SUCCESS);
}

}  // namespace
}  // namespace handoff::test
