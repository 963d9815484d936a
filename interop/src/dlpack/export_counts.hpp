#pragma once
// Counts of exported DLPack tensors (handoff::live_objects(),
// common/diagnostics.cpp), kept by dlpack/dlpack_export.cpp.
#include <cstddef>
#include <cstdint>

namespace handoff::detail {

struct DlpackExportCounts {
  std::size_t live = 0;        // exported tensors whose deleter has not run yet
  std::uint64_t exported = 0;  // made
  std::uint64_t deleted = 0;   // deleters run
};

// Thread safety: any thread.
DlpackExportCounts dlpack_export_counts() noexcept;

}  // namespace handoff::detail
