#pragma once
// Several streams side by side (docs/viewer.md "Several streams"): where each
// tile goes in a view, and drawing the tiles there. Each tile is a
// ViewerState of its own (feed, renderer, overlays, layers); this draws them
// into one framebuffer. The layout is pure maths (any thread); TileGrid needs
// the display's GL context current.
#include <glad/gl.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "frame_target.hpp"
#include "view_transform.hpp"
#include "viewer_state.hpp"

struct ImDrawList;

namespace handoff::view {

struct GridShape {
  int cols = 1, rows = 1;
  bool operator==(const GridShape&) const = default;
};

// The columns and rows that show `count` tiles of `tile_w` x `tile_h` largest
// in an `area_w` x `area_h` view (fewest empty cells on a tie).
GridShape grid_shape(std::size_t count, double tile_w, double tile_h, double area_w, double area_h);

// Cell `index` of `shape` in an `area_w` x `area_h` view, in pixels, top-left
// origin (row-major; the last column and row take the remainder).
struct CellRect {
  int x = 0, y = 0, w = 0, h = 0;
};
CellRect grid_cell(const GridShape& shape, std::size_t index, int area_w, int area_h);
// The cell of the first `count` of `shape` holding view point (x, y); -1: none.
int tile_at(const GridShape& shape, std::size_t count, int area_w, int area_h, double x, double y);

// A tile's frame fitted into its cell, in the view's pixels.
ViewTransform tile_view(const ViewerState& tile, const CellRect& cell);

// The size the composed frame is drawn at (--output, SnapshotKind::Frame):
// every cell the largest tile's size, the shape for a view of `aspect_w` x `aspect_h`.
struct ComposedSize {
  GridShape shape;
  int width = 0, height = 0;
};
ComposedSize composed_size(const std::vector<ViewerState*>& tiles, int aspect_w, int aspect_h);

class TileGrid {
 public:
  // Draws each tile fitted into its cell of `shape` over a `width` x `height`
  // framebuffer `dest` (0: the default one), the gaps cleared. Each tile is
  // drawn into a target of its cell's size, then copied there.
  void draw(const std::vector<ViewerState*>& tiles, const GridShape& shape, int width, int height, GLuint dest);
  // Each tile's overlays into `list`, clipped to its cell; `px_scale`:
  // framebuffer pixels per unit of `list` (a window's HiDPI factor).
  static void draw_overlays(const std::vector<ViewerState*>& tiles, const GridShape& shape, int width, int height,
                            ImDrawList& list, double px_scale = 1.0);
  void release() noexcept { targets_.clear(); }

 private:
  std::vector<std::unique_ptr<FrameTarget>> targets_;
};

}  // namespace handoff::view
