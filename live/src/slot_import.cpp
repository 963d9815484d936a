#include "slot_import.hpp"

#include "memfd.hpp"
#include "socket.hpp"

#include <sys/stat.h>

namespace handoff::live::detail {

namespace {

// A host slot: a sealed memfd, mapped read-only.
class HostImport final : public SlotImport {
 public:
  HostImport(const SlotAnnounce& info, UniqueFd fd) : SlotImport(info), fd_(std::move(fd)) {
    // Seals first: a memfd that could shrink would SIGBUS this process later.
    check_sealed_memfd(fd_.get(), info.allocation_size, slot_seals(), "slot.descriptor");
    map_ = MemoryMap(fd_.get(), info.allocation_size, false, "live slot " + std::to_string(info.slot));
  }
  MemoryKind memory() const override { return MemoryKind::Host; }
  std::byte* base() const override { return map_.data(); }
  int descriptor() const override { return fd_.get(); }

 private:
  UniqueFd fd_;
  MemoryMap map_;
};

// A Vulkan slot: the descriptor, for the consumer to import into its own API.
class VulkanImport final : public SlotImport {
 public:
  VulkanImport(const SlotAnnounce& info, UniqueFd fd) : SlotImport(info), fd_(std::move(fd)) {
    // Which files a driver exports is its business; these never are memory.
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) throw ProtocolError("slot.descriptor", "fstat: " + errno_text(errno));
    if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISDIR(st.st_mode))
      throw ProtocolError("slot.descriptor", "a socket, pipe or directory is not Vulkan memory");
  }
  MemoryKind memory() const override { return MemoryKind::Vulkan; }
  int descriptor() const override { return fd_.get(); }

 private:
  UniqueFd fd_;
};

}  // namespace

std::shared_ptr<SlotImport> import_slot(const SlotAnnounce& info, UniqueFd fd) {
  switch (info.kind) {
    case SlotKind::HostMemfd: return std::make_shared<HostImport>(info, std::move(fd));
    case SlotKind::VulkanOpaqueFd: return std::make_shared<VulkanImport>(info, std::move(fd));
    case SlotKind::CudaVmmFd:
    case SlotKind::CudaIpcHandle: return import_cuda_slot(info, std::move(fd));
  }
  throw ProtocolError("slot.kind", "unknown");
}

}  // namespace handoff::live::detail
