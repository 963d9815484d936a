#include "imgui_offscreen.hpp"

#include "imgui_lock.hpp"

#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <handoff/error.hpp>

namespace handoff::view {

ImGuiOffscreen::ImGuiOffscreen() {
  auto lock = imgui_lock();
  ImGuiContext* prev = ImGui::GetCurrentContext();
  context_ = ImGui::CreateContext();
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.LogFilename = nullptr;
  ImGui::StyleColorsDark();
  const bool ok = ImGui_ImplOpenGL3_Init("#version 410 core");
  if (!ok) {
    ImGui::DestroyContext(context_);
    ImGui::SetCurrentContext(prev);
    throw Error(Api::Gl, "ImGui_ImplOpenGL3_Init", 0, "", "the ImGui OpenGL3 backend did not start",
                HANDOFF_WHERE);
  }
  ImGui::SetCurrentContext(prev);
}

ImGuiOffscreen::~ImGuiOffscreen() {
  auto lock = imgui_lock();
  ImGuiContext* prev = ImGui::GetCurrentContext();
  ImGui::SetCurrentContext(context_);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext(context_);
  ImGui::SetCurrentContext(prev == context_ ? nullptr : prev);
}

void ImGuiOffscreen::begin(int width, int height, float delta_seconds) {
  lock_ = imgui_lock();
  previous_ = ImGui::GetCurrentContext();
  ImGui::SetCurrentContext(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
  io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
  io.DeltaTime = delta_seconds > 0 ? delta_seconds : 1.0f / 60.0f;
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
}

ImDrawList& ImGuiOffscreen::background() { return *ImGui::GetBackgroundDrawList(); }

void ImGuiOffscreen::end() {
  ImGui::Render();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  ImGui::SetCurrentContext(previous_);
  previous_ = nullptr;
  lock_ = {};
}

}  // namespace handoff::view

namespace handoff::view {

void ImGuiOffscreen::discard() {
  ImGui::EndFrame();
  ImGui::SetCurrentContext(previous_);
  previous_ = nullptr;
  lock_ = {};
}

}  // namespace handoff::view
