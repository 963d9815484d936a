#pragma once
// What the binding files of the module `handoff._handoff` share: the Python
// frame object, enum arguments (handoff::from_string's spellings), and running
// blocking work without the GIL. Not a public header (python/src only).
#include <handoff/error.hpp>
#include <handoff/frame.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <optional>
#include <string>

namespace handoff::py {

namespace nb = nanobind;

// handoff.Frame: a frame and whether Python may write it (only host frames
// handoff allocated itself: Frame.allocate, the frames handoff.open yields).
struct PyFrame {
  Frame frame;
  bool writable = false;
};

// The value of E (PixelFormat, ColorMatrix, ColorRange, ChromaSiting) that
// handoff::from_string reads `text` as; ValueError naming `field` otherwise:
//   format: pixel format 'yuv420p' is not one of nv12, p010
template <typename E>
E enum_arg(const char* field, const std::string& text) {
  try {
    return from_string<E>(text);
  } catch (const UsageError& e) {
    throw nb::value_error((std::string(field) + ": " + e.what()).c_str());
  }
}

// A DLPack data type (code, bits, lanes) as NumPy names it, for messages:
// "uint8", "float32", "bool"; "int16x4" for vector lanes.
inline std::string dtype_name(int code, int bits, int lanes) {
  static const char* names[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};  // DLDataTypeCode
  if (code == 6 && bits == 8 && lanes == 1) return "bool";
  const std::string n = code >= 0 && code < 7 ? names[code] : "code" + std::to_string(code);
  return n + std::to_string(bits) + (lanes != 1 ? "x" + std::to_string(lanes) : "");
}

// str(obj), and the name of obj's type, as C++ strings (for messages).
inline std::string text_of(nb::handle obj) {
  nb::object s = nb::steal(PyObject_Str(obj.ptr()));
  if (!s.is_valid()) throw nb::python_error();
  return nb::cast<std::string>(s);
}
inline std::string py_type_name(nb::handle h) { return text_of(h.type().attr("__name__")); }

// What is wrong with a NumPy-like array's dtype for handoff, which reads
// native (little-endian) integer, float and bool samples: "dtype >u2 is
// big-endian ..."; empty where its dtype says nothing (or it has none).
inline std::string dtype_problem(nb::handle array) {
  try {
    if (!nb::hasattr(array, "dtype")) return {};
    nb::object dt = array.attr("dtype");
    if (!nb::hasattr(dt, "byteorder") || !nb::hasattr(dt, "kind")) return {};
    const std::string kind = nb::cast<std::string>(dt.attr("kind"));
    const std::string str = text_of(dt.attr("str"));
    if (kind != "u" && kind != "i" && kind != "f" && kind != "b")
      return "dtype " + text_of(dt) + " is not an integer, float or bool type";
    if (nb::cast<std::string>(dt.attr("byteorder")) == ">")
      return "dtype " + str + " is big-endian: samples are read in native (little-endian) byte order "
             "(convert with .astype('" + str.substr(1).insert(0, "<") + "'))";
  } catch (const std::exception&) {
  }
  return {};
}

// A path argument: a str or an os.PathLike (os.fspath), as a string. TypeError
// naming `field` for anything else (bytes paths included).
inline std::string path_arg(nb::handle obj, const char* field) {
  if (!nb::isinstance<nb::str>(obj)) {
    nb::object fs = nb::steal(PyOS_FSPath(obj.ptr()));
    if (!fs.is_valid() || !nb::isinstance<nb::str>(fs)) {
      PyErr_Clear();
      throw nb::type_error((std::string(field) + ": expected a str or os.PathLike path, got " + py_type_name(obj))
                               .c_str());
    }
    return nb::cast<std::string>(fs);
  }
  return nb::cast<std::string>(obj);
}

// True on a thread other than Python's main one once the interpreter exits
// (the module's atexit hook ran, or Python is finalizing).
bool exiting_elsewhere() noexcept;
// Blocks the calling thread for good; the process's exit ends it.
[[noreturn]] void park_for_exit() noexcept;
// Threads inside without_gil now (at exit, they hold their objects to the end).
std::atomic<int>& calls_without_gil() noexcept;
// At import: notes Python's main thread and registers the atexit hook.
void watch_for_exit(nb::module_& m);

// Runs `f` with the GIL released when this thread holds it. For every call that
// can block (the CUDA driver, a socket, a disk, another thread), so other
// Python threads run meanwhile. `f` must not touch Python objects.
// A daemon thread coming back while the interpreter exits is parked rather
// than given the GIL back: Python would end it with pthread_exit, whose forced
// unwind cannot pass the C++ frames on its way (this noexcept destructor,
// nanobind's dispatch) and aborts the process ("terminate called without an
// active exception").
template <typename F>
decltype(auto) without_gil(F&& f) {
  if (!PyGILState_Check()) return f();
  struct Reacquire {
    PyThreadState* state;
    ~Reacquire() {
      calls_without_gil().fetch_sub(1);
      if (exiting_elsewhere()) park_for_exit();
      // PyEval_RestoreThread throws no C++ exception: what reaches this catch
      // is the forced unwind of pthread_exit (caught with `...`: it carries no
      // exception object to bind a reference to).
      try {
        PyEval_RestoreThread(state);
      } catch (...) {     // exit began while this thread waited for the GIL
        park_for_exit();  // never returns: the unwind ends here, with the process
      }
    }
  } guard{(calls_without_gil().fetch_add(1), PyEval_SaveThread())};
  return f();
}

// A number of seconds as an argument: a ValueError naming `field` for NaN or
// below 0; at most 10^9 s (larger ones, +inf included, are 10^9 s).
inline std::chrono::nanoseconds seconds_arg(const char* field, double seconds) {
  if (!(seconds >= 0)) throw nb::value_error((std::string(field) + ": must be a number of seconds >= 0").c_str());
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(std::min(seconds, 1e9)));
}

// A timeout argument: nothing (no limit) for None or +inf, else seconds_arg.
inline std::optional<std::chrono::nanoseconds> timeout_arg(const char* field, std::optional<double> seconds) {
  if (!seconds || *seconds == std::numeric_limits<double>::infinity()) return std::nullopt;
  return seconds_arg(field, *seconds);
}

// Polls `step(slice)` (without the GIL) in slices of at most 50 ms until it
// returns true, `stopped()` (with the GIL: another thread closed the object)
// says so, or `timeout` (nothing: no limit) passes, so Ctrl-C (a pending
// signal) ends the wait within a slice. False on timeout or stop.
template <typename Step, typename Stopped>
bool wait_in_slices(std::optional<std::chrono::nanoseconds> timeout, Step step, Stopped stopped) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + timeout.value_or(nanoseconds(0));
  for (;;) {
    nanoseconds slice = milliseconds(50);
    if (timeout) slice = std::max(nanoseconds(0), std::min(slice, duration_cast<nanoseconds>(deadline - steady_clock::now())));
    if (without_gil([&] { return step(slice); })) return true;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (stopped()) return false;
    if (timeout && steady_clock::now() >= deadline) return false;
  }
}

// The same, stopped only by `timeout`.
template <typename Step>
bool wait_in_slices(std::optional<std::chrono::nanoseconds> timeout, Step step) {
  return wait_in_slices(timeout, step, [] { return false; });
}

}  // namespace handoff::py
