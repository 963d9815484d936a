#pragma once
// The subscriber's side of a slot: the memory a Slot message announced,
// checked and mapped (host), imported (CUDA), or kept as a descriptor for the
// consumer to import (Vulkan). Shared by every frame received in it; the last
// one gone unmaps / releases it.
#include <handoff/frame.hpp>
#include <handoff/live/protocol.hpp>
#include <handoff/unique_handle.hpp>

#include <cstddef>
#include <memory>

namespace handoff::live::detail {

class SlotImport {
 public:
  explicit SlotImport(const SlotAnnounce& info) : info_(info) {}
  virtual ~SlotImport() = default;
  SlotImport(const SlotImport&) = delete;
  SlotImport& operator=(const SlotImport&) = delete;

  const SlotAnnounce& info() const noexcept { return info_; }
  virtual MemoryKind memory() const = 0;
  // Host / CUDA: the address of the slot's first usable byte.
  virtual std::byte* base() const { return nullptr; }
  virtual int device() const { return -1; }
  virtual void* cuda_context() const { return nullptr; }
  virtual void* cuda_event() const { return nullptr; }
  // Waits (bounded) until the slot's event has completed; no-op without one.
  virtual void wait_event() const {}
  // The descriptor kept for duplicate_descriptor() (-1: none).
  virtual int descriptor() const { return -1; }

 private:
  SlotAnnounce info_;
};

// Imports the slot `info` announced, with the descriptor that came with it
// (empty for CUDA IPC handles). Throws ProtocolError for a descriptor of the
// wrong kind or size (the publisher is broken or hostile) and handoff::Error
// when this process cannot import it (no CUDA, another GPU).
std::shared_ptr<SlotImport> import_slot(const SlotAnnounce& info, UniqueFd fd);

// CUDA slots (cuda_slots.cpp).
std::shared_ptr<SlotImport> import_cuda_slot(const SlotAnnounce& info, UniqueFd fd);

}  // namespace handoff::live::detail
