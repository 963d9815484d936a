#pragma once
// The process's GLFW thread. GLFW wants its calls (init, windows, events) on
// one thread; several viewers in one process therefore share this thread:
// it polls events and draws every open window in turn. Started by the first
// windowed viewer, it ends (glfwTerminate) when the last handle goes.
//
// Thread safety: get(), call(), post() and wake() from any thread; add() and
// remove() on the GLFW thread. Ownership: handles share the thread; the
// thread keeps its own state alive until it has finished.
#include <functional>
#include <future>
#include <memory>
#include <string>

#include <handoff/wait.hpp>

namespace handoff::view {

// What the loop draws each round (a window's display).
class WindowClient {
 public:
  virtual ~WindowClient() = default;
  // One round: input, the next frame if there is one, draw, swap. True when
  // it drew a new frame (the loop then polls events without waiting).
  virtual bool frame() noexcept = 0;
};

class WindowLoop {
 public:
  // The running loop, or a new one (glfwInit on its thread); handoff::Error
  // when GLFW cannot start (no display, no X server).
  static std::shared_ptr<WindowLoop> get();
  ~WindowLoop();  // the last handle: the thread finishes its tasks and ends
  WindowLoop(const WindowLoop&) = delete;
  WindowLoop& operator=(const WindowLoop&) = delete;

  // Queues `task` for the GLFW thread (before its next round) and wakes it.
  void post(std::function<void()> task);
  // Runs `task` on the GLFW thread and returns its result (or rethrows);
  // WaitTimeout naming `what` after wait_limit(). Inline on the GLFW thread.
  template <typename F>
  auto call(F task, const std::string& what) -> decltype(task()) {
    using R = decltype(task());
    if (on_loop_thread()) return task();
    auto job = std::make_shared<std::packaged_task<R()>>(std::move(task));
    std::future<R> result = job->get_future();
    post([job] { (*job)(); });
    const auto limit = wait_limit();
    if (result.wait_for(limit) != std::future_status::ready) throw WaitTimeout(what, limit);
    return result.get();
  }
  // Wakes the loop from its wait for events (a frame or a task is there).
  void wake() noexcept;
  bool on_loop_thread() const noexcept;
  // GLFW thread: draw `client` every round from now on / no longer.
  void add(WindowClient* client);
  void remove(WindowClient* client);

  struct Core;

 private:
  explicit WindowLoop(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  std::shared_ptr<Core> core_;
};

}  // namespace handoff::view
