#include "memfd.hpp"

#include <handoff/error.hpp>
#include <handoff/live/protocol.hpp>

#include "socket.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace handoff::live::detail {

namespace {
[[noreturn]] void fail(const char* call, const std::string& detail, int error = errno) {
  throw Error(Api::System, call, error, errno_text(error), detail);
}
}  // namespace

MemoryMap::MemoryMap(int fd, std::size_t size, bool writable, const std::string& what) : size_(size) {
  // The writer's mapping is populated now: a slot's pages are allocated when
  // the slot is, not one fault at a time in the middle of a frame.
  const int flags = MAP_SHARED | (writable ? MAP_POPULATE : 0);
  void* p = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, flags, fd, 0);
  if (p == MAP_FAILED) fail("mmap", what + " (" + std::to_string(size) + " bytes)");
  data_ = static_cast<std::byte*>(p);
}

MemoryMap::MemoryMap(MemoryMap&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MemoryMap& MemoryMap::operator=(MemoryMap&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

MemoryMap::~MemoryMap() {
  if (data_) ::munmap(data_, size_);
}

unsigned slot_seals() noexcept { return F_SEAL_SHRINK | F_SEAL_GROW; }
unsigned block_seals() noexcept { return F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE; }

UniqueFd create_slot_memfd(const std::string& name, std::size_t size) {
  UniqueFd fd(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) fail("memfd_create", name);
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) fail("ftruncate", name + " to " + std::to_string(size));
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    fail("fcntl(F_ADD_SEALS)", name);
  return fd;
}

UniqueFd create_sealed_block(const std::string& name, std::span<const std::byte> bytes) {
  UniqueFd fd(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) fail("memfd_create", name);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write", name);
    done += static_cast<std::size_t>(n);
  }
  // No writable mapping exists, so F_SEAL_WRITE is accepted.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    fail("fcntl(F_ADD_SEALS)", name);
  return fd;
}

UniqueFd reopen_read_only(int fd) noexcept {
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  return UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
}

void check_sealed_memfd(int fd, std::uint64_t size, unsigned required_seals, const std::string& field) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw ProtocolError(field, "fstat failed: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) throw ProtocolError(field, "not a memfd (not a regular file)");
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) throw ProtocolError(field, "not a memfd (F_GET_SEALS: " + errno_text(errno) + ")");
  const unsigned missing = required_seals & ~static_cast<unsigned>(seals);
  if (missing != 0) {
    std::string names;
    if (missing & F_SEAL_SHRINK) names += " F_SEAL_SHRINK";
    if (missing & F_SEAL_GROW) names += " F_SEAL_GROW";
    if (missing & F_SEAL_WRITE) names += " F_SEAL_WRITE";
    throw ProtocolError(field, "memfd lacks the seals" + names + " (its size or bytes could change under a reader)");
  }
  if (static_cast<std::uint64_t>(st.st_size) < size)
    throw ProtocolError(field, "memfd holds " + std::to_string(st.st_size) + " bytes, the message says " +
                                   std::to_string(size));
}

}  // namespace handoff::live::detail
