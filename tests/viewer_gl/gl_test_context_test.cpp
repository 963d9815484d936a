// The GL test fixture itself: the debug context it makes reports a GL error
// through KHR_debug, so GlTest really fails tests that raise one.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "gl_test_context.hpp"

namespace handoff::view::test {
namespace {

TEST(GlTestContext, CollectsKhrDebugErrors) {
  GlTestContext ctx;
  ASSERT_TRUE(ctx.error().empty()) << ctx.error();
  EXPECT_EQ(ctx.messages().count(), 0u);
  glBindTexture(GL_TEXTURE_2D, 0x7fffffffu);  // not a texture name: GL_INVALID_OPERATION
  while (glGetError() != GL_NO_ERROR) {
  }
  const auto errors = ctx.messages().messages();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors.front().find("ERROR"), std::string::npos) << errors.front();
  EXPECT_NONFATAL_FAILURE(ctx.messages().fail_on_any("the fixture's check"), "the fixture's check: GL: ");
  EXPECT_EQ(ctx.messages().count(), 0u);
}

}  // namespace
}  // namespace handoff::view::test
