#pragma once
// Host memory shared by descriptor: sealed memfds and their mappings.
//
// A slot is a memfd sealed against shrinking and growing (F_SEAL_SHRINK |
// F_SEAL_GROW), so a reader's mapping can never lose its pages (no SIGBUS),
// and readers get a read-only descriptor to it (they can neither write the
// frames nor add seals). A large overlay block is a memfd sealed against
// writing too, so it cannot change while a reader parses it.
#include <handoff/unique_handle.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace handoff::live::detail {

// A mapping; unmapped by the destructor. Move-only.
class MemoryMap {
 public:
  MemoryMap() = default;
  // Maps `size` bytes of `fd` from offset 0, shared; `writable` or read-only.
  // Throws handoff::Error naming `what`.
  MemoryMap(int fd, std::size_t size, bool writable, const std::string& what);
  MemoryMap(MemoryMap&& o) noexcept;
  MemoryMap& operator=(MemoryMap&& o) noexcept;
  MemoryMap(const MemoryMap&) = delete;
  MemoryMap& operator=(const MemoryMap&) = delete;
  ~MemoryMap();

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// A new memfd of `size` bytes (close-on-exec, sealable), sealed against
// shrink and grow, and against adding further seals. Throws handoff::Error.
UniqueFd create_slot_memfd(const std::string& name, std::size_t size);

// A memfd holding `bytes`, sealed against any change (write, shrink, grow).
UniqueFd create_sealed_block(const std::string& name, std::span<const std::byte> bytes);

// A read-only descriptor of the same file (through /proc/self/fd), or an empty
// one where /proc is not there (the caller then sends the original).
UniqueFd reopen_read_only(int fd) noexcept;

// What a reader checks before mapping a descriptor it was sent: a sealable
// file (a memfd) carrying at least `required_seals`, of at least `size`
// bytes. Throws ProtocolError("<field>", why) naming the problem (not a memfd,
// seals missing, too small).
void check_sealed_memfd(int fd, std::uint64_t size, unsigned required_seals, const std::string& field);

// The seals a slot / an overlay block must carry.
unsigned slot_seals() noexcept;
unsigned block_seals() noexcept;

}  // namespace handoff::live::detail
