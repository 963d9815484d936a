# cmake -DBUILD_DIR=<handoff build> -DWORK_DIR=<scratch> -DCONSUMER=<tests/install/consumer>
#       -DLIBDIR=<CMAKE_INSTALL_LIBDIR> -DGENERATOR=<cmake generator> -DCXX=<compiler>
#       [-DLAUNCHER=<compiler launcher>] -DMAKE=<make> -P install_test.cmake
# What a C++ user of handoff meets: `cmake --install` into a prefix, which is
# then moved (the package must not remember where it was installed), the
# consumer project built against it through find_package(handoff) and through
# pkg-config, and everything built run.
cmake_minimum_required(VERSION 3.25)
foreach(v BUILD_DIR WORK_DIR CONSUMER LIBDIR GENERATOR CXX MAKE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_test.cmake: -D${v}=... missing")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT COMMAND_ERROR_IS_FATAL ANY)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(staging ${WORK_DIR}/staging)
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staging})
file(RENAME ${staging} ${prefix})

# The layout a user reads about (docs/building.md), and nothing of the Python
# module: that is pip's (component python only).
foreach(f bin/handoff-view bin/handoff-info
          ${LIBDIR}/libhandoff_interop.a ${LIBDIR}/libhandoff_media.a ${LIBDIR}/libhandoff_view.a
          ${LIBDIR}/libhandoff_live.a
          ${LIBDIR}/cmake/handoff/handoffConfig.cmake ${LIBDIR}/pkgconfig/handoff.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
if(EXISTS ${prefix}/handoff)
  message(FATAL_ERROR "cmake --install installed the Python module at ${prefix}/handoff")
endif()

# No test hooks among the headers a user gets: they are the tests' own
# (tests/support/interop_testing.hpp, handoff_interop_testing).
file(GLOB_RECURSE headers ${prefix}/include/*.hpp)
foreach(h ${headers})
  file(RELATIVE_PATH name ${prefix} ${h})
  file(STRINGS ${h} hooks REGEX "testing")
  if(name MATCHES "testing" OR hooks)
    message(FATAL_ERROR "cmake --install installed a test hook: ${name}: ${hooks}")
  endif()
endforeach()

# The installed headers are exactly the documented ones: the list between the
# "installed headers" markers of docs/building.md. A private header installed
# by accident, or a public one left out, fails here. (The consumer project
# below compiles each installed header on its own.)
get_filename_component(source_dir ${CONSUMER}/../../.. ABSOLUTE)
file(READ ${source_dir}/docs/building.md building)
string(REGEX MATCH "<!-- installed headers: begin -->.*<!-- installed headers: end -->" documented_block "${building}")
if(NOT documented_block)
  message(FATAL_ERROR "docs/building.md has no <!-- installed headers: begin / end --> list")
endif()
string(REGEX MATCHALL "handoff/[a-z0-9_/]+\\.hpp" documented "${documented_block}")
file(GLOB_RECURSE installed RELATIVE ${prefix}/include LIST_DIRECTORIES false ${prefix}/include/*)
if(NOT documented OR NOT installed)
  message(FATAL_ERROR "no headers documented (docs/building.md) or none installed (${prefix}/include)")
endif()
list(SORT documented)
list(REMOVE_DUPLICATES documented)
list(SORT installed)
set(extra ${installed})
list(REMOVE_ITEM extra ${documented})
set(missing ${documented})
list(REMOVE_ITEM missing ${installed})
if(extra OR missing)
  string(REPLACE ";" " " extra "${extra}")
  string(REPLACE ";" " " missing "${missing}")
  message(FATAL_ERROR "the installed headers are not the documented ones (docs/building.md, \"The installed headers\"):\n"
                      "  installed, not documented: ${extra}\n  documented, not installed: ${missing}")
endif()
list(LENGTH installed installed_count)
message(STATUS "install test: ${installed_count} installed headers, each documented")

file(GLOB package_files ${prefix}/${LIBDIR}/cmake/handoff/*.cmake ${prefix}/${LIBDIR}/pkgconfig/handoff.pc)
foreach(f ${package_files})
  file(READ ${f} text)
  foreach(tree ${staging} ${BUILD_DIR} ${source_dir})
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${f} names ${tree}: the installed package must not refer to where it was built")
    endif()
  endforeach()
endforeach()

# find_package(handoff CONFIG REQUIRED)
set(launcher)
if(LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${CONSUMER} -B ${WORK_DIR}/cmake -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} ${launcher} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake)
run(${WORK_DIR}/cmake/consumer)
run(${WORK_DIR}/cmake/consumer_media)
run(${WORK_DIR}/cmake/consumer_viewer_live)

# pkg-config
file(MAKE_DIRECTORY ${WORK_DIR}/pkgconfig)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig CXX=${CXX}
    ${MAKE} -C ${WORK_DIR}/pkgconfig -f ${CONSUMER}/Makefile)
run(${WORK_DIR}/pkgconfig/consumer_pkgconfig)

# The installed tools start.
run(${prefix}/bin/handoff-view --help)
run(${prefix}/bin/handoff-info)
message(STATUS "install test: the installed handoff builds and runs its consumers")
