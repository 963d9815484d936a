#include <handoff/live/endpoint.hpp>

#include "handshake.hpp"
#include "socket.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace handoff::live {

bool is_publisher_name(std::string_view s) noexcept {
  if (s.empty() || s.size() > kMaxNameBytes || s.front() == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

bool peer_trusted(unsigned uid, unsigned gid, const std::optional<unsigned>& group) noexcept {
  return uid == ::geteuid() || (group && gid == *group);
}

namespace {

[[noreturn]] void refuse_dir(const std::filesystem::path& dir, const std::string& why) {
  throw Error("live socket folder " + dir.string() + ": " + why);
}

// The folder holds sockets that hand out this user's frames: it must be a real
// directory of this user that nobody else can enter.
void check_dir(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) refuse_dir(dir, detail::errno_text(errno));
  if (S_ISLNK(st.st_mode)) refuse_dir(dir, "is a symbolic link");
  if (!S_ISDIR(st.st_mode)) refuse_dir(dir, "is not a directory");
  if (st.st_uid != ::geteuid())
    refuse_dir(dir, "belongs to uid " + std::to_string(st.st_uid) + ", not this user (" +
                        std::to_string(::geteuid()) + ")");
  if ((st.st_mode & 077) != 0) refuse_dir(dir, "is open to group or others (mode must be 0700)");
}

}  // namespace

std::filesystem::path socket_dir(bool create) {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime == nullptr || *runtime == '\0')
    throw Error("XDG_RUNTIME_DIR is not set: set it, or give the publisher a socket path instead of a name");
  std::filesystem::path dir = std::filesystem::path(runtime) / "handoff";
  if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    refuse_dir(dir, "cannot create it: " + detail::errno_text(errno));
  std::error_code ec;
  if (create || std::filesystem::exists(dir, ec)) check_dir(dir);
  return dir;
}

std::filesystem::path socket_path(std::string_view name_or_path, bool create_dir) {
  if (name_or_path.find('/') != std::string_view::npos) return std::filesystem::path(name_or_path);
  if (!is_publisher_name(name_or_path))
    throw UsageError("'" + std::string(name_or_path) +
                     "' is not a publisher name (1-64 of A-Z a-z 0-9 . _ -, not starting with '.') nor a path");
  return socket_dir(create_dir) / (std::string(name_or_path) + ".sock");
}

std::string name_from_path(const std::filesystem::path& path) {
  std::string n = path.filename().string();
  if (n.size() > 5 && n.ends_with(".sock")) n.resize(n.size() - 5);
  // A name is text on the wire and on screen: keep it short and printable.
  if (n.size() > kMaxNameBytes) n.resize(kMaxNameBytes);
  for (char& c : n)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  return n.empty() ? std::string("publisher") : n;
}

namespace {

PublisherListing probe(const std::filesystem::path& path, int timeout_ms) {
  PublisherListing l;
  l.name = name_from_path(path);
  l.path = path;
  int error = 0;
  UniqueFd fd = detail::connect_to(path, error);
  if (!fd) {
    l.status = error == ECONNREFUSED ? "stale socket (no publisher listening)"
               : error == EAGAIN         ? "busy (its queue of pending connections is full)"
                                         : detail::errno_text(error);
    return l;
  }
  try {
    Hello hello;
    hello.pid = static_cast<std::uint32_t>(::getpid());
    hello.max_held = 1;
    hello.client = "list";
    const Welcome w = detail::client_handshake(fd.get(), hello, timeout_ms, -1);
    l.live = true;
    l.status = "live";
    l.pid = w.pid;
    l.memory = w.memory;
    l.route = w.route;
    l.name = w.name;
  } catch (const Error& e) {
    l.status = e.what();
  }
  return l;
}

}  // namespace

std::vector<PublisherListing> list_publishers(const std::filesystem::path& dir_in, int timeout_ms) {
  const std::filesystem::path dir = dir_in.empty() ? socket_dir(false) : dir_in;
  std::vector<PublisherListing> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".sock" || !e.is_socket(ec)) continue;
    out.push_back(probe(e.path(), timeout_ms));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

}  // namespace handoff::live
