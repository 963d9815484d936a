#include "interop_testing.hpp"

#include <handoff/diagnostics.hpp>
#include <handoff/uuid.hpp>

#include "gl/worker_core.hpp"

namespace handoff::testing {

std::size_t queued(const GlWorker& worker) noexcept { return worker.core()->queued(); }
std::size_t gl_error_count(const GlWorker& worker) noexcept { return worker.core()->gl_error_count(); }
std::size_t live_resources(const GlWorker& worker) noexcept { return worker.core()->live_resources(); }
std::size_t live_resources(const detail::WorkerCore& core) noexcept { return core.live_resources(); }
std::optional<std::string> gl_device_uuid() {
  GlWorker probe;
  if (!probe.info().device_uuid) return std::nullopt;
  return to_string(*probe.info().device_uuid);
}

void throw_on_gl_errors(GlWorker& worker, bool on) noexcept { worker.core()->set_throw_on_gl_error(on); }

std::size_t live_frames() noexcept { return live_objects().frames; }

ExportCounts export_counts() noexcept {
  const LiveObjects o = live_objects();
  return ExportCounts{o.dlpack_alive, o.dlpack_exported, o.dlpack_deleted};
}

}  // namespace handoff::testing
