#include "hooks/library_hooks.hpp"

namespace handoff::detail {

const LibraryHooks& library_hooks() noexcept {
  static constexpr LibraryHooks hooks{&live_frame_count, &dlpack_export_counts, &skip_same_gpu_check_in_new_workers};
  return hooks;
}

}  // namespace handoff::detail
