// The plugin as GStreamer users meet it: libgsthandoff.so found through
// GST_PLUGIN_PATH by gst-inspect-1.0 (every property and the action signal
// documented) and gst-launch-1.0 (a pipeline runs to its end; a bad one fails).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Outcome {
  int status = -1;
  std::string output;
};

// `command` with the build's plugin folder and a registry of its own.
Outcome run(const std::string& command) {
  const std::string env = "GST_PLUGIN_PATH='" HANDOFF_GST_PLUGIN_DIR "' GST_REGISTRY='" HANDOFF_GST_TEST_REGISTRY
                          "' ";
  Outcome r;
  FILE* p = ::popen((env + command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
  const int s = ::pclose(p);
  r.status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
  return r;
}

TEST(GstPlugin, InspectDocumentsEveryPropertyOfTheSink) {
  const Outcome r = run("gst-inspect-1.0 handoffsink");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("libgsthandoff.so"), std::string::npos) << r.output;
  for (const char* prop : {"title", "window", "headless", "show-ui", "show-overlays", "vsync", "window-width",
                           "window-height", "publish", "record", "cuda-device", "viewer-stats", "sync", "qos",
                           "max-lateness", "\"snapshot\"", "NV12", "P010_10LE", "memory:GLMemory"})
    EXPECT_NE(r.output.find(prop), std::string::npos) << "gst-inspect-1.0 handoffsink does not show " << prop;
}

TEST(GstPlugin, InspectDocumentsTheSource) {
  const Outcome r = run("gst-inspect-1.0 handoffsrc");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* prop : {"attach", "allow-group", "wait", "do-timestamp", "P010_10LE", "Source/Video"})
    EXPECT_NE(r.output.find(prop), std::string::npos) << "gst-inspect-1.0 handoffsrc does not show " << prop;
}

TEST(GstPlugin, LaunchRunsAPipelineThroughThePlugin) {
  const Outcome ok = run("gst-launch-1.0 -q videotestsrc num-buffers=20 ! video/x-raw,format=P010_10LE,width=96,height=64 "
                     "! handoffsink headless=true sync=false");
  EXPECT_EQ(ok.status, 0) << ok.output;
  const Outcome bad = run("gst-launch-1.0 -q videotestsrc num-buffers=2 ! video/x-raw,format=I420 ! handoffsink headless=true");
  EXPECT_NE(bad.status, 0) << bad.output;
  EXPECT_NE(bad.output.find("handoffsink"), std::string::npos) << bad.output;
}

}  // namespace
