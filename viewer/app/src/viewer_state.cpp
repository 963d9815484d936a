#include "viewer_state.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/viewer/color.hpp>
#include <handoff/viewer/error.hpp>
#include <handoff/viewer/raw_reader.hpp>
#include <handoff/viewer/scene.hpp>
#include <handoff/viewer/y4m_reader.hpp>

namespace handoff::viewer {

void TimingWindow::add(double ms) {
  values_[next_] = ms;
  next_ = (next_ + 1) % kSize;
  count_ = std::min(count_ + 1, kSize);
}

double TimingWindow::percentile(double p) const {
  if (count_ == 0) return 0.0;
  std::copy_n(values_.begin(), count_, sorted_.begin());
  std::sort(sorted_.begin(), sorted_.begin() + static_cast<std::ptrdiff_t>(count_));
  const double rank = p / 100.0 * double(count_ - 1);
  return sorted_[static_cast<std::size_t>(std::lround(rank))];
}

double TimingWindow::mean() const {
  if (count_ == 0) return 0.0;
  double s = 0;
  for (std::size_t i = 0; i < count_; ++i) s += values_[i];
  return s / double(count_);
}

namespace {

bool ends_with_ci(std::string s, std::string_view suffix) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void make_bench_boxes(OverlayFrame& f, std::uint32_t count, std::uint32_t w, std::uint32_t h) {
  static const char* const kLabels[] = {"person", "car", "bike", "dog", "bus", "truck"};
  std::uint32_t state = 12345u;
  auto rnd = [&] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24);
  };
  for (std::uint32_t i = 0; i < count; ++i) {
    const float bw = 8 + rnd() * float(w) / 8, bh = 8 + rnd() * float(h) / 8;
    const float x = rnd() * (float(w) - bw), y = rnd() * (float(h) - bh);
    const std::int32_t cls = std::int32_t(i % 6);
    f.add_box(x, y, x + bw, y + bh, kLabels[cls], 0.5f + 0.5f * rnd(), cls, std::int32_t(i));
  }
}

// Ground truth of the Vulkan scene (shaders/vk/scene.glsl; its CPU reference
// is tests/vulkan/scene_reference.hpp): the sliding white square and the
// orange disc, as boxes in frame pixels. Keep in step with scene.glsl.
void vulkan_scene_overlays(OverlayFrame& f, std::int64_t index, std::uint32_t width, std::uint32_t height) {
  f.clear();
  f.frame = index;
  const int w = int(width), h = int(height);
  const int n = int(std::uint32_t(index) % 1000000u);
  const int s = std::max(2, std::min(w, h) / 8);
  const int range = std::max(1, w - s);
  const int t = (n * 4) % (2 * range);
  const int sx = t < range ? t : 2 * range - t;
  const int sy = std::max(0, h / 2 - s / 2);
  f.add_box(float(sx), float(sy), float(std::min(sx + s, w)), float(std::min(sy + s, h)), "square", 1.0f, 0, 1);
  const int r = std::max(1, std::min(w, h) / 10);
  const int cx = w - 1 - (n * 3) % w;
  const int cy = (h * 5) / 6;
  f.add_box(float(std::max(cx - r, 0)), float(std::max(cy - r, 0)), float(std::min(cx + r + 1, w)),
            float(std::min(cy + r + 1, h)), "disc", 1.0f, 1, 2);
}

}  // namespace

std::optional<SceneOptions> scene_options(const AppOptions& o) {
  if (!o.file.empty()) return std::nullopt;
  SceneOptions so;
  if (!o.size.empty()) parse_size(o.size, so.width, so.height);
  if (!o.format.empty()) so.format = parse_format(o.format);
  if (o.matrix) so.colorimetry.matrix = *o.matrix;
  if (o.range) so.colorimetry.range = *o.range;
  return so;
}

std::unique_ptr<FrameSource> open_source(const AppOptions& o) {
  if (o.file.empty()) return make_scene_source(*scene_options(o));
  std::error_code ec;
  if (!std::filesystem::exists(o.file, ec))
    throw ParseError(o.file, "", "", "no such file");
  if (std::filesystem::is_directory(o.file, ec))
    throw ParseError(o.file, "", "", "is a directory, not a video file");
  if (ends_with_ci(o.file, ".y4m")) {
    if (!o.size.empty() || !o.format.empty())
      log(LogLevel::Warning, "--size / --format are ignored for Y4M files (the header says them)");
    return open_y4m(o.file);
  }
  if (o.size.empty())
    throw ParseError(o.file, "", "--size",
                     "a raw NV12 / P010 file needs --size WxH (and --format nv12|p010); "
                     "files ending in .y4m are read as Y4M");
  RawOptions ro;
  parse_size(o.size, ro.width, ro.height);
  ro.format = o.format.empty() ? PixelFormat::NV12 : parse_format(o.format);
  if (o.matrix) ro.colorimetry.matrix = *o.matrix;
  if (o.range) ro.colorimetry.range = *o.range;
  return open_raw(o.file, ro);
}

ViewerState::ViewerState(const AppOptions& options,
                         std::function<std::unique_ptr<GlContext>()> worker_context,
                         std::function<void(const GlDebugMessage&)> on_gl_message,
                         std::function<void(const std::string&)> on_vk_message)
    : options_(options) {
  scratch_.box_renderer = &box_renderer_;
  speed = options.speed;
  no_vsync = options.no_vsync;
  show_overlays = !options.hide_overlays;
  matrix_override = options.matrix;
  range_override = options.range;
  if (options.source == "vulkan") {
    // The scene's size, format, colorimetry and rate, written by Vulkan into
    // memory the current context imports; no worker, no pipeline.
    const SceneOptions so = *scene_options(options);  // bad --size / --format fail here
#ifdef HANDOFF_HAVE_VULKAN
    VkContextOptions vo;
    if (options.vk_debug) vo.validation = true;
    if (on_vk_message)
      vo.on_message = [sink = std::move(on_vk_message)](const VkValidationMessage& m) {
        sink((m.id.empty() ? std::string() : m.id + ": ") + m.message);
      };
    try {
      vk_ = std::make_unique<GlVkSource>(so.format, so.width, so.height, so.colorimetry, std::move(vo));
    } catch (const Error& e) {
      throw Error(std::string("--source vulkan is not available here: ") + e.what() +
                  " (it needs a Vulkan device with exportable OPAQUE_FD memory and a GL context with "
                  "GL_EXT_memory_object_fd on the same GPU)");
    }
    vk_active_ = true;
    vk_info_ = SourceInfo{"scene (Vulkan compute)", so.format, so.width, so.height, so.colorimetry, so.rate, -1};
    const bool semaphores = vk_->sync() == GlVkSync::ExternalSemaphore;
    vk_source_text_ = std::string("vulkan (zero-copy, sync: ") + (semaphores ? "semaphore" : "cpu-fence") + ")";
    vk_memory_text_ = "Vulkan " + vk_->vulkan().info().name + ", imported by GL (GL_EXT_memory_object_fd)";
#else
    (void)on_vk_message;
    throw UsageError("--source vulkan: this handoff-view was built without Vulkan (HANDOFF_WITH_VULKAN=OFF)");
#endif
  } else {
    const bool loop = options.loop.value_or(!options.headless);
    auto source = open_source(options);  // bad input fails here, before any thread starts
    GlWorkerOptions wo;
    wo.name = "handoff-view-gl";
    wo.context_factory = std::move(worker_context);
    wo.on_debug_message = std::move(on_gl_message);
    worker_ = std::make_unique<GlWorker>(std::move(wo));
    pipeline_ = std::make_unique<FramePipeline>(*worker_, std::move(source), options.ring, loop, MapBackend::Auto,
                                                scene_options(options));
  }
  const SourceInfo& in = info();
  if (!options.overlays.empty()) {
    OverlayParseOptions po;
    po.frame_width = float(in.width);
    po.frame_height = float(in.height);
    store_.load_jsonl(options.overlays, po);
    overlay_diagnostics = store_.diagnostics().size();
    overlay_file = options.overlays;
  }
  if (options.bench_boxes) make_bench_boxes(bench_overlays_, options.bench_boxes, in.width, in.height);
}

ViewerState::~ViewerState() {
#ifdef HANDOFF_HAVE_VULKAN
  if (vk_) {
    // GL may still read the imported textures: finish before Vulkan frees them.
    try {
      gl_finish_for_vulkan();
    } catch (const std::exception& e) {
      log(LogLevel::Error, std::string("handoff-view: ") + e.what());
    }
    vk_.reset();
  }
#endif
  pipeline_.reset();
  if (worker_) worker_->shutdown();
}

Colorimetry ViewerState::effective_colorimetry() const {
  Colorimetry c = info().colorimetry;
  if (matrix_override) c.matrix = *matrix_override;
  if (range_override) c.range = *range_override;
  if (siting_override) c.siting = *siting_override;
  return c;
}

bool ViewerState::advance(bool wait) {
  using clock = std::chrono::steady_clock;
  const auto now = clock::now();
  if (!wait && !no_vsync && !first_) {
    if (now < next_due_) return false;
  }
  if (vk_active_) {
    if (!advance_vulkan()) return false;
  } else {
    FrameSlot* slot = pipeline_->next(wait);
    if (!slot) return false;
    const auto u0 = clock::now();
    renderer_.upload(pipeline_->frame_of(*slot));
    const auto u1 = clock::now();
    frame_index_ = slot->index;
    source_overlays_valid_ = slot->has_overlays;
    if (slot->has_overlays) std::swap(source_overlays_, slot->overlays);  // both keep capacity
    stats_.produce_ms.add(slot->produce_ms);
    stats_.map_ms.add(slot->map_ms);
    pipeline_->release(slot);
    stats_.upload_ms.add(std::chrono::duration<double, std::milli>(u1 - u0).count());
  }
  const auto t1 = clock::now();
  if (!first_) {
    const double dt = std::chrono::duration<double, std::milli>(t1 - last_frame_).count();
    stats_.frame_ms.add(dt);
    stats_.fps = stats_.fps == 0 ? 1000.0 / std::max(dt, 1e-3) : 0.9 * stats_.fps + 0.1 * 1000.0 / std::max(dt, 1e-3);
  }
  const double rate = info().rate.value() > 0 ? info().rate.value() : 30.0;
  const auto period = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(1.0 / (rate * std::max(speed, 0.01))));
  next_due_ = (first_ || now - next_due_ > std::chrono::milliseconds(250)) ? now + period : next_due_ + period;
  last_frame_ = t1;
  first_ = false;
  ++stats_.frames;
  return true;
}

// --source vulkan: GL finishes what it issued (the last draws and probes read
// the textures Vulkan is about to write), then Vulkan writes frame vk_next_
// into the imported memory; the renderer samples it in place.
bool ViewerState::advance_vulkan() {
#ifdef HANDOFF_HAVE_VULKAN
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (frame_index_ >= 0) gl_finish_for_vulkan();
  vk_->produce(vk_next_);
  const auto t1 = clock::now();
  renderer_.use_external(vk_info_.format, vk_info_.width, vk_info_.height, vk_->luma_texture(),
                         vk_->chroma_texture());
  frame_index_ = vk_next_++;
  vulkan_scene_overlays(source_overlays_, frame_index_, vk_info_.width, vk_info_.height);
  source_overlays_valid_ = true;
  stats_.produce_ms.add(std::chrono::duration<double, std::milli>(t1 - t0).count());
  stats_.map_ms.add(0.0);
  stats_.upload_ms.add(0.0);  // nothing uploaded: the textures are the Vulkan memory
  return true;
#else
  return false;
#endif
}

void ViewerState::step(int delta) {
  playing = false;
  if (!seekable()) {
    if (delta > 0) advance(true);
    return;
  }
  const std::int64_t n = info().frame_count;
  std::int64_t to = frame_index_ + delta;
  to = n > 0 ? ((to % n) + n) % n : std::max<std::int64_t>(to, 0);
  if (vk_active_) vk_next_ = to;
  else pipeline_->seek(to);
  first_ = true;
  advance(true);
}

void ViewerState::draw_frame(const ViewTransform& view, int fb_w, int fb_h) {
  DrawOptions o;
  o.colorimetry = effective_colorimetry();
  o.view = view;
  o.nearest = nearest_when_zoomed && view.scale > 1.0;
  renderer_.draw(o, fb_w, fb_h);
}

const OverlayFrame* ViewerState::current_overlays() const {
  if (options_.bench_boxes) return &bench_overlays_;
  if (const OverlayFrame* f = store_.find(frame_index_)) return f;
  if (overlay_file.empty() && source_overlays_valid_) return &source_overlays_;
  return nullptr;
}

void ViewerState::draw_overlays_into(ImDrawList& list, const ViewTransform& view, const RectF& view_rect) {
  if (!show_overlays) return;
  const OverlayFrame* f = current_overlays();
  if (!f) return;
  draw_overlays(list, *f, filter, view, view_rect, style, scratch_);
}

PixelProbe ViewerState::probe(double fx, double fy) const {
  PixelProbe p;
  if (!renderer_.has_frame() || fx < 0 || fy < 0 || fx >= renderer_.width() || fy >= renderer_.height()) return p;
  p.valid = true;
  p.x = int(fx);
  p.y = int(fy);
  const bool p010 = renderer_.format() == PixelFormat::P010;
  const GLenum type = p010 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_BYTE;
  std::uint16_t y16 = 0, c16[2] = {0, 0};
  std::uint8_t y8 = 0, c8[2] = {0, 0};
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTextureSubImage(renderer_.luma_texture(), 0, p.x, p.y, 0, 1, 1, 1, GL_RED, type, p010 ? 2 : 1,
                       p010 ? static_cast<void*>(&y16) : static_cast<void*>(&y8));
  // The chroma sample this pixel's block uses (nearest).
  glGetTextureSubImage(renderer_.chroma_texture(), 0, p.x / 2, p.y / 2, 0, 1, 1, 1, GL_RG, type,
                       p010 ? 4 : 2, p010 ? static_cast<void*>(c16) : static_cast<void*>(c8));
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  if (p010) {
    p.code_y = y16 >> 6;
    p.code_cb = c16[0] >> 6;
    p.code_cr = c16[1] >> 6;
  } else {
    p.code_y = y8;
    p.code_cb = c8[0];
    p.code_cr = c8[1];
  }
  const Colorimetry c = effective_colorimetry();
  p.rgb = yuv_to_rgb8(p.code_y, p.code_cb, p.code_cr, c.matrix, c.range, renderer_.format());
  return p;
}

}  // namespace handoff::viewer
