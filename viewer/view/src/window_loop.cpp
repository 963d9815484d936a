#include "window_loop.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <handoff/error.hpp>
#include <handoff/log.hpp>

namespace handoff::view {

struct WindowLoop::Core {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  bool stop = false;
  bool glfw_live = false;  // between glfwInit and glfwTerminate (wake() checks it)
  std::thread::id thread_id;
  std::thread thread;
  std::vector<WindowClient*> clients;  // GLFW thread only

  void run(std::promise<void>& started) noexcept;
  void rounds() noexcept;
};

namespace {

std::mutex g_instance_mutex;
std::weak_ptr<WindowLoop> g_instance;

std::string glfw_error_text() {
  const char* why = nullptr;
  glfwGetError(&why);
  return why ? why : "glfwInit failed";
}

}  // namespace

// An X server (Xvfb here) now and then refuses a connection opened right after
// another one closed (8 of 60 init / terminate cycles in a row); one made a
// few milliseconds later is accepted. So a failed glfwInit is retried, briefly.
static bool init_glfw(std::string& why) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    if (glfwInit()) return true;
    why = glfw_error_text();
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void WindowLoop::Core::run(std::promise<void>& started) noexcept {
  std::string why;
  if (!init_glfw(why)) {
    started.set_exception(std::make_exception_ptr(Error(Api::Gl, "glfwInit", 0, "", why, HANDOFF_WHERE)));
    return;
  }
  {
    std::lock_guard lock(mutex);
    glfw_live = true;
  }
  started.set_value();
  rounds();
  {
    std::lock_guard lock(mutex);
    glfw_live = false;
  }
  glfwTerminate();
}

// Tasks, then a round over the windows. With no window the thread sleeps
// until a task comes (an idle wait: nobody waits on the loop itself).
void WindowLoop::Core::rounds() noexcept {
  for (;;) {
    std::deque<std::function<void()>> now;
    {
      std::unique_lock lock(mutex);
      if (clients.empty()) cv.wait(lock, [&] { return stop || !tasks.empty(); });
      if (stop && tasks.empty() && clients.empty()) return;
      now.swap(tasks);
    }
    for (auto& task : now) {
      try {
        task();
      } catch (const std::exception& e) {
        log(LogLevel::Error, std::string("GLFW thread: ") + e.what());
      }
    }
    if (clients.empty()) continue;
    bool busy = false;
    const std::vector<WindowClient*> round = clients;
    for (WindowClient* c : round)
      if (std::find(clients.begin(), clients.end(), c) != clients.end()) busy |= c->frame();
    if (busy) glfwPollEvents();
    else glfwWaitEventsTimeout(0.002);
  }
}

std::shared_ptr<WindowLoop> WindowLoop::get() {
  std::lock_guard lock(g_instance_mutex);
  if (auto loop = g_instance.lock()) return loop;
  auto core = std::make_shared<Core>();
  auto started = std::make_shared<std::promise<void>>();
  std::future<void> ready = started->get_future();
  core->thread = std::thread([core, started] { core->run(*started); });
  core->thread_id = core->thread.get_id();
  const auto limit = wait_limit();
  if (ready.wait_for(limit) != std::future_status::ready) {
    core->thread.detach();  // it still holds the core; it ends when glfwInit returns
    throw WaitTimeout("glfwInit on the GLFW thread", limit);
  }
  try {
    ready.get();
  } catch (...) {
    core->thread.join();
    throw;
  }
  auto loop = std::shared_ptr<WindowLoop>(new WindowLoop(core));
  g_instance = loop;
  return loop;
}

WindowLoop::~WindowLoop() {
  {
    std::lock_guard lock(core_->mutex);
    core_->stop = true;
  }
  core_->cv.notify_all();
  wake();
  if (core_->thread.get_id() == std::this_thread::get_id()) core_->thread.detach();  // it holds the core
  else core_->thread.join();
}

void WindowLoop::post(std::function<void()> task) {
  {
    std::lock_guard lock(core_->mutex);
    core_->tasks.push_back(std::move(task));
  }
  core_->cv.notify_all();
  wake();
}

void WindowLoop::wake() noexcept {
  std::lock_guard lock(core_->mutex);
  if (core_->glfw_live) glfwPostEmptyEvent();
}

bool WindowLoop::on_loop_thread() const noexcept { return std::this_thread::get_id() == core_->thread_id; }

void WindowLoop::add(WindowClient* client) {
  std::lock_guard lock(core_->mutex);
  core_->clients.push_back(client);
}

void WindowLoop::remove(WindowClient* client) {
  std::lock_guard lock(core_->mutex);
  core_->clients.erase(std::remove(core_->clients.begin(), core_->clients.end(), client), core_->clients.end());
}

}  // namespace handoff::view
