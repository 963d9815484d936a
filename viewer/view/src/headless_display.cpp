#include "headless_display.hpp"

#include <chrono>

#include <handoff/error.hpp>
#include <handoff/gl_context.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>

#include "frame_renderer.hpp"
#include "shared_contexts.hpp"

namespace handoff::view {

HeadlessDisplay::HeadlessDisplay(DisplayOptions options, std::shared_ptr<DisplayLink> link)
    : Display(std::move(options), std::move(link), true) {
  auto started = std::make_shared<std::promise<void>>();
  std::future<void> ready = started->get_future();
  thread_ = std::thread([this, started] { run(started); });
  const auto limit = wait_limit();
  try {
    if (ready.wait_for(limit) != std::future_status::ready)
      throw WaitTimeout(link_->name + ": the headless display's start (EGL contexts, GL worker)", limit);
    ready.get();
  } catch (...) {
    link_->request_close();
    thread_.join();
    throw;
  }
}

HeadlessDisplay::~HeadlessDisplay() { close(); }

void HeadlessDisplay::close() noexcept {
  link_->request_close();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void HeadlessDisplay::run(const std::shared_ptr<std::promise<void>>& started) noexcept {
  view::SharedContexts contexts;
  bool debug_on = false;
  try {
    contexts = view::make_headless_contexts(options_.gl_debug);
    contexts.render->make_current();
    load_gl(*contexts.render);
    check_view_size();
    if (options_.gl_debug) debug_on = enable_gl_debug_output(&gl_sink_);
    start_worker(std::move(contexts.worker_factory), nullptr);
    started->set_value();
  } catch (...) {
    if (debug_on) disable_gl_debug_output();
    if (contexts.render) contexts.render->done_current();
    started->set_exception(std::current_exception());
    link_->mark_closed(nullptr);
    return;
  }
  loop();
  if (!options_.screenshot.empty()) {
    try {
      write_png_now(options_.screenshot, view_image());
    } catch (const std::exception& e) {
      link_->set_output(0, {options_.screenshot + ": " + e.what()});
    }
  }
  finish();
  release_gl();
  share_.reset();  // the worker stops here unless a ViewerFrame or the ring still holds it
  if (debug_on) disable_gl_debug_output();
  contexts.render->done_current();
  contexts.render.reset();
  link_->mark_closed(error_);
}

void HeadlessDisplay::loop() noexcept {
  while (!link_->close_requested()) {
    try {
      run_tasks();
      const bool fresh = advance(state_ && state_->paced() && state_->playing());
      if (fresh) {
        draw_view();
        displayed();
      }
      serve_snapshots(SnapshotKind::Frame, [&] { return frame_image(); });
      serve_snapshots(SnapshotKind::View, [&] { return view_image(); });
      if (!fresh) link_->idle(std::chrono::milliseconds(20));
    } catch (...) {
      fail(std::current_exception());
    }
  }
}

// The view is a texture (FrameTarget): a size this GL cannot make refuses
// the viewer at construction, not at its first frame (or snapshot).
void HeadlessDisplay::check_view_size() const {
  const std::uint32_t max = view::gl_max_texture_size();
  if (std::uint32_t(options_.width) > max || std::uint32_t(options_.height) > max)
    throw UsageError(link_->name + ": a headless view of " + std::to_string(options_.width) + "x" +
                     std::to_string(options_.height) + " is larger than its GL makes: GL_MAX_TEXTURE_SIZE is " +
                     std::to_string(max) + " (ViewerOptions::width / height)");
}

// The frame fitted into the view with its overlays, like the window shows it
// (without the panel). Nothing reads it back: it is what the benchmarks time.
void HeadlessDisplay::draw_view() {
  using clock = std::chrono::steady_clock;
  const int w = options_.width, h = options_.height;
  if (!view_target_) view_target_ = std::make_unique<view::FrameTarget>();
  if (!view_painter_) view_painter_ = std::make_unique<view::ImGuiOffscreen>();
  const auto t0 = clock::now();
  view_target_->resize(w, h);
  view_target_->bind();
  if (grid()) {
    draw_grid_view(w, h, view_target_->framebuffer());
    view_painter_->begin(w, h);
    draw_grid_overlays(w, h, view_painter_->background(), 1.0);
    view_painter_->end();
    view::FrameTarget::unbind();
    state_->stats().draw_ms.add(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    return;
  }
  const FeedInfo& info = state_->info();
  const view::ViewTransform view = view::fit_view(info.width, info.height, w, h);
  state_->draw_frame(view, w, h);
  const media::OverlayFrame* f = state_->show_overlays ? state_->current_overlays() : nullptr;
  if (f && !f->empty()) {
    view_painter_->begin(w, h);
    state_->draw_overlays_into(view_painter_->background(), view,
                               media::RectF{float(view.offset_x), float(view.offset_y),
                                             float(info.width * view.scale), float(info.height * view.scale)});
    view_painter_->end();
  }
  view::FrameTarget::unbind();
  state_->stats().draw_ms.add(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
}

// The view with the panel drawn offscreen over it (two ImGui frames, so
// auto-sized windows settle).
RgbaImage HeadlessDisplay::view_image() {
  const int w = options_.width, h = options_.height;
  view::FrameTarget shot;
  shot.resize(w, h);
  shot.bind();
  view::ImGuiOffscreen ui;
  ui_.status = "headless (EGL)";
  ui_.show_panel = options_.show_ui;
  view::ViewTransform view{};
  if (state_ && grid()) {
    draw_grid_view(w, h, shot.framebuffer());
  } else if (state_) {
    const FeedInfo& info = state_->info();
    view = view::fit_view(info.width, info.height, w, h);
    state_->draw_frame(view, w, h);
  } else {
    glViewport(0, 0, w, h);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
  }
  ui_.view = view;
  for (int pass = 0; pass < 2; ++pass) {
    ui.begin(w, h);
    if (state_) {
      const FeedInfo& info = state_->info();
      if (grid())
        draw_grid_overlays(w, h, ui.background(), 1.0);
      else
        state_->draw_overlays_into(ui.background(), view,
                                   media::RectF{float(view.offset_x), float(view.offset_y),
                                                 float(info.width * view.scale), float(info.height * view.scale)});
      fill_tile_lines();
      view::draw_ui(*state_, ui_);
    }
    if (pass == 0) ui.discard();
    else ui.end();
  }
  std::vector<std::uint8_t> px;
  shot.read_rgba(px);
  view::FrameTarget::unbind();
  return RgbaImage(std::uint32_t(w), std::uint32_t(h), std::move(px));
}

void HeadlessDisplay::release_gl() noexcept {
  view_painter_.reset();
  view_target_.reset();
}

}  // namespace handoff::view
