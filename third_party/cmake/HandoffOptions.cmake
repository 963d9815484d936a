# One interface target carries the project's compile options, so nothing is set
# globally: every handoff target links handoff::build_options privately. The
# installed libraries link $<BUILD_INTERFACE:handoff::build_options>: warnings,
# sanitizers and asserts are this build's choice, not a consumer's.
add_library(handoff_build_options INTERFACE)
add_library(handoff::build_options ALIAS handoff_build_options)
target_compile_options(handoff_build_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wno-unused-parameter>)
if(HANDOFF_SANITIZE)
  list(JOIN HANDOFF_SANITIZE "," _san)
  target_compile_options(handoff_build_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX,C>:-fsanitize=${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all>)
  target_link_options(handoff_build_options INTERFACE -fsanitize=${_san})
endif()
# GL thread-affinity asserts (GlWorker::assert_on_worker): HANDOFF_DEBUG_AFFINITY,
# on in Debug builds and in the sanitizer presets.
if(HANDOFF_DEBUG_AFFINITY)
  target_compile_definitions(handoff_build_options INTERFACE HANDOFF_DEBUG_AFFINITY=1)
endif()
