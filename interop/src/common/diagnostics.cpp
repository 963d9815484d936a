#include <handoff/diagnostics.hpp>

#include "dlpack/export_counts.hpp"
#include "frame/live_frames.hpp"

namespace handoff {

LiveObjects live_objects() noexcept {
  const detail::DlpackExportCounts exports = detail::dlpack_export_counts();
  LiveObjects o;
  o.frames = detail::live_frame_count();
  o.dlpack_alive = exports.live;
  o.dlpack_exported = exports.exported;
  o.dlpack_deleted = exports.deleted;
  return o;
}

}  // namespace handoff
