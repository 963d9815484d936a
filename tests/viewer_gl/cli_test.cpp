// The command lines of handoff-view and handoff-info: a bad command line exits
// 2 with a message naming what is wrong (not CLI11's own codes, e.g. 109 for an
// unknown option); --help exits 0.
#include <gtest/gtest.h>

#include <string>

#include "process.hpp"

namespace handoff::view::test {
namespace {

void expect_usage_error(const ProcessResult& r, const std::string& word) {
  EXPECT_FALSE(r.timed_out) << r.output;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(word), std::string::npos) << "'" << word << "' missing in: " << r.output;
}

TEST(ViewerCli, UnknownOptionExits2) { expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--bogus"}), "--bogus"); }

TEST(ViewerCli, BadValuesExit2) {
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--frames", "many"}), "--frames");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--ring", "2"}), "--ring");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--format", "yuv444"}), "--format");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--window", "10x10"}), "--window");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--source", "vulkan", "clip.y4m"}), "--source vulkan");
}

// --value-range LO,HI: two finite numbers, LO below HI; anything else is a usage error naming it.
TEST(ViewerCli, ValueRangeMustBeLoBelowHi) {
  for (const char* bad : {"5,2", "3,3", "1", "a,b", "0,inf", "1,2,3", ",4"})
    expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--value-range", bad}), "--value-range");
  const auto ok = run_program(HANDOFF_VIEW_EXE, {"--headless", "--quiet", "--frames", "2", "--value-range", "-0.5,1e3"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

TEST(ViewerCli, HelpExits0) {
  const auto r = run_program(HANDOFF_VIEW_EXE, {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--overlays"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--value-range"), std::string::npos) << r.output;
}

TEST(InfoCli, UnknownArgumentExits2) { expect_usage_error(run_program(HANDOFF_INFO_EXE, {"--bogus"}), "--bogus"); }

TEST(InfoCli, BadDeviceExits2) {
  expect_usage_error(run_program(HANDOFF_INFO_EXE, {"--cuda-device", "zero"}), "--cuda-device");
  expect_usage_error(run_program(HANDOFF_INFO_EXE, {"--cuda-device"}), "--cuda-device");
}

TEST(InfoCli, HelpExits0) {
  const auto r = run_program(HANDOFF_INFO_EXE, {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--cuda-device"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace handoff::view::test
