#pragma once
// Helpers shared by the fakecuda tests.
#include <handoff/cuda.hpp>

#include <handoff/cuda_abi.hpp>
#include "fake_cuda_control.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace handoff::test {

namespace abi = cuda::abi;

// Sets (or unsets, with nullptr) an environment variable for one scope. The
// fake reads its configuration at cuInit, so set it before Driver::load.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

inline const char* fake_path() { return HANDOFF_FAKE_CUDA_PATH; }

// A test on the fake: its control API, counters reset, and the leak check at the end.
class FakeCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_.ok()) << fake_.error();
    fake_.reset();
    base_allocations_ = fake_.live_allocations();
    base_contexts_ = fake_.primary_context_refs(0);
  }
  void TearDown() override {
    EXPECT_EQ(fake_.objects_lost_to_resets(), 0) << "a context reset destroyed live objects";
    fake_.reset();
    EXPECT_EQ(fake_.live_allocations(), base_allocations_) << "device allocations leaked";
    EXPECT_EQ(fake_.primary_context_refs(0), base_contexts_) << "primary context retains leaked";
    EXPECT_EQ(fake_.live_registrations(), 0) << "graphics registrations leaked";
    EXPECT_EQ(fake_.live_external_memories(), 0) << "external memories leaked";
    EXPECT_EQ(fake_.live_streams(), 0) << "streams leaked";
  }
  FakeCuda fake_{fake_path()};
  int base_allocations_ = 0;
  int base_contexts_ = 0;
};

}  // namespace handoff::test
