#pragma once
// The viewer's GL tests run on tests/support's headless debug context
// (handoff::test::HeadlessGl: create_headless_context, KHR_debug errors fail
// the test), under the names they have always used.
#include <glad/gl.h>

#include "headless_gl.hpp"

namespace handoff::view::test {

using GlTestContext = handoff::test::HeadlessGl;
using GlTest = handoff::test::HeadlessGlTest;

}  // namespace handoff::view::test
