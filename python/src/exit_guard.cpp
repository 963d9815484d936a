// Interpreter exit and the threads inside handoff's calls (module_common.hpp:
// without_gil). At exit Python ends a daemon thread that takes the GIL back
// with pthread_exit; its forced unwind cannot pass the C++ frames between
// (a noexcept destructor, nanobind's dispatch), so the process would abort.
// Such a thread is parked instead, and ends with the process.
#include "module_common.hpp"

#include <atomic>
#include <chrono>
#include <thread>

namespace handoff::py {
namespace {

std::atomic<bool> g_exiting{false};
std::atomic<unsigned long> g_main_thread{0};  // threading.main_thread().ident

}  // namespace

bool exiting_elsewhere() noexcept {
  if (PyThread_get_thread_ident() == g_main_thread.load()) return false;
#if PY_VERSION_HEX >= 0x030D0000
  return g_exiting.load() || Py_IsFinalizing();
#else
  return g_exiting.load() || _Py_IsFinalizing();
#endif
}

std::atomic<int>& calls_without_gil() noexcept {
  static std::atomic<int> n{0};
  return n;
}

void park_for_exit() noexcept {
  // What the parked thread refers to stays alive to the end: no leak to report.
  nb::set_leak_warnings(false);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// atexit runs before Python finalizes (and after the non-daemon threads are
// joined): from then on a daemon thread coming back from a call parks.
void watch_for_exit(nb::module_&) {
  g_main_thread.store(nb::cast<unsigned long>(nb::module_::import_("threading").attr("main_thread")().attr("ident")));
  // A function object of its own, not a module attribute (the module ships no private names).
  nb::object hook = nb::cpp_function([] {
    g_exiting.store(true);
    // A daemon thread inside a call holds its objects to the end: nanobind's
    // report of objects alive at exit would name them as leaks.
    if (calls_without_gil().load() > 0) nb::set_leak_warnings(false);
  });
  nb::module_::import_("atexit").attr("register")(hook);
}

}  // namespace handoff::py
