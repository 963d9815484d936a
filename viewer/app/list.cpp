// handoff-view --list: the live publishers in $XDG_RUNTIME_DIR/handoff, one
// line each: name, pid and state, format and size and frame rate (from a
// short look at its frames, when it publishes any), how it shares, the path.
#include "list.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include <handoff/live/endpoint.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/recording.hpp>
#include <handoff/subscriber.hpp>

namespace handoff::app {
namespace {

// Format, size and rate of a live publisher: two of its frames, looked at for
// at most `budget`; "" when it published none meanwhile.
std::string look_at_frames(const std::filesystem::path& path, std::chrono::milliseconds budget) {
  SubscriberOptions o;
  o.wait = false;
  o.reconnect = false;
  o.client = "handoff-view --list";
  Subscriber sub(path.string(), o);
  const auto deadline = std::chrono::steady_clock::now() + budget;
  LiveFrame first, second;
  while (!second && std::chrono::steady_clock::now() < deadline) {
    LiveFrame f = sub.next(std::chrono::milliseconds(20));
    if (!f) {
      if (sub.status().state == LinkState::Failed) return "";
      continue;
    }
    if (!first) first = std::move(f);
    else second = std::move(f);
  }
  if (!first) return "";
  const Frame& fr = first.frame;
  char text[160];
  std::snprintf(text, sizeof text, "%s %ux%u", std::string(to_string(fr.format)).c_str(), fr.width, fr.height);
  std::string out = text;
  if (second && second.counters.published > first.counters.published &&
      second.publish_time_ns > first.publish_time_ns) {
    const double fps = double(second.counters.published - first.counters.published) * 1e9 /
                       double(second.publish_time_ns - first.publish_time_ns);
    std::snprintf(text, sizeof text, " %.1f fps", fps);
    out += text;
  }
  return out;
}

}  // namespace

int list_publishers() {
  // Publishers by name live in $XDG_RUNTIME_DIR/handoff: without it there are none to list.
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime == nullptr || *runtime == '\0') {
    std::printf("no publishers: XDG_RUNTIME_DIR is not set (named publishers live in $XDG_RUNTIME_DIR/handoff)\n");
    return 0;
  }
  const std::filesystem::path dir = live::socket_dir(false);
  const std::vector<live::PublisherListing> all = live::list_publishers(dir);
  if (all.empty()) {
    std::printf("no publishers in %s\n", dir.string().c_str());
    return 0;
  }
  for (const live::PublisherListing& p : all) {
    if (!p.live) {
      std::printf("%-20s -          %s  %s\n", p.name.c_str(), p.status.c_str(), p.path.string().c_str());
      continue;
    }
    std::string frames = look_at_frames(p.path, std::chrono::milliseconds(500));
    if (frames.empty()) frames = "(no frame within 0.5 s)";
    std::printf("%-20s pid %-6u live  %s  %s memory  %s\n", p.name.c_str(), p.pid, frames.c_str(),
                std::string(to_string(p.memory)).c_str(), p.path.string().c_str());
  }
  return 0;
}

namespace {

// A name from a file, printable: control bytes (a NUL, a newline, an escape
// sequence) as \xNN, so they neither cut the name short nor break the table.
std::string printable(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f && c != '\\') {
      out += ch;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
  }
  return out;
}

}  // namespace

int list_recording_topics(const std::string& path) {
  std::error_code ec;  // said as playing a missing FILE says it
  if (!std::filesystem::exists(path, ec)) throw media::ParseError(path, "", "", "no such file");
  std::vector<std::string> warnings;
  auto topics = media::list_recording_topics(path, &warnings);
  for (auto& t : topics) {
    t.topic = printable(t.topic);
    t.type = printable(t.type);
    t.note = printable(t.note);
  }
  std::size_t topic_width = 5, type_width = 4;
  for (const auto& t : topics) {
    topic_width = std::max(topic_width, t.topic.size());
    type_width = std::max(type_width, t.type.size());
  }
  std::printf("%-*s  %-*s  %8s  %9s  %s\n", int(topic_width), "TOPIC", int(type_width), "TYPE", "MESSAGES", "RATE",
              "SHOWN");
  for (const auto& t : topics) {
    char rate[32] = "-";
    if (t.rate > 0) std::snprintf(rate, sizeof rate, "%.2f Hz", t.rate);
    const std::string kind(media::to_string(t.kind));
    std::printf("%-*s  %-*s  %8llu  %9s  %s: %s\n", int(topic_width), t.topic.c_str(), int(type_width), t.type.c_str(),
                static_cast<unsigned long long>(t.messages), rate, kind.c_str(), t.note.c_str());
  }
  if (topics.empty()) std::printf("(no topics)\n");
  // What was left out or cut short (a split bag's file skipped), under the table.
  // Exit 1 as playing the file would: the listing is what could be read.
  for (const auto& w : warnings) std::printf("warning: %s\n", printable(w).c_str());
  return warnings.empty() ? 0 : 1;
}

}  // namespace handoff::app
