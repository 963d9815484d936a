# Dear ImGui from Debian's libimgui-dev as the imported target handoff::imgui
# (headers, libimgui.a with its GLFW and OpenGL3 backends, and libstb, which
# Debian's libimgui.a leaves stb_truetype / stb_rect_pack to: imgui.pc says
# Requires: stb). Included by the build (third_party/CMakeLists.txt, with
# HANDOFF_IMGUI_SCOPE GLOBAL) and by the installed package (handoffConfig.cmake:
# libhandoff_view.a links it), so both find it the same way. Needs the glfw and
# OpenGL::OpenGL targets. Sets HANDOFF_IMGUI_FOUND.
set(HANDOFF_IMGUI_FOUND TRUE)
if(NOT TARGET handoff::imgui)
  find_path(HANDOFF_IMGUI_INCLUDE imgui.h PATH_SUFFIXES imgui)
  find_library(HANDOFF_IMGUI_LIB NAMES libimgui.a imgui)
  find_library(HANDOFF_STB_LIB NAMES stb)
  if(HANDOFF_IMGUI_INCLUDE AND HANDOFF_IMGUI_LIB AND HANDOFF_STB_LIB)
    add_library(handoff::imgui INTERFACE IMPORTED ${HANDOFF_IMGUI_SCOPE})
    set_target_properties(handoff::imgui PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${HANDOFF_IMGUI_INCLUDE};${HANDOFF_IMGUI_INCLUDE}/backends"
      INTERFACE_LINK_LIBRARIES "${HANDOFF_IMGUI_LIB};${HANDOFF_STB_LIB};glfw;OpenGL::OpenGL;${CMAKE_DL_LIBS}")
  else()
    set(HANDOFF_IMGUI_FOUND FALSE)
  endif()
endif()
