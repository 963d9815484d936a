# Test support shared by every tier; included once by tests/CMakeLists.txt.
#   HANDOFF_TEST_SUPPORT_DIR   tests/support (tsan.supp; the headers come with handoff_test_support)
#   handoff_tsan_env(<var> [SUPPRESSIONS <file>...])
set(HANDOFF_TEST_SUPPORT_DIR ${PROJECT_SOURCE_DIR}/tests/support)

# Sets <var> to the TSAN_OPTIONS entry a test's environment needs under the
# tsan preset, and to nothing otherwise. The suppressions are the shared
# third-party ones (tests/support/tsan.supp) plus the given files, joined into
# one file in the build tree: TSan reads a single suppressions file.
function(handoff_tsan_env var)
  cmake_parse_arguments(A "" "" "SUPPRESSIONS" ${ARGN})
  if(NOT "thread" IN_LIST HANDOFF_SANITIZE)
    set(${var} "" PARENT_SCOPE)
    return()
  endif()
  set(files ${HANDOFF_TEST_SUPPORT_DIR}/tsan.supp ${A_SUPPRESSIONS})
  set(text "")
  set(stem tsan)
  foreach(f ${files})
    file(READ ${f} part)
    string(APPEND text "# --- ${f}\n${part}\n")
    get_filename_component(n ${f} NAME_WE)
    if(NOT f STREQUAL "${HANDOFF_TEST_SUPPORT_DIR}/tsan.supp")
      string(APPEND stem "+${n}")
    endif()
  endforeach()
  set(out ${PROJECT_BINARY_DIR}/tests/tsan/${stem}.supp)
  file(WRITE ${out} "${text}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files})
  set(${var} "TSAN_OPTIONS=suppressions=${out} halt_on_error=1 second_deadlock_stack=1" PARENT_SCOPE)
endfunction()
