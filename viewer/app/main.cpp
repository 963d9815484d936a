// handoff-view: shows NV12 / P010 frames (the built-in scene, the Vulkan
// scene, Y4M or raw files, MCAP recordings) with inference overlays, in a
// window or headless, and records what it shows (--record).
// A thin front end over handoff::Viewer (viewer/view).
//
// Exit status: 0; 1 for unreadable or malformed input (the message names the
// file, the frame or line, the field) or a source that cannot start; 2 for a
// bad command line; 3 when --gl-debug saw a KHR_debug error, or --gl-debug /
// --vk-debug a Vulkan validation message.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <handoff/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/viewer.hpp>

#include "cli.hpp"
#include "list.hpp"

namespace {

using namespace handoff;

struct Say {
  bool quiet;
  void operator()(const std::string& text) const {
    if (!quiet) std::fprintf(stderr, "handoff-view: %s\n", text.c_str());
  }
};

void summary(const Say& say, const Viewer& v, double seconds) {
  const ViewerStats s = v.stats();
  const StreamInfo i = v.stream();
  if (s.shown == 0) {  // no stream to describe (its format and size are not known)
    char line[96];
    std::snprintf(line, sizeof line, "no frame shown in %.2f s", seconds);
    say(line);
    return;
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "%llu frames %ux%u %s in %.2f s: %.1f fps (frame p50 %.2f ms, p99 %.2f ms; map %.2f, write %.2f, "
                "upload %.2f, draw %.2f ms mean)",
                static_cast<unsigned long long>(s.shown), i.width, i.height, std::string(to_string(i.format)).c_str(),
                seconds, seconds > 0 ? double(s.shown) / seconds : 0.0, s.frame_p50_ms, s.frame_p99_ms, s.map_ms,
                s.copy_ms - s.map_ms, s.upload_ms, s.draw_ms);
  say(line);
  if (!i.convert.empty()) say("colour converted: " + i.convert);
}

// What went wrong without stopping the viewer, as an exit status.
int diagnose(const Say& say, const Viewer& v, const app::CommandLine& cl) {
  const ViewerDiagnostics d = v.diagnostics();
  int rc = 0;
  if (!cl.viewer.output_dir.empty())
    say(std::to_string(d.output_written) + " frames written to " +
        std::filesystem::absolute(cl.viewer.output_dir).string());
  for (const std::string& e : d.output_errors) {
    say("PNG: " + e);
    rc = 1;
  }
  if (!cl.viewer.screenshot.empty() && d.output_errors.empty() && std::filesystem::exists(cl.viewer.screenshot))
    say("screenshot written to " + cl.viewer.screenshot);
  if (!cl.viewer.record.path.empty()) {
    const ViewerStats s = v.stats();
    const media::VideoCodec codec = cl.viewer.record.codec;
    const std::string codec_name(media::to_string(codec));
    const std::string skipped = " of another format or size" +
                                (codec == media::VideoCodec::Raw ? "" : " or one " + codec_name + " cannot hold");
    say("recorded " + std::to_string(s.recorded) + " frames to " + cl.viewer.record.path + " (" +
        std::to_string(s.record_dropped) + " displayed frames left out of it" +
        (s.record_skipped ? ", " + std::to_string(s.record_skipped) + skipped : "") + ")");
    if (s.recorded == 0 && s.record_skipped > 0 && codec != media::VideoCodec::Raw) {
      say("recording: no displayed frame could be recorded as " + codec_name + " (record with --record-codec raw)");
      rc = 1;
    }
  }
  for (const std::string& e : d.record_errors) {
    say("recording: " + e);
    rc = 1;
  }
  if (d.frame_errors) {  // played on past them; the file is still malformed
    say(std::to_string(d.frame_errors) + " malformed frame(s) skipped; the first: " + d.first_frame_error);
    rc = 1;
  }
  if (d.input_warnings) {
    say(std::to_string(d.input_warnings) + " problem(s) in the input played past; the first: " + d.first_input_warning);
    rc = 1;
  }
  if (cl.viewer.gl_debug && d.gl_errors) {
    say(std::to_string(d.gl_errors) + " KHR_debug error(s); the first: " + d.first_gl_error);
    rc = 3;
  }
  if ((cl.vk_debug || cl.viewer.gl_debug) && d.vulkan_messages) {
    say(std::to_string(d.vulkan_messages) + " Vulkan validation message(s); the first: " + d.first_vulkan_message);
    rc = 3;
  }
  return rc;
}

// SIGINT / SIGTERM / SIGHUP close the viewer as Q does, so a recording gets
// its summary and footer and the summary lines are printed; a second one ends
// the process at once. The signals are blocked in every thread (the mask is
// set before the viewer makes its threads) and taken here with sigtimedwait.
class StopOnSignals {
 public:
  StopOnSignals() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~StopOnSignals() {
    stop();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);  // one still pending now acts as it would have
  }
  // Before the viewer goes: the watcher may close it until then.
  void stop() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  // `recording`: the notice says the recording is finished first.
  void watch(Viewer& v, const Say& say, bool recording) {
    const std::string closing = recording ? ": closing (the recording is finished first; again to stop at once)"
                                          : ": closing (again to stop at once)";
    thread_ = std::thread([this, &v, say, closing] {
      const timespec tick{0, 100'000'000};
      while (!done_.load()) {
        const int s = sigtimedwait(&set_, nullptr, &tick);
        if (s <= 0) continue;
        if (received_.exchange(s) != 0) {  // the second: at once, as the signal's own action
          std::signal(s, SIG_DFL);
          pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
          std::raise(s);
          std::_Exit(128 + s);
        }
        say(std::string(strsignal(s)) + closing);
        v.close();
      }
    });
  }
  int received() const noexcept { return received_.load(); }

 private:
  sigset_t set_{}, old_{};
  std::atomic<bool> done_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

int run(app::CommandLine& cl) {
  const Say say{cl.quiet};
  cl.viewer.on_notice = [say](std::string_view text) { say(std::string(text)); };
  StopOnSignals signals;  // before the viewer's threads: they inherit the blocked mask
  Viewer v(cl.viewer);
  signals.watch(v, say, !cl.viewer.record.path.empty());
  struct Unwatch {
    StopOnSignals& s;
    ~Unwatch() { s.stop(); }
  } unwatch{signals};  // destroyed before `v`
  if (cl.attach.empty()) v.play(cl.play);
  for (const std::string& a : cl.attach) v.attach(a, AttachOptions{cl.play.frames, std::nullopt});
  const StreamInfo i = v.stream();
  if (!i.source.empty()) say("source: " + i.source + "; " + i.memory);
  const auto start = std::chrono::steady_clock::now();
  std::exception_ptr failure;
  try {
    v.wait_closed();
  } catch (...) {
    failure = std::current_exception();
  }
  summary(say, v, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  int rc = diagnose(say, v, cl);
  if (rc == 0 && signals.received()) rc = 128 + signals.received();  // the shell's convention, after a clean close
  if (!failure) return rc;
  // What stopped the display while it played is about the input (a frame too
  // large for this GL, a malformed file), whatever its type: exit 1, not the
  // 2 of a bad command line (3 stays when --gl-debug / --vk-debug saw errors).
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "handoff-view: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "handoff-view: error: an unknown exception\n");
  }
  return rc == 3 ? 3 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  app::CommandLine cl;
  if (const auto rc = app::parse_command_line(argc, argv, cl)) return *rc;
  try {
    if (cl.list) return cl.play.file.empty() ? app::list_publishers() : app::list_recording_topics(cl.play.file);
    return run(cl);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "handoff-view: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "handoff-view: error: %s\n", e.what());
    return 1;
  }
}
