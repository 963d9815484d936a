#include "imgui_lock.hpp"

namespace handoff::view {

std::unique_lock<std::recursive_mutex> imgui_lock() {
  static std::recursive_mutex mutex;
  return std::unique_lock<std::recursive_mutex>(mutex);
}

}  // namespace handoff::view
