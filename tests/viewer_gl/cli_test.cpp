// The command lines of handoff-view and handoff-info: a bad command line exits
// 2 with a message naming what is wrong (not CLI11's own codes, e.g. 109 for an
// unknown option); --help exits 0.
#include <gmock/gmock.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "process.hpp"
#include "scratch_dir.hpp"

namespace handoff::view::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
  // Numbers: whole, in range, no wrap-around (4294967297 is 1 in 32 bits), no spaces or signs.
  for (const char* frames : {"0", "-1", "1.5", "99999999999"})
    expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--frames", frames}), "--frames");
  for (const char* size : {"4294967297x64", " 64x64", "64x 64", "+64x64", "64x64x", "x64", "0x8"})
    expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--size", size}), "--size");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--bench-boxes", "4000000000"}), "--bench-boxes");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--bench-boxes", "1000001"}), "--bench-boxes");
}

class ViewerCliFiles : public ScratchDirTest {
 public:
  ViewerCliFiles() : ScratchDirTest("handoff-cli-test-") {}
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

// An output named as an input is refused before anything is written: the
// input would be overwritten (the screenshot at the end) or truncated before
// it is read (the recording, opened first).
TEST_F(ViewerCliFiles, AnOutputOverAnInputIsRefusedAndTheInputKept) {
  const std::string y4m = "YUV4MPEG2 W4 H2 F30:1 C420jpeg\nFRAME\n" + std::string(4 * 2 + 2 * 2, '\x80');
  write_file("clip.y4m", y4m);
  write_file("boxes.jsonl", "{\"frame\": 0, \"boxes\": []}\n");
  const std::string clip = path("clip.y4m"), boxes = path("boxes.jsonl"), rec = path("r.mcap");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", clip, "--screenshot", clip}),
                     "--screenshot " + clip + " is the file being played");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", clip, "--overlays", boxes, "--record", boxes}),
                     "--record " + boxes + " is the --overlays file");
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", clip, "--record", rec, "--screenshot", rec}),
                     "is the --record file");
  // The same file by another name.
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", clip, "--screenshot", dir_.string() + "/./clip.y4m"}),
                     "is the file being played");
  EXPECT_EQ(read("clip.y4m"), y4m);
  EXPECT_EQ(read("boxes.jsonl"), "{\"frame\": 0, \"boxes\": []}\n");
  EXPECT_FALSE(std::filesystem::exists(rec));
}

// A ROS 2 bag folder is played from its metadata.yaml and storage files: an
// output in it named as they are is refused before anything is written (a
// storage file was truncated to an empty recording before it was read).
TEST_F(ViewerCliFiles, AnOutputOverAFileOfThePlayedBagIsRefusedAndTheBagKept) {
  std::filesystem::create_directory(path("bag"));
  write_file("bag/metadata.yaml", "rosbag2_bagfile_information: {}\n");
  write_file("bag/bag_0.mcap", "not read: refused first");
  write_file("bag/bag_1.db3", "not read: refused first");
  const std::string bag = path("bag");
  const std::string refused = " is in the bag folder being played, named as its files are";
  for (const std::string file : {"bag_0.mcap", "bag_1.db3", "metadata.yaml", "new.mcap"}) {
    expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", bag, "--record", bag + "/" + file}),
                       "--record " + bag + "/" + file + refused);
    expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", bag + "/", "--screenshot", bag + "/./" + file}),
                       refused);
  }
  EXPECT_EQ(read("bag/metadata.yaml"), "rosbag2_bagfile_information: {}\n");
  EXPECT_EQ(read("bag/bag_0.mcap"), "not read: refused first");
  EXPECT_EQ(read("bag/bag_1.db3"), "not read: refused first");
  EXPECT_FALSE(std::filesystem::exists(path("bag/new.mcap")));
  const auto shot = run_program(HANDOFF_VIEW_EXE, {"--headless", bag, "--screenshot", bag + "/shot.png"});
  EXPECT_NE(shot.exit_code, 2) << shot.output;  // not a bag's file name (the made-up bag then fails to open)
}

// An overlay file that is not a regular file is named, not read without end
// (/dev/zero) or taken for an empty one (a directory).
TEST_F(ViewerCliFiles, OverlaysThatAreNotAFileAreAnError) {
  std::filesystem::create_directory(path("dir"));
  for (const auto& [file, word] : {std::pair{path("dir"), "is a directory"}, std::pair{std::string("/dev/zero"),
                                                                                       "not a regular file"}}) {
    const ProcessResult r = run_program(HANDOFF_VIEW_EXE, {"--headless", "--frames", "2", "--overlays", file});
    EXPECT_FALSE(r.timed_out) << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(file + ": open: " + word), std::string::npos) << r.output;
  }
}

// A raw file without --size is a usage error that says what a raw file needs.
TEST_F(ViewerCliFiles, ARawFileWithoutASizeSaysWhatItNeeds) {
  write_file("clip.yuv", std::string(4 * 4 * 3, '\x10'));
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", path("clip.yuv")}),
                     "a raw file needs --size WxH, and --format unless it is nv12 (nv12 | p010 | i420");
}

// A FILE that is not there is said to be missing (exit 1) with the recording
// options and --list as without them, not taken for a file of another kind;
// --topic on a file that is there but no recording is still a usage error.
TEST_F(ViewerCliFiles, RecordingOptionsOnAMissingFileSayItIsMissing) {
  const std::string gone = path("gone"), gone_db3 = path("gone.db3");
  const std::vector<std::vector<std::string>> lines = {
      {gone},       {gone, "--topic", "/a"}, {gone, "--all-images"}, {gone, "--overlay-topic", "/d"},
      {gone, "--list"}, {gone_db3, "--list"}, {gone_db3, "--topic", "/a", "--topic", "/b"}};
  for (const auto& args : lines) {
    std::vector<std::string> line = {"--headless"};
    line.insert(line.end(), args.begin(), args.end());
    const ProcessResult r = run_program(HANDOFF_VIEW_EXE, line);
    EXPECT_FALSE(r.timed_out) << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr(args[0] + ": no such file"));
  }
  write_file("clip.y4m", "YUV4MPEG2 W4 H2 F30:1 C420jpeg\nFRAME\n" + std::string(4 * 2 + 2 * 2, '\x80'));
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", path("clip.y4m"), "--topic", "/a"}),
                     "--topic picks a recording's image topics");
}

// One tile per --topic: a topic named twice is a usage error naming it (as
// handoff.open_topics refuses a repeated topic).
TEST(ViewerCli, ATopicNamedTwiceIsRefused) {
  expect_usage_error(run_program(HANDOFF_VIEW_EXE, {"--headless", "bag.mcap", "--topic", "/a", "--topic", "/b", "--topic", "/a"}),
                     "--topic: '/a' is named twice");
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

// Without GL (no EGL vendor library) or without a CUDA driver, every line says
// so: no "same GPU" reason about UUIDs, no frame path through GL buffers.
TEST(InfoCli, WhatIsMissingIsNamedOnEveryLine) {
  // Under ASan, a driver library's 128 bytes at exit (tests/gl/CMakeLists.txt,
  // handoff_info_prints_capabilities): not handoff's; the report would also
  // end the process before its output is flushed.
  const std::string no_leak_check = "ASAN_OPTIONS=detect_leaks=0";
  const auto no_gl = run_program(HANDOFF_INFO_EXE, {}, {},
                                 {"__EGL_VENDOR_LIBRARY_FILENAMES=/nonexistent/egl.json", no_leak_check});
  EXPECT_EQ(no_gl.exit_code, 0) << no_gl.output;
  EXPECT_THAT(no_gl.output, HasSubstr("GL:              unavailable: "));
  EXPECT_THAT(no_gl.output, HasSubstr("CUDA and GL: unknown (no GL)"));
  EXPECT_THAT(no_gl.output, HasSubstr("Vulkan and GL: unknown (no GL)"));
  EXPECT_THAT(no_gl.output, HasSubstr("Frame path:      none: no GL context"));
  EXPECT_THAT(no_gl.output, Not(HasSubstr("registered GL buffers")));
  const auto no_cuda =
      run_program(HANDOFF_INFO_EXE, {}, {}, {"HANDOFF_CUDA_DRIVER=/nonexistent/libcuda.so.1", no_leak_check});
  EXPECT_EQ(no_cuda.exit_code, 0) << no_cuda.output;
  if (no_cuda.output.find("GL device UUID:  not reported") == std::string::npos)  // llvmpipe reports one
    EXPECT_THAT(no_cuda.output, HasSubstr("CUDA and GL: unknown (CUDA unavailable)"));
  EXPECT_THAT(no_cuda.output, HasSubstr("Frame path:      host mapping of GL buffers"));
}

TEST(InfoCli, HelpExits0) {
  const auto r = run_program(HANDOFF_INFO_EXE, {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--cuda-device"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace handoff::view::test
