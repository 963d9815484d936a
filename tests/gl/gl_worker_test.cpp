// GlWorker on a headless llvmpipe context: routing, values and exceptions,
// inline calls, ordering, shutdown, errors in posted calls, GL debug errors.
#include <glad/gl.h>

#include <handoff/gl_check.hpp>
#include <handoff/gl_worker.hpp>
#include <handoff/log.hpp>

#include "gl_fixture.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace handoff {
namespace {

using test::GlWorkerFixture;

// Restores the default log sink when the test ends.
struct LogCapture {
  LogCapture() {
    set_log_level(LogLevel::Debug);
    set_log_sink([this](LogLevel, std::string_view m) {
      std::lock_guard lock(mutex);
      lines.emplace_back(m);
    });
  }
  ~LogCapture() {
    set_log_sink(nullptr);
    set_log_level(LogLevel::Warning);
  }
  bool contains(std::string_view s) {
    std::lock_guard lock(mutex);
    for (auto& l : lines)
      if (l.find(s) != std::string::npos) return true;
    return false;
  }
  std::mutex mutex;
  std::vector<std::string> lines;
};

void wait_until(const std::function<bool()>& pred) {
  while (!pred()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
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
  wait_until([&] { return blocking.load(); });

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
  LogCapture capture;
  wait_until([&] { return worker().queued() == kCallers; });
  worker().post([&] { posted_ran++; });

  std::thread stopper([&] { worker().shutdown(); });
  wait_until([&] { return worker().stopped(); });
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
  LogCapture capture;
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
  EXPECT_FALSE(gl_errors().errors().empty());
  gl_errors().clear();
}

TEST(GlWorker, DebugErrorMessagesCanBeMadeFatal) {
  test::GlErrorCollector errors;
  GlWorkerOptions o = test::debug_worker_options(errors);
  o.throw_on_gl_error = true;
  GlWorker w(o);
  try {
    w.run([] { glBindBuffer(0x1234, 0); });  // invalid target
    FAIL() << "a KHR_debug error did not fail the call";
  } catch (const Error& e) {
    EXPECT_EQ(e.api(), Api::Gl);
    EXPECT_EQ(e.call(), "KHR_debug");
    EXPECT_NE(std::string(e.what()).find("ERROR"), std::string::npos);
  }
  w.run([] { glGetError(); });         // clean calls pass again
  EXPECT_EQ(w.gl_error_count(), 1u);
  EXPECT_EQ(errors.errors().size(), 1u);
}

TEST(GlWorker, TheErrorCollectorFailsATestOnAKhrDebugError) {
  test::GlErrorCollector errors;
  GlWorker w(test::debug_worker_options(errors));
  w.run([] {});
  EXPECT_TRUE(errors.errors().empty());
  w.run([] { glBindBuffer(0x1234, 0); });  // GL_INVALID_ENUM
  w.shutdown();
  EXPECT_NONFATAL_FAILURE(errors.fail_on_errors("collector test"), "KHR_debug error message");
  EXPECT_TRUE(errors.errors().empty());
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
  test::GlErrorCollector errors;
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
  errors.fail_on_errors();
  EXPECT_THROW(wrap_context(ExternalContext{}), UsageError);
}

TEST(GlWorker, TwoWorkersLiveSideBySide) {
  test::GlErrorCollector errors;
  GlWorker a(test::debug_worker_options(errors, "gl-a")), b(test::debug_worker_options(errors, "gl-b"));
  auto ta = a.run([] { return std::this_thread::get_id(); });
  auto tb = b.run([] { return std::this_thread::get_id(); });
  EXPECT_NE(ta, tb);
  a.shutdown();
  // b's display must survive a's teardown.
  EXPECT_NE(b.run([] { return glGetString(GL_RENDERER); }), nullptr);
  b.shutdown();
  errors.fail_on_errors();
}

#ifdef HANDOFF_DEBUG_AFFINITY
TEST_F(GlWorkerFixture, AffinityAssertFailsOffTheWorker) {
  EXPECT_THROW(worker().assert_on_worker("test"), UsageError);
  EXPECT_NO_THROW(worker().run([&] { worker().assert_on_worker("test"); }));
}
#endif

}  // namespace
}  // namespace handoff
