#include "tile_grid.hpp"

#include <algorithm>

#include <imgui.h>

namespace handoff::view {

GridShape grid_shape(std::size_t count, double tile_w, double tile_h, double area_w, double area_h) {
  GridShape best;
  if (count <= 1 || tile_w <= 0 || tile_h <= 0 || area_w <= 0 || area_h <= 0) return best;
  double best_scale = -1;
  std::size_t best_empty = 0;
  for (std::size_t cols = 1; cols <= count; ++cols) {
    const std::size_t rows = (count + cols - 1) / cols;
    const double scale = std::min(area_w / double(cols) / tile_w, area_h / double(rows) / tile_h);
    const std::size_t empty = cols * rows - count;
    // A larger tile wins; 1e-9: equal scales prefer fewer empty cells.
    if (scale > best_scale + 1e-9 || (scale > best_scale - 1e-9 && empty < best_empty)) {
      best = GridShape{int(cols), int(rows)};
      best_scale = scale;
      best_empty = empty;
    }
  }
  return best;
}

CellRect grid_cell(const GridShape& shape, std::size_t index, int area_w, int area_h) {
  const int col = int(index % std::size_t(shape.cols)), row = int(index / std::size_t(shape.cols));
  const int cw = area_w / shape.cols, ch = area_h / shape.rows;
  CellRect c{col * cw, row * ch, cw, ch};
  if (col == shape.cols - 1) c.w = area_w - c.x;
  if (row == shape.rows - 1) c.h = area_h - c.y;
  return c;
}

int tile_at(const GridShape& shape, std::size_t count, int area_w, int area_h, double x, double y) {
  for (std::size_t i = 0; i < count; ++i) {
    const CellRect r = grid_cell(shape, i, area_w, area_h);
    if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) return int(i);
  }
  return -1;
}

ViewTransform tile_view(const ViewerState& tile, const CellRect& cell) {
  ViewTransform v = fit_view(tile.info().width, tile.info().height, cell.w, cell.h);
  v.offset_x += cell.x;
  v.offset_y += cell.y;
  return v;
}

ComposedSize composed_size(const std::vector<ViewerState*>& tiles, int aspect_w, int aspect_h) {
  ComposedSize out;
  std::uint32_t w = 0, h = 0;
  for (const ViewerState* t : tiles) {
    w = std::max(w, t->info().width);
    h = std::max(h, t->info().height);
  }
  if (w == 0 || h == 0) return out;
  out.shape = grid_shape(tiles.size(), w, h, aspect_w, aspect_h);
  out.width = out.shape.cols * int(w);
  out.height = out.shape.rows * int(h);
  return out;
}

void TileGrid::draw(const std::vector<ViewerState*>& tiles, const GridShape& shape, int width, int height,
                    GLuint dest) {
  const float bg[4] = {0.08f, 0.08f, 0.09f, 1.0f};
  glBindFramebuffer(GL_FRAMEBUFFER, dest);
  glViewport(0, 0, width, height);
  glClearColor(bg[0], bg[1], bg[2], bg[3]);
  glClear(GL_COLOR_BUFFER_BIT);
  while (targets_.size() < tiles.size()) targets_.push_back(std::make_unique<FrameTarget>());
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    ViewerState& tile = *tiles[i];
    const CellRect cell = grid_cell(shape, i, width, height);
    if (cell.w <= 0 || cell.h <= 0 || !tile.has_frame() || tile.absent()) continue;
    FrameTarget& target = *targets_[i];
    target.resize(cell.w, cell.h);
    target.bind();
    tile.draw_frame(fit_view(tile.info().width, tile.info().height, cell.w, cell.h), cell.w, cell.h);
    // GL's origin is the bottom-left corner.
    glBlitNamedFramebuffer(target.framebuffer(), dest, 0, 0, cell.w, cell.h, cell.x, height - cell.y - cell.h,
                           cell.x + cell.w, height - cell.y, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  }
  glBindFramebuffer(GL_FRAMEBUFFER, dest);
  glViewport(0, 0, width, height);
}

void TileGrid::draw_overlays(const std::vector<ViewerState*>& tiles, const GridShape& shape, int width, int height,
                             ImDrawList& list, double px_scale) {
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    ViewerState& tile = *tiles[i];
    if (!tile.has_frame() || tile.absent()) continue;
    const CellRect cell = grid_cell(shape, i, width, height);
    ViewTransform v = tile_view(tile, cell);
    v.scale /= px_scale;
    v.offset_x /= px_scale;
    v.offset_y /= px_scale;
    const double s = 1.0 / px_scale;
    const media::RectF r{float(cell.x * s), float(cell.y * s), float(cell.w * s), float(cell.h * s)};
    // A box on a tile's edge (its line's width) stays out of its neighbour.
    list.PushClipRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), true);
    tile.draw_overlays_into(list, v, r);
    list.PopClipRect();
  }
}

}  // namespace handoff::view
