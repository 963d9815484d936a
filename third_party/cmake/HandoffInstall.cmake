# `cmake --install <build> [--prefix <dir>]`: what a C++ user of handoff gets.
#   include/handoff/**              the public headers (interop, media library, viewer, live): the
#                                   libraries' include/ folders; their private headers live in
#                                   include_internal/ and are not installed. docs/building.md lists
#                                   them, and the install test checks the install against that list.
#   lib/libhandoff_*.a              the static libraries
#   bin/handoff-view, handoff-info  the tools
#   lib/cmake/handoff/              find_package(handoff CONFIG REQUIRED):
#                                   handoff::interop, handoff::media,
#                                   handoff::view (handoff::Viewer), handoff::live
#                                   (Publisher / Subscriber)
#   lib/pkgconfig/handoff.pc        the interop library for pkg-config users
# Components: `dev` (headers, libraries, packages), `bin` (tools). The Python
# module installs only as component `python` (pip install .: pyproject.toml).
# Included from the top-level CMakeLists.txt after every target is defined.
include(CMakePackageConfigHelpers)

set(HANDOFF_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/handoff)

# --- libraries: interop and the libraries it links (static: a consumer links them too)
set(_handoff_libraries handoff_interop handoff_glad handoff_shaders)
set(_handoff_headers ${PROJECT_SOURCE_DIR}/interop/include/)
if(TARGET handoff_media)
  list(APPEND _handoff_libraries handoff_media handoff_media_proto)  # proto: recordings' protobuf messages
  list(APPEND _handoff_headers ${PROJECT_SOURCE_DIR}/media/include/)
endif()
if(TARGET handoff_view)
  # handoff::view links handoff::live (Viewer::attach); both come with the viewer.
  list(APPEND _handoff_libraries handoff_view handoff_live)
  list(APPEND _handoff_headers ${PROJECT_SOURCE_DIR}/viewer/view/include/ ${PROJECT_SOURCE_DIR}/live/include/)
endif()
install(TARGETS ${_handoff_libraries} EXPORT handoffTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${_handoff_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev FILES_MATCHING PATTERN "*.hpp")

# --- tools
foreach(tool handoff-view handoff-info)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bin)
  endif()
endforeach()

# --- CMake package
install(EXPORT handoffTargets NAMESPACE handoff:: DESTINATION ${HANDOFF_INSTALL_CMAKEDIR} COMPONENT dev)
set(HANDOFF_PACKAGE_HAS_VIEWER_CORE OFF)
if(TARGET handoff_media)
  set(HANDOFF_PACKAGE_HAS_VIEWER_CORE ON)
endif()
set(HANDOFF_PACKAGE_HAS_VIEW OFF)
if(TARGET handoff_view)
  set(HANDOFF_PACKAGE_HAS_VIEW ON)
  # handoff::imgui, which libhandoff_view.a links, is found again by the package the way the build found it.
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/HandoffImgui.cmake DESTINATION ${HANDOFF_INSTALL_CMAKEDIR} COMPONENT dev)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/handoffConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/handoffConfig.cmake
  INSTALL_DESTINATION ${HANDOFF_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/handoffConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/handoffConfig.cmake
              ${PROJECT_BINARY_DIR}/package/handoffConfigVersion.cmake
  DESTINATION ${HANDOFF_INSTALL_CMAKEDIR} COMPONENT dev)

# --- pkg-config: relocatable (the prefix is found from the .pc file's own place)
set(_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH HANDOFF_PC_TO_PREFIX /prefix/${_pc_dir} /prefix)
string(REGEX REPLACE "/$" "" HANDOFF_PC_TO_PREFIX "${HANDOFF_PC_TO_PREFIX}")
set(HANDOFF_PC_REQUIRES egl)
set(HANDOFF_PC_CFLAGS "")
if(HANDOFF_WITH_VULKAN)
  string(APPEND HANDOFF_PC_REQUIRES " vulkan")
  string(APPEND HANDOFF_PC_CFLAGS " -DHANDOFF_HAVE_VULKAN=1")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/handoff.pc.in ${PROJECT_BINARY_DIR}/package/handoff.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/handoff.pc DESTINATION ${_pc_dir} COMPONENT dev)
