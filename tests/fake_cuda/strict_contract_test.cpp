// The fake's strict mode (README.md "Strict mode"): asynchronous work is
// queued per stream and run later by the fake's worker, in stream order,
// honouring events, stream waits and the legacy null stream; sticky errors
// poison their context and surface at the next synchronisation. Each test
// fails if its rule is taken out of the fake.
#include "fake_test_util.hpp"

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace handoff::test {
namespace {

class StrictFake : public FakeCudaTest {
 protected:
  void SetUp() override {
    FakeCudaTest::SetUp();
    fake_.set_strict(1);
    drv_ = cuda::Driver::load(fake_path());
    ASSERT_TRUE(drv_->usable()) << drv_->describe();
    a_ = &drv_->api();
    ctx_ = cuda::PrimaryContext(*drv_, 0);
  }
  void TearDown() override {
    fake_.pause_work(0);
    ctx_.reset();
    FakeCudaTest::TearDown();
  }
  // One row of `n` bytes, device to device / host to device, on `stream`.
  abi::CUresult copy(abi::CUdeviceptr dst, abi::CUdeviceptr src, std::size_t n, abi::CUstream stream) {
    abi::CUDA_MEMCPY2D m{};
    m.srcMemoryType = abi::CU_MEMORYTYPE_DEVICE;
    m.srcDevice = src;
    return queue_row(m, dst, n, stream);
  }
  abi::CUresult upload(abi::CUdeviceptr dst, const void* src, std::size_t n, abi::CUstream stream) {
    abi::CUDA_MEMCPY2D m{};
    m.srcMemoryType = abi::CU_MEMORYTYPE_HOST;
    m.srcHost = src;
    return queue_row(m, dst, n, stream);
  }
  // A non-blocking stream and `n` bytes of device memory (check with ASSERT_NO_FATAL_FAILURE), and their release.
  void make_stream_and_memory(abi::CUstream& st, abi::CUdeviceptr& d, std::size_t n) {
    ASSERT_EQ(a_->cuStreamCreate(&st, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
    ASSERT_EQ(a_->cuMemAlloc(&d, n), abi::CUDA_SUCCESS);
  }
  void free_stream_and_memory(abi::CUstream st, abi::CUdeviceptr d) {
    EXPECT_EQ(a_->cuMemFree(d), abi::CUDA_SUCCESS);
    EXPECT_EQ(a_->cuStreamDestroy(st), abi::CUDA_SUCCESS);
  }
  // `m`'s source set: one row of `n` bytes into device memory `dst`, queued on `stream`.
  abi::CUresult queue_row(abi::CUDA_MEMCPY2D m, abi::CUdeviceptr dst, std::size_t n, abi::CUstream stream) {
    m.srcPitch = n;
    m.dstMemoryType = abi::CU_MEMORYTYPE_DEVICE;
    m.dstDevice = dst;
    m.dstPitch = n;
    m.WidthInBytes = n;
    m.Height = 1;
    return a_->cuMemcpy2DAsync(&m, stream);
  }
  std::vector<unsigned char> read(abi::CUdeviceptr p, std::size_t n) {
    std::vector<unsigned char> out(n);
    EXPECT_EQ(a_->cuMemcpyDtoH(out.data(), p, n), abi::CUDA_SUCCESS);
    return out;
  }
  std::unique_ptr<cuda::Driver> drv_;
  const abi::DriverApi* a_ = nullptr;
  cuda::PrimaryContext ctx_;
};

constexpr std::size_t kN = 64;

TEST_F(StrictFake, AQueuedCopyIsNotReadyUntilItHasRunAndSynchronizeWaitsForIt) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream st = nullptr;
  abi::CUdeviceptr d = 0;
  ASSERT_NO_FATAL_FAILURE(make_stream_and_memory(st, d, kN));
  ASSERT_EQ(a_->cuMemsetD8(d, 0, kN), abi::CUDA_SUCCESS);
  std::vector<unsigned char> src(kN, 0x5A);
  fake_.pause_work(1);  // (on a loaded machine 200 us may pass before the query)
  ASSERT_EQ(upload(d, src.data(), kN, st), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamQuery(st), abi::CUDA_ERROR_NOT_READY) << "queued work answers NOT_READY until it has run";
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    fake_.pause_work(0);
  });
  EXPECT_EQ(a_->cuStreamSynchronize(st), abi::CUDA_SUCCESS) << "waits for the work";
  release.join();
  EXPECT_EQ(a_->cuStreamQuery(st), abi::CUDA_SUCCESS);
  EXPECT_EQ(read(d, kN), src);
  free_stream_and_memory(st, d);
}

TEST_F(StrictFake, ThePollingLoopSeesNotReadyThenSuccess) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream st = nullptr;
  abi::CUdeviceptr d = 0;
  ASSERT_NO_FATAL_FAILURE(make_stream_and_memory(st, d, kN));
  std::vector<unsigned char> src(kN, 7);
  fake_.pause_work(1);
  ASSERT_EQ(upload(d, src.data(), kN, st), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuStreamQuery(st), abi::CUDA_ERROR_NOT_READY);
  // The loop's own first poll must see NOT_READY (the work is still paused):
  // only then is the work let go, so the count below can be 0 only when the
  // fake answers a poll of paused work with SUCCESS.
  std::thread release;
  int not_ready = 0;
  abi::CUresult r;
  while ((r = a_->cuStreamQuery(st)) == abi::CUDA_ERROR_NOT_READY) {
    if (++not_ready == 1) release = std::thread([&] { fake_.pause_work(0); });
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (release.joinable()) release.join();
  else fake_.pause_work(0);
  EXPECT_EQ(r, abi::CUDA_SUCCESS);
  EXPECT_GE(not_ready, 1);
  EXPECT_EQ(read(d, kN), src);
  free_stream_and_memory(st, d);
}

TEST_F(StrictFake, HostMemoryIsReadWhenTheCopyRunsNotWhenItIsQueued) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream st = nullptr;
  abi::CUdeviceptr d = 0;
  ASSERT_NO_FATAL_FAILURE(make_stream_and_memory(st, d, kN));
  std::vector<unsigned char> src(kN, 1);
  fake_.pause_work(1);
  ASSERT_EQ(upload(d, src.data(), kN, st), abi::CUDA_SUCCESS);
  std::memset(src.data(), 2, kN);  // before the stream got there: the copy sees 2
  fake_.pause_work(0);
  EXPECT_EQ(a_->cuStreamSynchronize(st), abi::CUDA_SUCCESS);
  EXPECT_EQ(read(d, kN), std::vector<unsigned char>(kN, 2));
  free_stream_and_memory(st, d);
}

TEST_F(StrictFake, AnEventIsNotReadyUntilTheStreamReachesItsRecord) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream st = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&st, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
  abi::CUevent e = nullptr;
  ASSERT_EQ(a_->cuEventCreate(&e, abi::CU_EVENT_DISABLE_TIMING), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventQuery(e), abi::CUDA_SUCCESS) << "never recorded: complete";
  fake_.pause_work(1);
  ASSERT_EQ(a_->cuEventRecord(e, st), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventQuery(e), abi::CUDA_ERROR_NOT_READY);
  fake_.pause_work(0);
  EXPECT_EQ(a_->cuEventSynchronize(e), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventQuery(e), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventDestroy(e), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(st), abi::CUDA_SUCCESS);
}

// Stream b is made first, so the worker looks at it first: only the wait
// keeps its copy behind a's.
TEST_F(StrictFake, AStreamWaitEventOrdersWorkAcrossStreams) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream b = nullptr, a = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&b, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuStreamCreate(&a, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
  abi::CUevent e = nullptr;
  ASSERT_EQ(a_->cuEventCreate(&e, abi::CU_EVENT_DISABLE_TIMING), abi::CUDA_SUCCESS);
  abi::CUdeviceptr d1 = 0, d2 = 0;
  ASSERT_EQ(a_->cuMemAlloc(&d1, kN), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemAlloc(&d2, kN), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemsetD8(d1, 0, kN), abi::CUDA_SUCCESS);
  std::vector<unsigned char> src(kN, 9);
  fake_.pause_work(1);
  ASSERT_EQ(upload(d1, src.data(), kN, a), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuEventRecord(e, a), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuStreamWaitEvent(b, e, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(copy(d2, d1, kN, b), abi::CUDA_SUCCESS);
  fake_.pause_work(0);
  EXPECT_EQ(a_->cuStreamSynchronize(b), abi::CUDA_SUCCESS);
  EXPECT_EQ(read(d2, kN), src) << "b's copy ran before a's upload: the stream wait was not honoured";
  EXPECT_EQ(a_->cuStreamSynchronize(a), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(d1), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(d2), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventDestroy(e), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(a), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(b), abi::CUDA_SUCCESS);
}

// The legacy null stream waits for the blocking streams' earlier work (and
// they for its); CU_STREAM_NON_BLOCKING streams are not waited for.
TEST_F(StrictFake, TheNullStreamSynchronisesWithBlockingStreamsOnly) {
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr d1 = 0, d2 = 0;
  ASSERT_EQ(a_->cuMemAlloc(&d1, kN), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemAlloc(&d2, kN), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemsetD8(d1, 0, kN), abi::CUDA_SUCCESS);
  ASSERT_EQ(copy(d2, d1, kN, nullptr), abi::CUDA_SUCCESS);  // the null stream's queue comes first
  ASSERT_EQ(a_->cuStreamSynchronize(nullptr), abi::CUDA_SUCCESS);
  abi::CUstream blocking = nullptr, non_blocking = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&blocking, 0), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuStreamCreate(&non_blocking, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
  std::vector<unsigned char> src(kN, 3);
  fake_.pause_work(1);
  ASSERT_EQ(upload(d1, src.data(), kN, blocking), abi::CUDA_SUCCESS);
  ASSERT_EQ(copy(d2, d1, kN, nullptr), abi::CUDA_SUCCESS);
  fake_.pause_work(0);
  EXPECT_EQ(a_->cuStreamSynchronize(nullptr), abi::CUDA_SUCCESS);
  EXPECT_EQ(read(d2, kN), src) << "the null stream's copy ran before the blocking stream's earlier upload";

  fake_.pause_work(1);
  ASSERT_EQ(upload(d1, src.data(), kN, non_blocking), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamQuery(non_blocking), abi::CUDA_ERROR_NOT_READY);
  EXPECT_EQ(a_->cuStreamQuery(nullptr), abi::CUDA_SUCCESS) << "the null stream does not wait for a non-blocking stream";
  ASSERT_EQ(upload(d2, src.data(), kN, blocking), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamQuery(nullptr), abi::CUDA_ERROR_NOT_READY) << "but it does for a blocking one";
  fake_.pause_work(0);
  EXPECT_EQ(a_->cuCtxSynchronize(), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamQuery(non_blocking), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(d1), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuMemFree(d2), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(blocking), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(non_blocking), abi::CUDA_SUCCESS);
}

// cuMemcpyDtoH is synchronous: it runs after the null stream's (and so the
// blocking streams') earlier work.
TEST_F(StrictFake, ASynchronousCopyWaitsForEarlierWorkOnBlockingStreams) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream blocking = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&blocking, 0), abi::CUDA_SUCCESS);
  abi::CUdeviceptr d = 0;
  ASSERT_EQ(a_->cuMemAlloc(&d, kN), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuMemsetD8(d, 0, kN), abi::CUDA_SUCCESS);
  std::vector<unsigned char> src(kN, 4);
  fake_.pause_work(1);
  ASSERT_EQ(upload(d, src.data(), kN, blocking), abi::CUDA_SUCCESS);
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    fake_.pause_work(0);
  });
  EXPECT_EQ(read(d, kN), src);
  release.join();
  EXPECT_EQ(a_->cuMemFree(d), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(blocking), abi::CUDA_SUCCESS);
}

// CUDA_ERROR_ILLEGAL_ADDRESS in queued work: the launch succeeded, the error
// surfaces at the next synchronisation, and from then on every call in the
// context fails with it, until the (primary) context is reset.
TEST_F(StrictFake, AStickyErrorSurfacesAtTheNextSyncAndPoisonsTheContextUntilItsReset) {
  abi::CUdeviceptr d = 0;
  {
    cuda::ScopedContext cur(ctx_);
    ASSERT_EQ(a_->cuMemAlloc(&d, kN), abi::CUDA_SUCCESS);
    std::vector<unsigned char> src(kN, 1);
    fake_.fail_sticky("cuMemcpy2DAsync", abi::CUDA_ERROR_ILLEGAL_ADDRESS, 0);
    EXPECT_EQ(upload(d, src.data(), kN, nullptr), abi::CUDA_SUCCESS) << "the launch itself succeeds";
    EXPECT_EQ(a_->cuCtxSynchronize(), abi::CUDA_ERROR_ILLEGAL_ADDRESS) << "the error surfaces at the sync";
    EXPECT_EQ(fake_.sticky_error(0), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
    abi::CUdeviceptr q = 0;
    EXPECT_EQ(a_->cuMemAlloc(&q, kN), abi::CUDA_ERROR_ILLEGAL_ADDRESS) << "the context is unusable";
    EXPECT_EQ(upload(d, src.data(), kN, nullptr), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(a_->cuStreamQuery(nullptr), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(a_->cuMemFree(d), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(a_->cuCtxSynchronize(), abi::CUDA_ERROR_ILLEGAL_ADDRESS) << "it stays";
  }
  ctx_.reset();  // the last retain: the primary context is reset, its memory with it
  EXPECT_EQ(fake_.sticky_error(0), 0);
  EXPECT_EQ(fake_.objects_lost_to_resets(), 1) << "the allocation the poisoned context could not free";
  ctx_ = cuda::PrimaryContext(*drv_, 0);
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr q = 0;
  EXPECT_EQ(a_->cuMemAlloc(&q, kN), abi::CUDA_SUCCESS) << "a reset context works again";
  EXPECT_EQ(a_->cuMemFree(q), abi::CUDA_SUCCESS);
  fake_.reset();  // the lost allocation was expected
}

TEST_F(StrictFake, AStickyErrorOfASynchronousCallFailsThatCall) {
  cuda::ScopedContext cur(ctx_);
  abi::CUdeviceptr d = 0;
  ASSERT_EQ(a_->cuMemAlloc(&d, kN), abi::CUDA_SUCCESS);
  fake_.fail_sticky("cuMemsetD8", abi::CUDA_ERROR_ILLEGAL_ADDRESS, 1);
  EXPECT_EQ(a_->cuMemsetD8(d, 0, kN), abi::CUDA_SUCCESS) << "after 1 call";
  EXPECT_EQ(a_->cuMemsetD8(d, 0, kN), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(a_->cuStreamSynchronize(nullptr), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
  fake_.reset();  // the harness's reset clears it, for the next test
  EXPECT_EQ(a_->cuMemFree(d), abi::CUDA_SUCCESS);
}

TEST_F(StrictFake, AnErrorInOneStreamsWorkDropsTheWorkQueuedAfterIt) {
  cuda::ScopedContext cur(ctx_);
  abi::CUstream st = nullptr;
  ASSERT_EQ(a_->cuStreamCreate(&st, abi::CU_STREAM_NON_BLOCKING), abi::CUDA_SUCCESS);
  abi::CUevent e = nullptr;
  ASSERT_EQ(a_->cuEventCreate(&e, abi::CU_EVENT_DISABLE_TIMING), abi::CUDA_SUCCESS);
  abi::CUdeviceptr d = 0;
  ASSERT_EQ(a_->cuMemAlloc(&d, kN), abi::CUDA_SUCCESS);
  std::vector<unsigned char> src(kN, 1);
  fake_.fail_sticky("cuMemcpy2DAsync", abi::CUDA_ERROR_ILLEGAL_ADDRESS, 0);
  fake_.pause_work(1);  // the record is issued before the copy faults
  ASSERT_EQ(upload(d, src.data(), kN, st), abi::CUDA_SUCCESS);
  ASSERT_EQ(a_->cuEventRecord(e, st), abi::CUDA_SUCCESS);
  fake_.pause_work(0);
  EXPECT_EQ(a_->cuEventSynchronize(e), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(a_->cuEventQuery(e), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(a_->cuStreamSynchronize(st), abi::CUDA_ERROR_ILLEGAL_ADDRESS);
  fake_.reset();
  EXPECT_EQ(a_->cuMemFree(d), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuEventDestroy(e), abi::CUDA_SUCCESS);
  EXPECT_EQ(a_->cuStreamDestroy(st), abi::CUDA_SUCCESS);
}

}  // namespace
}  // namespace handoff::test
