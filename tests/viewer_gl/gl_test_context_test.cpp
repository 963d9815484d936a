// The GL test fixture itself: the debug context it makes reports a GL error
// through KHR_debug, so GlTest really fails tests that raise one.
#include <gtest/gtest.h>

#include "gl_test_context.hpp"

namespace handoff::viewer::test {
namespace {

TEST(GlTestContext, CollectsKhrDebugErrors) {
  GlTestContext ctx;
  ASSERT_TRUE(ctx.error().empty()) << ctx.error();
  EXPECT_TRUE(ctx.take_errors().empty());
  glBindTexture(GL_TEXTURE_2D, 0x7fffffffu);  // not a texture name: GL_INVALID_OPERATION
  while (glGetError() != GL_NO_ERROR) {
  }
  const auto errors = ctx.take_errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors.front().find("ERROR"), std::string::npos) << errors.front();
}

}  // namespace
}  // namespace handoff::viewer::test
