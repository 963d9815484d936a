# cmake -DREADME=... -DSOURCE=... -P readme_check.cmake
# Fails when README.md no longer shows, word for word, the example that SOURCE
# compiles and runs (between the "README example begins/ends" markers).
file(READ ${SOURCE} src)
file(READ ${README} readme)
string(FIND "${src}" "// --- README example begins ---\n" b)
string(FIND "${src}" "// --- README example ends ---" e)
if(b EQUAL -1 OR e EQUAL -1)
  message(FATAL_ERROR "${SOURCE}: README example markers missing")
endif()
string(LENGTH "// --- README example begins ---\n" m)
math(EXPR b "${b} + ${m}")
math(EXPR n "${e} - ${b}")
string(SUBSTRING "${src}" ${b} ${n} example)
string(FIND "${readme}" "${example}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not show the example of ${SOURCE} as written; copy it again")
endif()
message(STATUS "README example matches ${SOURCE}")
