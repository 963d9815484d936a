#pragma once
// Where live publishers listen: `$XDG_RUNTIME_DIR/handoff/<name>.sock` for a
// name, or any path given instead (a string with a '/' in it).
//
// Thread safety: every function may be called from any thread.
#include <handoff/live/link.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::live {

// A publisher name: 1..64 characters of [A-Za-z0-9._-], not starting with '.'.
bool is_publisher_name(std::string_view s) noexcept;

// `$XDG_RUNTIME_DIR/handoff`. With `create`, makes it (mode 0700) when missing.
// Throws handoff::Error when XDG_RUNTIME_DIR is unset, and (with `create`, or
// when it exists) when the folder is not a directory, a symbolic link, not
// owned by this user, or open to group / others (it holds this user's sockets).
std::filesystem::path socket_dir(bool create = false);

// The socket path for a name (in socket_dir()) or a path given as it is.
// Throws UsageError for a string that is neither a valid name nor a path.
std::filesystem::path socket_path(std::string_view name_or_path, bool create_dir = false);

// The name a publisher at `path` reports: the file name without ".sock".
std::string name_from_path(const std::filesystem::path& path);

struct PublisherListing {
  std::string name;
  std::filesystem::path path;
  bool live = false;      // a publisher answered
  std::string status;     // "live", "stale socket (no publisher listening)", "refused: ..."
  std::uint32_t pid = 0;  // live ones
  SlotMemory memory = SlotMemory::Host;
  std::string route;
};

// Whether a peer running as `uid` / `gid` may connect: this process's user,
// or anyone in `group` when one is allowed (the PublisherOptions /
// SubscriberOptions allow_group).
bool peer_trusted(unsigned uid, unsigned gid, const std::optional<unsigned>& group) noexcept;

// The publishers in `dir` (default socket_dir()): every "*.sock" socket,
// asked with a Hello whether a publisher is there (answer awaited at most
// `timeout_ms`). Sorted by name. A missing folder is an empty list.
std::vector<PublisherListing> list_publishers(const std::filesystem::path& dir = {}, int timeout_ms = 1000);

}  // namespace handoff::live
