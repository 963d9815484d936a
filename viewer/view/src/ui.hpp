#pragma once
// The Dear ImGui panels of handoff-view: playback, colour overrides, overlay
// controls, stats, pixel inspector and the keyboard help. Draws into the
// current ImGui context, between NewFrame and Render. Render thread only.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "viewer_state.hpp"

namespace handoff::view {

struct UiState {
  bool show_help = false;
  bool show_panel = true;
  PixelProbe probe;              // under the cursor, filled by the caller
  ViewerState* probe_tile = nullptr;  // a grid: the tile probed (its layers too); null: the viewer's one stream
  std::string probe_tile_name;   // and its name as the tile lines give it ("2 /cam1")
  ViewTransform view;            // current view (for the zoom readout)
  std::string status;            // one-line notice (e.g. "headless", "screenshot written")
  std::string title;             // the panel's title (the viewer's)
  bool fit_requested = false;    // buttons set these; the window loop applies them
  bool actual_size_requested = false;
  int step = 0;                  // -1 / +1: a Step button was pressed (the display applies it)
  std::int64_t seek = -1;        // the timeline slider moved to this frame (the display applies it)
  bool toggle_play = false;      // the Play / Pause button was pressed (the display applies it)
  // A grid: a line per tile (topic, timestamp, offset from the clock tile).
  std::vector<std::string> tiles;
};

void draw_ui(ViewerState& viewer, UiState& ui);

// Where the panel drew each layer control, on screen (x0, y0, x1, y1), by
// name: "layer 0" (its toggle), "layer 0 opacity" (the slider's frame), "layer 0 legend" (the
// legend's tree node), "layer 0 id 2" (a class's toggle), "layer 0 all
// classes". Tests drive the controls with the mouse through these.
using ControlRects = std::map<std::string, std::array<float, 4>>;
// The panel's Layers section: a toggle and an opacity slider per layer, a
// class map's legend (a toggle per class), a scalar map's colour bar and
// range. `drawn`, when given, receives the controls' rectangles.
void draw_layer_controls(LayerRenderer& layers, ControlRects* drawn = nullptr);

}  // namespace handoff::view
