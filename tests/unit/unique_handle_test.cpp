#include <handoff/error.hpp>
#include <handoff/unique_handle.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

struct CountingDeleter {
  int* calls;
  void operator()(int) const noexcept { ++*calls; }
};

TEST(UniqueHandle, FdEmptyIsMinusOneAndClosesOnce) {
  int fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  {
    handoff::UniqueFd a(fd);
    EXPECT_TRUE(a);
    handoff::UniqueFd b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(a.get(), -1);
    EXPECT_EQ(b.get(), fd);
  }
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1) << "descriptor should be closed";
}

TEST(UniqueHandle, ReleaseTransfersOwnership) {
  int calls = 0;
  {
    handoff::UniqueHandle<int, CountingDeleter, 0> h(7, CountingDeleter{&calls});
    EXPECT_EQ(h.release(), 7);
  }
  EXPECT_EQ(calls, 0);
  {
    handoff::UniqueHandle<int, CountingDeleter, 0> h(7, CountingDeleter{&calls});
    h.reset(9);
    EXPECT_EQ(calls, 1);
  }
  EXPECT_EQ(calls, 2);
}

TEST(Error, MessageNamesCallCodeAndPlace) {
  handoff::Error e(handoff::Api::Cuda, "cuGraphicsMapResources", 208, "CUDA_ERROR_ALREADY_MAPPED", "frame 3",
                   "x.cpp:12");
  std::string m = e.what();
  EXPECT_NE(m.find("cuGraphicsMapResources"), std::string::npos) << m;
  EXPECT_NE(m.find("CUDA_ERROR_ALREADY_MAPPED"), std::string::npos) << m;
  EXPECT_NE(m.find("208"), std::string::npos) << m;
  EXPECT_NE(m.find("x.cpp:12"), std::string::npos) << m;
  EXPECT_EQ(e.code(), 208);
  EXPECT_EQ(e.api(), handoff::Api::Cuda);
}

}  // namespace
