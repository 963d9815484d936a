#pragma once
// What a Viewer (any thread) and its display thread share: tasks for the
// display thread, whether the viewer is open (and the error it stopped on),
// the pause / step state, and the figures the display publishes (statistics,
// stream, diagnostics).
//
// Thread safety: every method from any thread unless stated otherwise.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <string>

#include <handoff/viewer.hpp>
#include <handoff/wait.hpp>

namespace handoff::view {

class DisplayLink {
 public:
  // --- tasks for the display thread ---------------------------------------------
  // Queues `task` and wakes the display. ViewerClosed once the display stopped.
  void post(std::function<void()> task);
  // Runs `task` on the display thread and returns its result (or rethrows its
  // exception); WaitTimeout naming `what` when the display does not get to it
  // within wait_limit().
  template <typename F>
  auto call(F task, const std::string& what) -> decltype(task()) {
    using R = decltype(task());
    auto job = std::make_shared<std::packaged_task<R()>>(std::move(task));
    std::future<R> result = job->get_future();
    // The queue alone holds the task: a display that stops with it queued
    // destroys it, and the future reports broken_promise (ViewerClosed) at
    // once rather than at the wait limit.
    post([job = std::move(job)] { (*job)(); });
    const auto limit = wait_limit();
    if (result.wait_for(limit) != std::future_status::ready) throw WaitTimeout(what, limit);
    try {
      return result.get();
    } catch (const std::future_error&) {  // the display stopped before it ran the task
      throw ViewerClosed(closed_reason());
    }
  }
  // Display thread: the queued tasks, in order (the queue is left empty).
  std::deque<std::function<void()>> take_tasks();
  // Display thread: waits until woken (a task, a frame, close) or `timeout`.
  void idle(std::chrono::milliseconds timeout);
  // Wakes the display: a task or a frame is there. `extra` is the display's
  // own way (glfwPostEmptyEvent for windows); set once before any frame.
  void wake();
  void set_extra_wake(std::function<void()> extra);

  // --- open / closed ---------------------------------------------------------------
  bool open() const noexcept { return open_.load(); }
  // The display asked to close (the user, close(), end of playback): it stops
  // at its next tick. Any thread.
  void request_close() noexcept;
  bool close_requested() const noexcept { return close_requested_.load(); }
  // Display thread, once, as it stops: tasks still queued fail with ViewerClosed.
  void mark_closed(std::exception_ptr error);
  void wait_closed();
  bool wait_closed_for(std::chrono::milliseconds timeout);
  std::exception_ptr error() const;
  std::string closed_reason() const;  // "viewer 'x' is closed" (+ why)
  // Why the display stopped on `error`: "its display stopped on an error: ..." ("" for none).
  static std::string stop_reason(std::exception_ptr error);

  // --- controls ----------------------------------------------------------------------
  std::atomic<bool> paused{false};
  std::atomic<std::uint64_t> steps{0};
  std::atomic<bool> finished{false};

  // --- figures the display publishes ---------------------------------------------------
  void publish(const ViewerStats& stats, const StreamInfo& stream);
  ViewerStats stats() const;
  StreamInfo stream() const;
  void count_gl_error(const std::string& message);
  void count_vulkan_message(const std::string& message);
  void set_output(std::size_t written, std::vector<std::string> errors);
  void set_record_errors(std::vector<std::string> errors);
  void add_frame_error(const std::string& error);  // any thread
  void add_input_warning(const std::string& what);  // any thread
  ViewerDiagnostics diagnostics() const;

  std::string name;  // "viewer 'title'", set before the display starts

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool woken_ = false;
  std::function<void()> extra_wake_;
  std::atomic<bool> open_{true};
  std::atomic<bool> close_requested_{false};
  std::exception_ptr error_;
  ViewerStats stats_;
  StreamInfo stream_;
  ViewerDiagnostics diagnostics_;
};

}  // namespace handoff::view
