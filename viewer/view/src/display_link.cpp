#include "display_link.hpp"

#include <utility>

namespace handoff::view {

void DisplayLink::post(std::function<void()> task) {
  std::function<void()> extra;
  {
    std::lock_guard lock(mutex_);
    if (!open_.load()) throw ViewerClosed(name + " is closed");
    tasks_.push_back(std::move(task));
    woken_ = true;
    extra = extra_wake_;
  }
  cv_.notify_all();
  if (extra) extra();
}

std::deque<std::function<void()>> DisplayLink::take_tasks() {
  std::lock_guard lock(mutex_);
  return std::exchange(tasks_, {});
}

// The display's idle wait: nobody waits on it, and it ends on any wake.
void DisplayLink::idle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, timeout, [&] { return woken_ || close_requested_.load(); });
  woken_ = false;
}

void DisplayLink::wake() {
  std::function<void()> extra;
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
    extra = extra_wake_;
  }
  cv_.notify_all();
  if (extra) extra();
}

void DisplayLink::set_extra_wake(std::function<void()> extra) {
  std::lock_guard lock(mutex_);
  extra_wake_ = std::move(extra);
}

void DisplayLink::request_close() noexcept {
  close_requested_.store(true);
  wake();
}

// Notifies under the lock: a waiter may destroy the Viewer (and this link) as
// soon as it sees the viewer closed, so nothing here may touch the link after
// the lock is released.
void DisplayLink::mark_closed(std::exception_ptr error) {
  std::deque<std::function<void()>> left;
  {
    std::lock_guard lock(mutex_);
    error_ = error;
    open_.store(false);
    left = std::exchange(tasks_, {});
    extra_wake_ = nullptr;
    cv_.notify_all();
  }
  left.clear();  // packaged tasks never run: their futures report broken_promise
}

void DisplayLink::wait_closed() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !open_.load(); });  // a wait for a person (the window's close button)
}

bool DisplayLink::wait_closed_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, timeout, [&] { return !open_.load(); });
}

std::exception_ptr DisplayLink::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::string DisplayLink::stop_reason(std::exception_ptr error) {
  if (!error) return {};
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& x) {
    return std::string("its display stopped on an error: ") + x.what();
  } catch (...) {
    return "its display stopped on an unknown error";
  }
}

std::string DisplayLink::closed_reason() const {
  const std::string why = stop_reason(error());
  return name + " is closed" + (why.empty() ? "" : ": " + why);
}

void DisplayLink::publish(const ViewerStats& stats, const StreamInfo& stream) {
  std::lock_guard lock(mutex_);
  stats_ = stats;
  stream_ = stream;
}

ViewerStats DisplayLink::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

StreamInfo DisplayLink::stream() const {
  std::lock_guard lock(mutex_);
  return stream_;
}

void DisplayLink::count_gl_error(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (diagnostics_.gl_errors++ == 0) diagnostics_.first_gl_error = message;
}

void DisplayLink::count_vulkan_message(const std::string& message) {
  std::lock_guard lock(mutex_);
  if (diagnostics_.vulkan_messages++ == 0) diagnostics_.first_vulkan_message = message;
}

void DisplayLink::set_output(std::size_t written, std::vector<std::string> errors) {
  std::lock_guard lock(mutex_);
  diagnostics_.output_written = written;
  for (auto& e : errors) diagnostics_.output_errors.push_back(std::move(e));
}

void DisplayLink::set_record_errors(std::vector<std::string> errors) {
  std::lock_guard lock(mutex_);
  diagnostics_.record_errors = std::move(errors);
}

void DisplayLink::add_frame_error(const std::string& error) {
  std::lock_guard lock(mutex_);
  if (diagnostics_.frame_errors++ == 0) diagnostics_.first_frame_error = error;
}

void DisplayLink::add_input_warning(const std::string& what) {
  std::lock_guard lock(mutex_);
  if (diagnostics_.input_warnings++ == 0) diagnostics_.first_input_warning = what;
}

ViewerDiagnostics DisplayLink::diagnostics() const {
  std::lock_guard lock(mutex_);
  return diagnostics_;
}

}  // namespace handoff::view
