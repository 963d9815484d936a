#pragma once
// Dear ImGui keeps its current context in one process-wide variable
// (ImGui::SetCurrentContext), so two threads drawing with ImGui at once (two
// headless viewers, a headless viewer and the GLFW thread) would race on it
// and draw into each other's contexts. Every use of ImGui in the viewer holds
// this lock, from making its context current to rendering its draw data.
// Recursive: a holder may start an offscreen ImGui frame of its own.
#include <mutex>

namespace handoff::view {

// The lock; its mutex lives as long as the process (ImGui's global does too).
std::unique_lock<std::recursive_mutex> imgui_lock();

}  // namespace handoff::view
