#include "viewer_state.hpp"

#include <algorithm>
#include <cmath>

#include <handoff/error.hpp>

namespace handoff::view {

template <std::size_t N>
void TimingWindow<N>::add(double ms) {
  values_[next_] = ms;
  next_ = (next_ + 1) % N;
  count_ = std::min(count_ + 1, N);
}

template <std::size_t N>
double TimingWindow<N>::percentile(double p) const {
  if (count_ == 0) return 0.0;
  std::copy_n(values_.begin(), count_, sorted_.begin());
  std::sort(sorted_.begin(), sorted_.begin() + static_cast<std::ptrdiff_t>(count_));
  const double rank = p / 100.0 * double(count_ - 1);
  return sorted_[static_cast<std::size_t>(std::lround(rank))];
}

template <std::size_t N>
double TimingWindow<N>::mean() const {
  if (count_ == 0) return 0.0;
  double s = 0;
  for (std::size_t i = 0; i < count_; ++i) s += values_[i];
  return s / double(count_);
}

template class TimingWindow<256>;
template class TimingWindow<1024>;

namespace {

void make_bench_boxes(media::OverlayFrame& f, std::uint32_t count, std::uint32_t w, std::uint32_t h) {
  static const char* const kLabels[] = {"person", "car", "bike", "dog", "bus", "truck"};
  f.clear();
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

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

ViewerState::ViewerState(std::unique_ptr<view::Feed> feed, view::FeedContext& context, const StateOptions& o)
    : feed_(std::move(feed)), attach_status_(o.attach_status), renderer_(o.convert), bench_boxes_(o.bench_boxes) {
  if (!feed_) throw UsageError("ViewerState: no feed");
  scratch_.box_renderer = &box_renderer_;
  speed = o.speed;
  no_vsync = o.no_vsync;
  show_overlays = o.show_overlays;
  matrix_override = o.matrix;
  range_override = o.range;
  value_range = o.value_range;
  refused_ = RefusedFrames(context.bad_frame);
  feed_->start(context);
  info_ = feed_->info();
  paced_ = feed_->paced();
  if (!o.overlay_file.empty()) {
    media::OverlayParseOptions po;
    po.frame_width = float(info_.width);
    po.frame_height = float(info_.height);
    store_.load_jsonl(o.overlay_file, po);
    overlay_diagnostics = store_.diagnostics().size();
    if (context.input_warning)
      for (const media::OverlayDiagnostic& d : store_.diagnostics()) context.input_warning(d.message);
    overlay_file = o.overlay_file;
  }
  if (bench_boxes_ && info_.width) make_bench_boxes(bench_overlays_, bench_boxes_, info_.width, info_.height);
}

ViewerState::~ViewerState() { feed_->stop(); }

Colorimetry ViewerState::effective_colorimetry() const {
  Colorimetry c = info_.colorimetry;
  if (matrix_override) c.matrix = *matrix_override;
  if (range_override) c.range = *range_override;
  if (siting_override) c.siting = *siting_override;
  return c;
}

void ViewerState::set_playing(bool playing) {
  playing_ = playing;
  feed_->set_paused(!playing);
}

// Takes the feed's next frame into the textures: uploaded from its buffer, or
// (Vulkan) its plane textures sampled in place.
bool ViewerState::take_next(bool wait) {
  using clock = std::chrono::steady_clock;
  view::FeedFrame f;
  if (!next_that_fits(f, wait)) return false;
  const auto u0 = clock::now();
  const Frame& fr = f.frame;
  try {
    if (f.luma_texture) renderer_.use_external(fr.format, fr.width, fr.height, f.luma_texture, f.chroma_texture);
    else renderer_.upload(fr);
  } catch (...) {
    feed_->release(f);  // the feed's buffer goes back whatever the upload did
    throw;
  }
  const auto u1 = clock::now();
  frame_index_ = fr.index;
  submitted_ = f.submitted;
  sequence_ = f.sequence;
  display_ms_ = f.display_ms;
  time_ns_ = f.time_ns;
  feed_overlays_valid_ = f.overlays != nullptr;
  if (f.overlays) std::swap(feed_overlays_, *f.overlays);  // both keep their capacity
  layers_.set_layers(feed_overlays_valid_ ? &feed_overlays_ : nullptr, fr.width, fr.height);
  stats_.produce_ms.add(f.produce_ms);
  stats_.map_ms.add(f.map_ms);
  stats_.upload_ms.add(f.luma_texture ? 0.0 : ms_between(u0, u1));
  feed_->release(f);
  const bool resized = fr.width != info_.width || fr.height != info_.height;
  info_ = feed_->info();
  info_.format = fr.format;
  info_.width = fr.width;
  info_.height = fr.height;
  info_.colorimetry = fr.colorimetry;
  if (bench_boxes_ && (resized || bench_overlays_.empty()))
    make_bench_boxes(bench_overlays_, bench_boxes_, info_.width, info_.height);
  return true;
}

// The feed's next frame that this GL's textures hold: one that does not is
// left out (RefusedFrames) and the next one taken, so that one frame does not
// stop the display. A played source's first frame is not: its upload fails
// and ends playback, naming the limit.
bool ViewerState::next_that_fits(view::FeedFrame& f, bool wait) {
  for (;;) {
    if (!feed_->next(f, wait)) return false;
    const Frame& fr = f.frame;
    const auto refused = texture_size_refusal(info_.name, fr.width, fr.height, renderer_.max_texture_size());
    if (!refused || (paced_ && !renderer_.has_frame())) return true;
    feed_->release(f);
    refused_.add(info_.name + ": frame " + std::to_string(fr.index) + ": " + refused->what());
    f = view::FeedFrame{};
  }
}

// Frame statistics and, for paced feeds, when the next frame is due.
void ViewerState::advance_clock(std::chrono::steady_clock::time_point now) {
  using clock = std::chrono::steady_clock;
  const auto t1 = clock::now();
  if (!first_) {
    const double dt = ms_between(last_frame_, t1);
    stats_.frame_ms.add(dt);
    const double rate = 1000.0 / std::max(dt, 1e-3);
    stats_.fps = stats_.fps == 0 ? rate : 0.9 * stats_.fps + 0.1 * rate;
  }
  const double fps = info_.rate > 0 ? info_.rate : 30.0;
  const double seconds = display_ms_ > 0 ? display_ms_ / 1000.0 : 1.0 / fps;
  const auto period = std::chrono::duration_cast<clock::duration>(
      std::chrono::duration<double>(seconds / std::max(speed, 0.01)));
  next_due_ = (first_ || now - next_due_ > std::chrono::milliseconds(250)) ? now + period : next_due_ + period;
  last_frame_ = t1;
  first_ = false;
  ++stats_.frames;
}

bool ViewerState::advance(bool wait) {
  const auto now = std::chrono::steady_clock::now();
  if (paced_ && !wait && !no_vsync && !first_ && now < next_due_) return false;
  if (!take_next(wait)) return false;
  advance_clock(now);
  return true;
}

bool ViewerState::step(int delta) {
  set_playing(false);
  if (!paced_) {  // pushed frames: the next one that is (or will be) there
    feed_->step();
    return false;
  }
  if (!info_.seekable) return delta > 0 && advance(true);
  const std::int64_t n = info_.frame_count;
  std::int64_t to = frame_index_ + delta;
  to = n > 0 ? ((to % n) + n) % n : std::max<std::int64_t>(to, 0);
  feed_->seek(to);
  first_ = true;
  return advance(true);
}

// The frame in order is taken as it comes (playback forward); any other is
// sought (a step back, a seek, the leader looping). The feed skips a frame
// that does not decode (reporting it) and hands out the next good one, going
// round to the start past the end: another frame than the one asked for
// means those from it up to the one that came are bad.
bool ViewerState::follow(std::uint64_t time_ns) {
  const std::int64_t n = std::int64_t(log_times().size());
  const std::int64_t shown = renderer_.has_frame() ? frame_index_ : -1;
  const auto newest_good = [&] {
    std::int64_t i = feed_->index_at(time_ns);
    while (i >= 0 && bad_frames_.count(i)) --i;
    return i;
  };
  std::int64_t to = newest_good();
  for (int tries = 0; tries < 4; ++tries) {
    absent_ = to < 0;
    if (absent_) return false;
    if (to == frame_index_ && renderer_.has_frame()) break;
    if (to != frame_index_ + 1 || !renderer_.has_frame()) feed_->seek(to);
    if (!take_next(true)) break;
    if (frame_index_ == to) break;
    const std::int64_t came = frame_index_;
    for (std::int64_t i = to; i != came && i < n; ++i) bad_frames_.insert(i);
    if (came < to)
      for (std::int64_t i = 0; i < came; ++i) bad_frames_.insert(i);
    to = newest_good();
  }
  if (frame_index_ != to) {  // no good frame in a few tries: show none rather than a wrong one
    absent_ = true;
    return false;
  }
  if (frame_index_ == shown) return false;  // the same frame again (the one asked for would not decode)
  ++stats_.frames;
  return true;
}

bool ViewerState::seek(std::int64_t index) {
  const std::int64_t n = info_.frame_count;
  if (!paced_ || !info_.seekable || n <= 0)
    throw UsageError("seek: " + info_.name + " is not a file or recording (nothing to seek in)");
  if (index < 0 || index >= n)
    throw UsageError("seek: frame " + std::to_string(index) + " is outside " + info_.name + " (frames 0.." +
                     std::to_string(n - 1) + ")");
  feed_->seek(index);
  first_ = true;
  return !playing_ && advance(true);
}

void ViewerState::draw_frame(const ViewTransform& view, int fb_w, int fb_h) {
  DrawOptions o;
  o.colorimetry = effective_colorimetry();
  o.view = view;
  o.nearest = nearest_when_zoomed && view.scale > 1.0;
  o.value_range = value_range;
  // A software GL converts the frame on the CPU: the layers are blended into
  // its pixels there when they lie within the frame (else, and on a GPU, the
  // layer shaders draw them over it).
  DrawOptions::CpuLayers cpu;
  const bool layers = show_overlays && layers_.size() > 0;
  if (layers && renderer_.cpu_convert() && layers_.fits(view)) {
    cpu.key = layers_.cpu_key();
    cpu.prepare = [this, &view](const PixelRect& r, ByteOrder order) { return layers_.prepare_composite(view, r, order); };
    cpu.rows = [this](int first, int last, std::uint8_t* out, std::ptrdiff_t pitch) {
      layers_.composite_rows(first, last, out, pitch);
    };
    o.cpu_layers = &cpu;
  }
  const bool drawn = renderer_.draw(o, fb_w, fb_h);
  if (layers && !drawn && renderer_.has_frame()) layers_.draw(view, fb_w, fb_h);
}

const media::OverlayFrame* ViewerState::current_overlays() const {
  if (bench_boxes_) return &bench_overlays_;
  if (const media::OverlayFrame* f = store_.find(frame_index_)) return f;
  if (overlay_file.empty() && feed_overlays_valid_) return &feed_overlays_;
  return nullptr;
}

void ViewerState::draw_overlays_into(ImDrawList& list, const ViewTransform& view, const media::RectF& view_rect) {
  if (!show_overlays) return;
  const media::OverlayFrame* f = current_overlays();
  if (!f) return;
  draw_overlays(list, *f, filter, view, view_rect, style, scratch_);
}

PixelProbe ViewerState::probe(const ViewTransform& view, double x, double y) const {
  return probe_view_pixel(renderer_, effective_colorimetry(), value_range, view, x, y);
}

}  // namespace handoff::view
