#include "headless_gl.hpp"

#include <exception>

namespace handoff::test {

HeadlessGl::HeadlessGl() {
  try {
    HeadlessContextOptions o;
    o.debug = true;
    context_ = create_headless_context(o);
    context_->make_current();
    load_gl(*context_);
  } catch (const std::exception& e) {
    error_ = e.what();
    return;
  }
  if (!enable_gl_debug_output(&sink_)) error_ = "the headless context has no KHR_debug";
}

HeadlessGl::~HeadlessGl() {
  if (!context_) return;
  disable_gl_debug_output();
  context_->done_current();
}

void HeadlessGlTest::SetUp() {
  ctx_ = std::make_unique<HeadlessGl>();
  ASSERT_TRUE(ctx_->error().empty()) << "headless GL context: " << ctx_->error();
}

void HeadlessGlTest::TearDown() {
  ctx_->messages().fail_on_any("KHR_debug error");
  ctx_.reset();
}

}  // namespace handoff::test
