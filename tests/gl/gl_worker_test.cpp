// GlWorker on a headless llvmpipe context: routing, values and exceptions,
// inline calls, ordering, shutdown, errors in posted calls, GL debug errors.
#include <glad/gl.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <handoff/gl_check.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>

#include "gl_fixture.hpp"
#include "interop_testing.hpp"
#include "log_capture.hpp"
#include "wait_support.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace handoff {
namespace {

using test::GlWorkerFixture;

using namespace std::chrono_literals;
using test::LogCapture;
using test::ScopedWaitLimit;
using test::wait_until;

// An application-style context (wrap_context around a headless EGL one) whose
// destruction is counted once the EGL context itself is gone.
std::unique_ptr<GlContext> counted_context(std::atomic<int>& destroyed, bool debug = true) {
  HeadlessContextOptions h;
  h.debug = debug;
  auto inner = std::shared_ptr<GlContext>(create_headless_context(h).release(), [&destroyed](GlContext* c) {
    delete c;
    destroyed++;
  });
  ExternalContext c;
  c.make_current = [inner] { inner->make_current(); };
  c.done_current = [inner] { inner->done_current(); };
  c.get_proc_address = [inner](const char* n) { return inner->get_proc_address(n); };
  c.description = "counted test context";
  return wrap_context(std::move(c));
}

TEST_F(GlWorkerFixture, ContextIsGl45CoreWithDebugOutput) {
  const GlInfo& info = worker().info();
  EXPECT_FALSE(info.renderer.empty());
  EXPECT_NE(info.version.find("4.5"), std::string::npos) << info.version;
  EXPECT_TRUE(info.debug_context);
  EXPECT_TRUE(info.khr_debug);
  GLint profile = worker().run([] {
    GLint p = 0;
    glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &p);
    return p;
  });
  EXPECT_TRUE(profile & GL_CONTEXT_CORE_PROFILE_BIT);
  if (info.memory_object) {
    ASSERT_TRUE(info.device_uuid.has_value());
    EXPECT_EQ(to_string(*info.device_uuid).size(), 36u);
  }
}

TEST_F(GlWorkerFixture, EightThreadsCallingAtOnceAllRunOnTheWorker) {
  const auto worker_id = worker().run([] { return std::this_thread::get_id(); });
  EXPECT_NE(worker_id, std::this_thread::get_id());
  constexpr int kThreads = 8, kCalls = 300;
  std::atomic<int> off_worker{0}, ran{0}, gl_missing{0};
  std::set<std::thread::id> seen;
  std::mutex seen_mutex;
  std::vector<std::thread> threads;
  std::promise<void> go;
  std::shared_future<void> start = go.get_future().share();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.wait();
      for (int i = 0; i < kCalls; ++i) {
        int v = worker().run([&, i] {
          if (!worker().on_worker()) off_worker++;
          GLint n = -1;
          glGetIntegerv(GL_NUM_EXTENSIONS, &n);  // needs the context current here
          if (n <= 0) gl_missing++;
          ran++;
          std::lock_guard lock(seen_mutex);
          seen.insert(std::this_thread::get_id());
          return t * kCalls + i;
        });
        EXPECT_EQ(v, t * kCalls + i);
      }
    });
  }
  go.set_value();
  for (auto& th : threads) th.join();
  EXPECT_EQ(ran.load(), kThreads * kCalls);
  EXPECT_EQ(off_worker.load(), 0);
  EXPECT_EQ(gl_missing.load(), 0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(*seen.begin(), worker_id);
  EXPECT_FALSE(worker().on_worker());
}

TEST_F(GlWorkerFixture, RunReturnsValuesAndRethrowsOnTheCaller) {
  EXPECT_EQ(worker().run([] { return 42; }), 42);
  EXPECT_EQ(worker().run([] { return std::string("frame"); }), "frame");
  auto p = worker().run([] { return std::make_unique<int>(7); });  // move-only
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 7);
  int x = 1;
  int& r = worker().run([&]() -> int& { return x; });
  EXPECT_EQ(&r, &x);
  bool ran = false;
  worker().run([&] { ran = true; });
  EXPECT_TRUE(ran);

  EXPECT_THROW(worker().run([]() -> int { throw std::out_of_range("plane 3"); }), std::out_of_range);
  try {
    worker().run([] { throw Error(Api::Gl, "glBufferStorage", 0x505, "GL_OUT_OF_MEMORY", "test"); });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "glBufferStorage");
    EXPECT_EQ(e.code_name(), "GL_OUT_OF_MEMORY");
  }
  // The worker survives exceptions.
  EXPECT_EQ(worker().run([] { return 5; }), 5);
}

TEST_F(GlWorkerFixture, CallsFromTheWorkerRunInline) {
  std::vector<int> order;
  worker().run([&] {
    order.push_back(1);
    int nested = worker().run([&] {
      order.push_back(2);
      return worker().run([] { return 3; });  // two levels, no deadlock
    });
    order.push_back(nested);
    worker().post([&] { order.push_back(5); });  // post queues, even from the worker
    order.push_back(4);
  });
  worker().run([] {});
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST_F(GlWorkerFixture, PostKeepsOrder) {
  std::vector<int> seen;  // touched on the worker only
  for (int i = 0; i < 2000; ++i) worker().post([&seen, i] { seen.push_back(i); });
  auto got = worker().run([&] { return seen; });
  ASSERT_EQ(got.size(), 2000u);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(got[i], i);
}

TEST_F(GlWorkerFixture, ShutdownFailsQueuedCallsWithWorkerStopped) {
  std::promise<void> release_blocker;
  std::shared_future<void> blocker = release_blocker.get_future().share();
  std::atomic<bool> blocking{false};
  worker().post([&] {
    blocking = true;
    blocker.wait();
  });
  ASSERT_TRUE(wait_until([&] { return blocking.load(); }, "the blocking call to start"));

  constexpr int kCallers = 4;
  std::atomic<int> stopped{0}, ran{0}, other{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      try {
        worker().run([&] { ran++; });
      } catch (const WorkerStopped& e) {
        if (std::string(e.what()).find("worker stopped") != std::string::npos) stopped++;
      } catch (...) {
        other++;
      }
    });
  }
  std::atomic<int> posted_ran{0};
  LogCapture capture(LogLevel::Debug);
  wait_until([&] { return testing::queued(worker()) == kCallers; }, "every caller's call to be queued");
  worker().post([&] { posted_ran++; });

  std::thread stopper([&] { worker().shutdown(); });
  wait_until([&] { return worker().stopped(); }, "the worker to stop");
  release_blocker.set_value();
  stopper.join();
  for (auto& c : callers) c.join();

  EXPECT_EQ(stopped.load(), kCallers);
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(posted_ran.load(), 0);
  EXPECT_TRUE(capture.contains("posted call was dropped"));  // not lost silently
  EXPECT_THROW(worker().run([] {}), WorkerStopped);
  EXPECT_THROW(worker().post([] {}), WorkerStopped);
  worker().shutdown();  // idempotent
}

TEST_F(GlWorkerFixture, ExceptionsInPostedCallsAreLoggedAndTheWorkerGoesOn) {
  LogCapture capture(LogLevel::Debug);
  worker().post([] { throw std::runtime_error("posted boom 17"); });
  worker().post([] { throw 3; });
  EXPECT_EQ(worker().run([] { return 1; }), 1);
  EXPECT_TRUE(capture.contains("posted boom 17"));
  EXPECT_TRUE(capture.contains("unknown exception"));
}

TEST_F(GlWorkerFixture, FenceOrdersWorkAndSignals) {
  bool signalled = worker().run([] {
    GLuint b = 0;
    HANDOFF_GL_CHECK(glCreateBuffers(1, &b));
    HANDOFF_GL_CHECK(glNamedBufferStorage(b, 1024, nullptr, GL_DYNAMIC_STORAGE_BIT));
    GlFence f = GlFence::insert();
    f.gpu_wait();
    bool ok = f.client_wait(5'000'000'000ull);
    HANDOFF_GL_CHECK(glDeleteBuffers(1, &b), "fence test");
    return ok;
  });
  EXPECT_TRUE(signalled);
  EXPECT_THROW(GlFence{}.gpu_wait(), UsageError);
}

TEST_F(GlWorkerFixture, GlCheckNamesTheCallAndError) {
  try {
    worker().run([] {
      glGetError();
      GLuint b = 0;
      glCreateBuffers(1, &b);
      glDeleteBuffers(1, &b);
      // Writing to a deleted buffer name: GL_INVALID_OPERATION (and a KHR_debug error).
      HANDOFF_GL_CHECK(glNamedBufferSubData(b, 0, 4, "abcd"));
    });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Api::Gl);
    EXPECT_EQ(e.call(), "glNamedBufferSubData");
    EXPECT_EQ(e.code_name(), "GL_INVALID_OPERATION");
  }
  // That error was on purpose: the fixture must not fail the test for it.
  EXPECT_FALSE(gl_errors().messages().empty());
  gl_errors().clear();
}

TEST(GlWorker, DebugErrorMessagesCanBeMadeFatal) {
  test::DebugMessages errors;
  GlWorkerOptions o = test::debug_worker_options(errors);
  GlWorker w(o);
  testing::throw_on_gl_errors(w);
  try {
    w.run([] { glBindBuffer(0x1234, 0); });  // invalid target
    FAIL() << "a KHR_debug error did not fail the call";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Api::Gl);
    EXPECT_EQ(e.call(), "KHR_debug");
    EXPECT_NE(std::string(e.what()).find("ERROR"), std::string::npos);
  }
  w.run([] { glGetError(); });         // clean calls pass again
  EXPECT_EQ(testing::gl_error_count(w), 1u);
  EXPECT_EQ(errors.messages().size(), 1u);
}

TEST(GlWorker, TheErrorCollectorFailsATestOnAKhrDebugError) {
  test::DebugMessages errors;
  GlWorker w(test::debug_worker_options(errors));
  w.run([] {});
  EXPECT_TRUE(errors.messages().empty());
  w.run([] { glBindBuffer(0x1234, 0); });  // GL_INVALID_ENUM
  w.shutdown();
  EXPECT_NONFATAL_FAILURE(errors.fail_on_any("collector test"), "collector test: GL: ");
  EXPECT_TRUE(errors.messages().empty());
}

TEST(GlWorker, ContextCreationFailureIsRethrownByTheConstructor) {
  GlWorkerOptions o;
  o.context_factory = []() -> std::unique_ptr<GlContext> {
    throw Error(Api::Egl, "eglCreateContext", 0x3009, "EGL_BAD_MATCH", "test");
  };
  try {
    GlWorker w(o);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "eglCreateContext");
  }
  o.context_factory = [] { return std::unique_ptr<GlContext>(); };
  EXPECT_THROW(GlWorker{o}, UsageError);
}

TEST(GlWorker, RunsOnAnApplicationContext) {
  // The viewer passes a hidden GLFW window; here an EGL context stands in for it.
  std::atomic<int> made_current{0}, destroyed{0};
  test::DebugMessages errors;
  GlWorkerOptions o = test::debug_worker_options(errors);
  o.context_factory = [&] {
    HeadlessContextOptions h;
    h.debug = true;
    auto inner = std::shared_ptr<GlContext>(create_headless_context(h));
    ExternalContext c;
    c.make_current = [inner, &made_current] {
      inner->make_current();
      made_current++;
    };
    c.done_current = [inner] { inner->done_current(); };
    c.get_proc_address = [inner](const char* n) { return inner->get_proc_address(n); };
    c.destroy = [&destroyed] { destroyed++; };
    c.description = "test application context";
    return wrap_context(std::move(c));
  };
  {
    GlWorker w(o);
    EXPECT_EQ(w.info().platform, "test application context");
    EXPECT_EQ(w.run([] { return glGetString(GL_VERSION) != nullptr; }), true);
    EXPECT_EQ(made_current.load(), 1);
    EXPECT_TRUE(w.info().debug_context);
  }
  EXPECT_EQ(destroyed.load(), 1);
  errors.fail_on_any("KHR_debug error");
  EXPECT_THROW(wrap_context(ExternalContext{}), UsageError);
}

TEST(GlWorker, TwoWorkersLiveSideBySide) {
  test::DebugMessages errors;
  GlWorker a(test::debug_worker_options(errors, "gl-a")), b(test::debug_worker_options(errors, "gl-b"));
  auto ta = a.run([] { return std::this_thread::get_id(); });
  auto tb = b.run([] { return std::this_thread::get_id(); });
  EXPECT_NE(ta, tb);
  a.shutdown();
  // b's display must survive a's teardown.
  EXPECT_NE(b.run([] { return glGetString(GL_RENDERER); }), nullptr);
  b.shutdown();
  errors.fail_on_any("KHR_debug error");
}

// A run() call that outlives the wait limit: its caller gets WaitTimeout naming
// the worker and what it waited for; a call queued behind it is withdrawn
// unrun; the stuck call finishes later on the worker, which drops its result
// (nothing is written into the callers' frames, which are gone by then).
// A call stuck on the worker past the limit: another caller's call, queued
// behind it, is withdrawn with a WaitTimeout naming what the worker is busy
// with and never runs; the stuck call's own caller waits for it (it runs on
// that caller's stack), with a warning, and gets its result when it returns.
TEST_F(GlWorkerFixture, ACallQueuedBehindAStuckCallTimesOutAndTheStuckCallsCallerWaitsForIt) {
  LogCapture capture(LogLevel::Debug);
  std::atomic<bool> entered{false}, release{false}, queued_ran{false};
  int result = 0;
  std::thread stuck_caller;
  {
    ScopedWaitLimit limit(100ms);
    stuck_caller = std::thread([&] {
      result = worker().run([&] {
        entered = true;
        wait_until([&] { return release.load(); }, "the test to release the stuck call");
        return 7;
      });
    });
    ASSERT_TRUE(wait_until([&] { return entered.load(); }, "the stuck call to start"));
    try {
      worker().run([&] { queued_ran = true; });
      ADD_FAILURE() << "no WaitTimeout";
    } catch (const WaitTimeout& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("GL worker 'test-gl': run() result"), std::string::npos) << m;
      EXPECT_NE(m.find("had not started"), std::string::npos) << m;
      EXPECT_NE(m.find("busy with a run() call"), std::string::npos) << m;
    }
    EXPECT_EQ(testing::queued(worker()), 0u) << "the timed-out call left the queue";
    EXPECT_TRUE(wait_until([&] { return capture.contains("still running after 100 ms"); }, "the 'still running' warning"))
        << "the stuck call's caller says it keeps waiting";
  }
  release = true;
  stuck_caller.join();
  EXPECT_EQ(result, 7) << "the stuck call's caller got its result";
  EXPECT_EQ(worker().run([] { return 5; }), 5);
  EXPECT_FALSE(queued_ran.load()) << "a withdrawn call must never run";
  EXPECT_TRUE(worker().run([] { return glGetString(GL_VERSION) != nullptr; }));
}

// The calling thread's id, and whether the thread of that id still runs in
// this process (/proc/self/task/<tid>).
pid_t this_thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }
bool thread_alive(pid_t tid) { return std::filesystem::exists("/proc/self/task/" + std::to_string(tid)); }

// shutdown() of a worker stuck in a call returns after the wait limit, says so
// in the log, and leaves the thread to finish; when the call returns, the
// worker drains, releases and destroys its context on its own, and its thread
// ends (waited for: a thread still exiting when the process does holds
// per-thread buffers, e.g. dlerror's, that LeakSanitizer reports).
TEST(GlWorker, ShuttingDownAStuckWorkerIsBoundedAndTheWorkerCleansUpLater) {
  test::DebugMessages errors;
  std::atomic<int> destroyed{0};
  GlWorkerOptions o = test::debug_worker_options(errors, "stuck-gl");
  o.context_factory = [&] { return counted_context(destroyed); };
  auto w = std::make_unique<GlWorker>(o);
  std::atomic<bool> entered{false}, release{false};
  std::atomic<pid_t> worker_thread{0};
  w->post([&] {
    worker_thread = this_thread_id();
    entered = true;
    wait_until([&] { return release.load(); }, "the test to release the stuck call");
  });
  ASSERT_TRUE(wait_until([&] { return entered.load(); }, "the stuck call to start"));
  LogCapture capture(LogLevel::Debug);
  {
    ScopedWaitLimit limit(100ms);
    w->shutdown();
  }
  EXPECT_TRUE(w->stopped());
  EXPECT_TRUE(capture.contains("GL worker 'stuck-gl': shutdown")) << "the stuck shutdown is not silent";
  EXPECT_EQ(destroyed.load(), 0) << "the context stays while the stuck call runs";
  EXPECT_TRUE(thread_alive(worker_thread.load())) << "the stuck worker's thread runs on";
  w.reset();
  release = true;
  EXPECT_TRUE(wait_until([&] { return destroyed.load() == 1; }, "the worker's context to be destroyed")) << "the worker never finished";
  EXPECT_TRUE(wait_until([&] { return !thread_alive(worker_thread.load()); }, "the worker's thread to end"));
  errors.fail_on_any("KHR_debug error");
}

// A context factory that does not return within the limit: the constructor
// throws WaitTimeout; the context made late is destroyed, never used.
TEST(GlWorker, AContextFactoryPastTheWaitLimitIsAWaitTimeout) {
  std::atomic<bool> release{false};
  std::atomic<int> destroyed{0};
  GlWorkerOptions o;
  o.name = "slow-start";
  o.context_factory = [&] {
    wait_until([&] { return release.load(); }, "the test to release the stuck call");
    return counted_context(destroyed, false);
  };
  {
    ScopedWaitLimit limit(100ms);
    try {
      GlWorker w(o);
      ADD_FAILURE() << "no WaitTimeout";
    } catch (const WaitTimeout& e) {
      EXPECT_NE(std::string(e.what()).find("GL worker 'slow-start': context creation"), std::string::npos)
          << e.what();
    }
  }
  release = true;
  EXPECT_TRUE(wait_until([&] { return destroyed.load() == 1; }, "the worker's context to be destroyed"));
}

TEST(GlWorker, WaitUntilFailsTheTestInsteadOfHanging) {
  EXPECT_NONFATAL_FAILURE(wait_until([] { return false; }, "a condition that never holds", 0s),
                          "wait_until: a condition that never holds did not happen within 0 ns");
}

// --- load_gl --------------------------------------------------------------------
// glad's entry points are process-wide, so each scenario runs in a fresh
// process (a death test that must exit 0) where nothing loaded GL before; it
// says on stderr what went wrong.
[[noreturn]] void scenario_failed(const std::string& what) {
  std::fprintf(stderr, "scenario failed: %s\n", what.c_str());
  std::exit(1);
}
void expect_in_scenario(bool ok, const std::string& what) {
  if (!ok) scenario_failed(what);
}

// A driver's entry points are the same for every context (as EGL's are); what
// they answer depends on the context current on the calling thread. These
// stand in for glGetIntegerv / glGetStringi of a driver whose contexts differ:
// while a context from driver_context(true) is current, the memory-object and
// semaphore extensions are hidden.
thread_local bool tl_hide_interop = false;
PFNGLGETINTEGERVPROC g_real_get_integerv = nullptr;
PFNGLGETSTRINGIPROC g_real_get_stringi = nullptr;

std::vector<GLuint> visible_extensions() {
  GLint n = 0;
  g_real_get_integerv(GL_NUM_EXTENSIONS, &n);
  std::vector<GLuint> out;
  for (GLint i = 0; i < n; ++i) {
    const auto* e = reinterpret_cast<const char*>(g_real_get_stringi(GL_EXTENSIONS, GLuint(i)));
    const bool hidden = tl_hide_interop && e &&
                        (std::strncmp(e, "GL_EXT_memory_object", 20) == 0 || std::strncmp(e, "GL_EXT_semaphore", 16) == 0);
    if (!hidden) out.push_back(GLuint(i));
  }
  return out;
}
void GLAD_API_PTR shim_get_integerv(GLenum pname, GLint* v) {
  if (pname == GL_NUM_EXTENSIONS && tl_hide_interop) *v = GLint(visible_extensions().size());
  else g_real_get_integerv(pname, v);
}
const GLubyte* GLAD_API_PTR shim_get_stringi(GLenum name, GLuint i) {
  if (name != GL_EXTENSIONS || !tl_hide_interop) return g_real_get_stringi(name, i);
  const auto visible = visible_extensions();
  return i < visible.size() ? g_real_get_stringi(name, visible[i]) : nullptr;
}

std::unique_ptr<GlContext> driver_context(bool hide_interop) {
  auto inner = std::shared_ptr<GlContext>(create_headless_context());
  g_real_get_integerv = reinterpret_cast<PFNGLGETINTEGERVPROC>(inner->get_proc_address("glGetIntegerv"));
  g_real_get_stringi = reinterpret_cast<PFNGLGETSTRINGIPROC>(inner->get_proc_address("glGetStringi"));
  ExternalContext c;
  c.make_current = [inner, hide_interop] {
    inner->make_current();
    tl_hide_interop = hide_interop;
  };
  c.done_current = [inner] {
    inner->done_current();
    tl_hide_interop = false;
  };
  c.get_proc_address = [inner](const char* n) -> void* {
    if (!std::strcmp(n, "glGetIntegerv")) return reinterpret_cast<void*>(&shim_get_integerv);
    if (!std::strcmp(n, "glGetStringi")) return reinterpret_cast<void*>(&shim_get_stringi);
    return inner->get_proc_address(n);
  };
  c.description = hide_interop ? "context without the interop extensions" : "context with them";
  return wrap_context(std::move(c));
}

// Whether this driver has GL_EXT_memory_object, asked without load_gl (which
// would load glad in the test process before the scenario's fresh one).
bool driver_has_memory_object() {
  auto ctx = create_headless_context();
  ctx->make_current();
  auto get_integerv = reinterpret_cast<PFNGLGETINTEGERVPROC>(ctx->get_proc_address("glGetIntegerv"));
  auto get_stringi = reinterpret_cast<PFNGLGETSTRINGIPROC>(ctx->get_proc_address("glGetStringi"));
  GLint n = 0;
  get_integerv(GL_NUM_EXTENSIONS, &n);
  bool found = false;
  for (GLint i = 0; i < n && !found; ++i)
    found = !std::strcmp(reinterpret_cast<const char*>(get_stringi(GL_EXTENSIONS, GLuint(i))), "GL_EXT_memory_object");
  ctx->done_current();
  return found;
}

void a_failed_load_then_a_good_one() {
  auto ctx = create_headless_context();  // not current: nothing can be loaded from it yet
  try {
    load_gl(*ctx);
    scenario_failed("load_gl without a current context did not throw");
  } catch (const Error& e) {
    expect_in_scenario(std::string(e.what()).find("EGL surfaceless") != std::string::npos,
                       std::string("the error does not name the context: ") + e.what());
  }
  ctx->make_current();
  try {
    load_gl(*ctx);
  } catch (const std::exception& e) {
    scenario_failed(std::string("load_gl after a failed first call: ") + e.what());
  }
  expect_in_scenario(glGetString(GL_VERSION) != nullptr, "glGetString(GL_VERSION) is null after loading");
  ctx->done_current();
}

TEST(LoadGl, AFailedFirstLoadCanBeRetried) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        a_failed_load_then_a_good_one();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

void two_contexts_with_their_own_extensions() {
  auto without = driver_context(true), with = driver_context(false);
  without->make_current();
  load_gl(*without);  // first: glad sees no memory objects, so loads none of their entry points
  expect_in_scenario(!query_gl_info(without->description()).memory_object, "the hiding context shows memory objects");
  expect_in_scenario(glad_glCreateMemoryObjectsEXT == nullptr, "the scenario's premise: no entry point yet");
  without->done_current();

  with->make_current();
  load_gl(*with);
  expect_in_scenario(query_gl_info(with->description()).memory_object, "the second context lacks memory objects");
  expect_in_scenario(glad_glCreateMemoryObjectsEXT != nullptr, "the second context's entry points were not loaded");
  GLuint memory = 0;
  glCreateMemoryObjectsEXT(1, &memory);
  expect_in_scenario(memory != 0 && glIsMemoryObjectEXT(memory), "glCreateMemoryObjectsEXT made no memory object");
  glDeleteMemoryObjectsEXT(1, &memory);
  expect_in_scenario(glGetError() == GL_NO_ERROR, "a GL error");
  with->done_current();

  without->make_current();
  load_gl(*without);  // nothing new there: no reload
  expect_in_scenario(!query_gl_info(without->description()).memory_object, "the first context sees the second's");
  without->done_current();
}

TEST(LoadGl, TwoContextsWithDifferentExtensionsEachSeeTheirOwn) {
  if (!driver_has_memory_object()) GTEST_SKIP() << "this GL driver has no GL_EXT_memory_object to hide";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        two_contexts_with_their_own_extensions();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

#ifdef HANDOFF_DEBUG_AFFINITY
TEST_F(GlWorkerFixture, AffinityAssertFailsOffTheWorker) {
  EXPECT_THROW(worker().assert_on_worker("test"), UsageError);
  EXPECT_NO_THROW(worker().run([&] { worker().assert_on_worker("test"); }));
}
#endif

}  // namespace
}  // namespace handoff
