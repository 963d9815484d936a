#include "frame_recorder.hpp"

#include <glad/gl.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <variant>

#include <handoff/gl_handles.hpp>
#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/gl_check.hpp>
#include <handoff/host_frame.hpp>
#include <handoff/log.hpp>
#include <handoff/wait.hpp>

#include "frame_renderer.hpp"

namespace handoff::view {

// One readback buffer: persistently mapped for reading, so the recorder
// thread reads the pixels where the GPU put them (no map / unmap per frame).
struct FrameRecorder::Slot {
  enum class State : std::uint8_t { Free, Reading, Queued, Writing };
  State state = State::Free;  // Free / Queued / Writing guarded by mutex_; Reading is the display's
  handoff::UniqueGlBuffer buffer;  // display thread; deleting it unmaps it
  std::size_t size = 0;
  const std::uint8_t* mapped = nullptr;
  GlFence fence;  // display thread: the readback is done
  PixelFormat format = PixelFormat::NV12;
  std::uint32_t width = 0, height = 0;
  Colorimetry colorimetry{};
  media::OverlayFrame overlays;
  std::uint64_t time_ns = 0;
  std::string topic;  // the tile's image topic
};

namespace {

// A viewer's CUDA layers lie in GL buffers of its ring (memory GlBuffer,
// samples packed and unconverted: PushRing::copy_cuda_layers). The recorder
// thread cannot read those: each is read back here, on the display thread,
// into host memory the slot's copy owns (the ring's CUDA copy into the buffer
// finished before show() returned). Host layers are shared, not copied.
void read_back_gl_layers(media::OverlayFrame& overlays) {
  for (media::Layer& layer : overlays.layers) {
    media::LayerArray& a = std::visit(
        [](auto& l) -> media::LayerArray& {
          using T = std::decay_t<decltype(l)>;
          if constexpr (std::is_same_v<T, media::ClassMap>) return l.ids;
          else if constexpr (std::is_same_v<T, media::ScalarMap>) return l.values;
          else return l.masks;
        },
        layer);
    if (a.memory != MemoryKind::GlBuffer) continue;
    const std::size_t bytes = a.row_bytes() * a.height * a.count;
    std::shared_ptr<std::uint8_t[]> copy(new std::uint8_t[std::max<std::size_t>(bytes, 1)]);
    if (bytes > 0) glGetNamedBufferSubData(a.gl_buffer, 0, GLsizeiptr(bytes), copy.get());
    a.memory = MemoryKind::Host;
    a.gl_buffer = 0;
    a.pitch = 0;
    a.image_stride = 0;
    a.data = copy.get();
    a.owner = std::move(copy);
  }
}

// The recording's threads yield the CPU to the display (and the source's
// producer): on a machine with no core to spare, the recording falls behind
// and drops frames (counted) instead of slowing what is displayed.
constexpr int kRecordingNice = 10;

media::RecordingOptions writer_options(const media::RecordTarget& o) {
  media::RecordingOptions w;
  w.compression = o.compression;
  w.codec = o.codec;  // h264 / h265: encoded on the writer's (niced) thread, never the display's
  w.queue_capacity = 4;
  w.block_when_full = false;  // a full queue drops the frame from the recording (counted)
  w.writer_nice = kRecordingNice;
  return w;
}

// A readback buffer holds the frame's planes packed, one after the other.
FrameLayout readback_layout(PixelFormat f, std::uint32_t w, std::uint32_t h) {
  return FrameLayout::contiguous(f, w, h, 1);
}

// The frame in a readback buffer.
Frame packed_frame(const std::uint8_t* base, PixelFormat f, std::uint32_t w, std::uint32_t h, const Colorimetry& c) {
  FrameLayout layout = readback_layout(f, w, h);
  layout.colorimetry = c;
  return layout.describe(MemoryKind::Host, {const_cast<std::uint8_t*>(base)});
}

// The texture of frame_textures(f) that holds plane `plane` as it is stored:
// the plane's own, except yuyv / uyvy, whose one plane is read from the
// pairs texture (RGBA, one texel per 4:2:2 pair: every byte of the row; the
// luma texture lacks the chroma of the odd sample and an odd width's padding).
int readback_texture(PixelFormat f, int plane) {
  return f == PixelFormat::YUYV || f == PixelFormat::UYVY ? 1 : plane;
}

std::string shape_text(PixelFormat f, std::uint32_t w, std::uint32_t h) {
  return std::string(to_string(f)) + " " + std::to_string(w) + "x" + std::to_string(h);
}

}  // namespace

FrameRecorder::FrameRecorder(const media::RecordTarget& options, std::size_t buffers)
    : options_(options), writer_(options.path, writer_options(options)) {
  if (options_.topic.empty()) options_.topic = "/handoff/view";
  for (std::size_t i = 0; i < buffers; ++i) slots_.push_back(std::make_unique<Slot>());
  thread_ = std::thread([this] { run(); });
}

FrameRecorder::~FrameRecorder() { finish(); }

// (Re)allocates a free slot's buffer for `bytes`, then queues the readback of
// every plane into it and fences it.
void FrameRecorder::capture(const std::array<unsigned, kMaxPlanes>& textures, PixelFormat format,
                            std::uint32_t width, std::uint32_t height, const Colorimetry& colorimetry,
                            const media::OverlayFrame* overlays, std::uint64_t time_ns, std::string_view tile) {
  hand_over(false);
  const std::string topic = tile_topic(tile);
  if (!fits_stream(topic, format, width, height)) return;
  Slot* slot = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    if (failed_) {  // the recording stopped: displayed, and left out of it
      ++dropped_;
      return;
    }
    for (auto& s : slots_)
      if (s->state == Slot::State::Free) {
        slot = s.get();
        slot->state = Slot::State::Reading;  // the display thread's until hand_over() queues it
        break;
      }
    if (!slot) {
      ++dropped_;
      return;
    }
  }
  try {
    read_back(*slot, textures, format, width, height);
  } catch (const std::exception& e) {  // the recording stops; the display goes on
    std::lock_guard lock(mutex_);
    slot->state = Slot::State::Free;
    failed_ = true;
    ++dropped_;
    errors_.push_back(options_.path + ": reading a displayed frame back: " + e.what());
    log(LogLevel::Error, "recording stopped: " + errors_.back());
    return;
  }
  slot->format = format;
  slot->width = width;
  slot->height = height;
  slot->colorimetry = colorimetry;
  if (overlays) {
    slot->overlays = *overlays;
    read_back_gl_layers(slot->overlays);
  } else {
    slot->overlays.clear();
  }
  slot->time_ns = time_ns;
  slot->topic = topic;
}

// The first tile (an unnamed stream, or a view of one stream) records on the
// recording's topic; a tile named "left" on "<topic>/left" (a recording's
// "/cam0": "<topic>/cam0").
std::string FrameRecorder::tile_topic(std::string_view tile) const {
  if (tile.empty()) return options_.topic;
  return options_.topic + (tile.front() == '/' ? "" : "/") + std::string(tile);
}

// A recording's stream has one format and size per topic (its readers take
// them from its first frame): a displayed frame of another is left out,
// counted (RecorderStats::skipped) and named in a warning the first time.
bool FrameRecorder::fits_stream(const std::string& topic, PixelFormat format, std::uint32_t width,
                                std::uint32_t height) {
  try {  // before the stream takes its shape: a frame the recording cannot hold (h264 / h265's, too large) never sets it
    media::check_recorded_frame(options_.codec, format, width, height);
  } catch (const InvalidFrame& e) {
    std::lock_guard lock(mutex_);
    if (!codec_told_) {
      codec_told_ = true;
      log(LogLevel::Warning, "recording " + options_.path + ": " + shape_text(format, width, height) + " frames on " +
                                 topic + " are left out (" + e.what() + "; counted in ViewerStats::record_skipped)");
    }
    ++skipped_;
    return false;
  }
  const Shape& shape = streams_.try_emplace(topic, Shape{format, width, height}).first->second;
  if (shape.format == format && shape.width == width && shape.height == height) return true;
  std::lock_guard lock(mutex_);
  ++skipped_;
  if (!std::exchange(shape_told_, true))
    log(LogLevel::Warning, "recording " + options_.path + ": " + shape_text(format, width, height) + " frames on " +
                               topic + " are left out (its frames are " +
                               shape_text(shape.format, shape.width, shape.height) +
                               "; counted in ViewerStats::record_skipped)");
  return false;
}

// Queues the copy of every plane into the slot's buffer ((re)made for this
// size), each in the pixel format and type it was uploaded with (so the
// bytes come back as they were stored), then fences it. No wait here.
void FrameRecorder::read_back(Slot& slot, const std::array<unsigned, kMaxPlanes>& textures, PixelFormat format,
                              std::uint32_t width, std::uint32_t height) {
  const FrameLayout layout = readback_layout(format, width, height);
  const TextureSpecs specs = frame_textures(format, width, height);
  const std::size_t bytes = layout.buffer_bytes(0);
  if (slot.size != bytes) {
    slot.mapped = nullptr;
    slot.size = 0;
    slot.buffer.reset();
    const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    GLuint name = 0;
    glCreateBuffers(1, &name);
    slot.buffer.reset(name);
    glNamedBufferStorage(name, GLsizeiptr(bytes), nullptr, flags);
    slot.mapped = static_cast<const std::uint8_t*>(
        HANDOFF_GL_CHECK(glMapNamedBufferRange(name, 0, GLsizeiptr(bytes), flags), "recording buffer"));
    slot.size = bytes;
  }
  GLint prev_align = 4;
  glGetIntegerv(GL_PACK_ALIGNMENT, &prev_align);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glBindBuffer(GL_PIXEL_PACK_BUFFER, slot.buffer.get());
  for (int p = 0; p < plane_count(format); ++p) {
    const int t = readback_texture(format, p);
    const TextureSpec& spec = specs.spec[std::size_t(t)];
    if (textures[std::size_t(t)] == 0)
      throw InvalidFrame("textures", "no texture " + std::to_string(t) + " for plane " + std::to_string(p) +
                                         " of a " + shape_text(format, width, height) + " frame");
    const std::size_t plane_bytes = layout.plane(p).row_bytes * layout.plane(p).height;
    glGetTextureImage(textures[std::size_t(t)], 0, spec.format, spec.type, GLsizei(plane_bytes),
                      reinterpret_cast<void*>(static_cast<std::uintptr_t>(layout.planes[std::size_t(p)].offset)));
  }
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  HANDOFF_GL_CHECK(glPixelStorei(GL_PACK_ALIGNMENT, prev_align), "recording readback");
  slot.fence = GlFence::insert();
}

void FrameRecorder::poll() { hand_over(false); }

// Readbacks whose fence signalled go to the recorder thread, oldest first
// (wait_all: every one, waiting for each, bounded).
void FrameRecorder::hand_over(bool wait_all) {
  std::vector<Slot*> reading;
  {
    std::lock_guard lock(mutex_);
    for (auto& s : slots_)
      if (s->state == Slot::State::Reading && s->fence) reading.push_back(s.get());
  }
  std::sort(reading.begin(), reading.end(), [](const Slot* a, const Slot* b) { return a->time_ns < b->time_ns; });
  for (Slot* s : reading) {
    if (wait_all) s->fence.wait("the recording's readback of a displayed frame");
    else if (!s->fence.client_wait(0)) break;  // keep the order: later ones wait for this one
    s->fence = GlFence{};
    std::lock_guard lock(mutex_);
    s->state = Slot::State::Queued;
    ready_.push_back(s);
    cv_.notify_all();
  }
}

namespace {

// The writer's layer errors name the field "layers" or "layers[i]...";
// its other InvalidFrames are about the frame (a format or size the codec
// cannot hold).
bool is_layer_error(const InvalidFrame& e) {
  const std::string_view field = e.field();
  return field.substr(0, 6) == "layers" && (field.size() == 6 || field[6] == '[');
}

// Layers a recording cannot hold (class ids beyond 2^24) leave the frame's
// layers out, with one warning per recorder thread (one per recording); the
// recording goes on. A frame the recording cannot hold is the caller's error.
bool write_frame(media::RecordingWriter& writer, const Frame& frame, media::OverlayFrame& overlays,
                 const std::string& topic, std::uint64_t time_ns) {
  try {
    return writer.write(frame, overlays, topic, time_ns);
  } catch (const InvalidFrame& e) {
    if (overlays.layers.empty() || !is_layer_error(e)) throw;
    thread_local bool told = false;
    if (!told) log(LogLevel::Warning, "recording: layers left out: " + std::string(e.what()));
    told = true;
    overlays.layers.clear();
    return writer.write(frame, overlays, topic, time_ns);
  }
}

}  // namespace

// The recorder thread: each readback into the writer, then its buffer back.
void FrameRecorder::run() {
  media::lower_thread_priority(kRecordingNice);
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stop_, nothing left
    Slot* s = ready_.front();
    ready_.pop_front();
    s->state = Slot::State::Writing;
    const bool skip = failed_;
    lock.unlock();
    bool written = false;
    std::string error;
    if (!skip) {
      try {
        const Frame frame = packed_frame(s->mapped, s->format, s->width, s->height, s->colorimetry);
        written = write_frame(writer_, frame, s->overlays, s->topic, s->time_ns);
      } catch (const std::exception& e) {
        error = options_.path + ": " + e.what();
      }
    }
    lock.lock();
    s->state = Slot::State::Free;
    if (written) ++recorded_;
    else ++dropped_;  // the writer's queue was full, the recording had stopped, or this frame stopped it
    if (!error.empty() && !failed_) {
      failed_ = true;
      errors_.push_back(error);
      log(LogLevel::Error, "recording stopped: " + error);
    }
    cv_.notify_all();
  }
}

void FrameRecorder::finish() noexcept {
  if (finished_) return;
  try {
    hand_over(true);
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    errors_.push_back(options_.path + ": " + e.what());
  }
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    finished_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  try {
    writer_.close();
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    if (!failed_) errors_.push_back(options_.path + ": " + e.what());
  }
  slots_.clear();  // their fences and GL buffers, here on the display thread with its context current
}

RecorderStats FrameRecorder::stats() const {
  const std::uint64_t in_file = writer_.stats().frames_written;  // its own lock, not under ours
  std::lock_guard lock(mutex_);
  // After a failure, what the file holds: frames queued or in the write that
  // failed are not in it, and are counted as left out.
  const std::uint64_t recorded = failed_ || !errors_.empty() ? std::min(recorded_, in_file) : recorded_;
  return {recorded, dropped_ + (recorded_ - recorded), skipped_};
}

std::vector<std::string> FrameRecorder::errors() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

}  // namespace handoff::view
