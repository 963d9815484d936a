# Shared by the GL test tiers: include(${PROJECT_SOURCE_DIR}/tests/support/support.cmake)
# HANDOFF_TEST_SAN_ENV: environment for sanitizer runs (the TSan suppressions
# cover third-party code only: Mesa's llvmpipe threads, the EGL loader).
set(HANDOFF_TEST_SUPPORT_DIR ${PROJECT_SOURCE_DIR}/tests/support)
set(HANDOFF_TEST_SAN_ENV "")
if("thread" IN_LIST HANDOFF_SANITIZE)
  set(HANDOFF_TEST_SAN_ENV
      "TSAN_OPTIONS=suppressions=${HANDOFF_TEST_SUPPORT_DIR}/tsan.supp halt_on_error=1 second_deadlock_stack=1")
endif()
