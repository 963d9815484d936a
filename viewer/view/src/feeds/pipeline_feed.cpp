#include "feeds/pipeline_feed.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <handoff/error.hpp>
#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/media/raw_reader.hpp>
#include <handoff/media/y4m_reader.hpp>

namespace handoff::view {

PipelineFeed::PipelineFeed(std::unique_ptr<media::FrameSource> source, GlRingOptions ring, bool loop,
                           std::optional<media::SceneOptions> scene)
    : source_(std::move(source)), info_(source_->info()), ring_(std::move(ring)), loop_(loop),
      scene_(std::move(scene)) {}

void PipelineFeed::start(FeedContext& context) {
  pipeline_ =
      std::make_unique<view::FramePipeline>(context.worker, std::move(source_), ring_, loop_, scene_, context.bad_frame,
                                            context.input_warning);
}

FeedInfo PipelineFeed::info() const {
  FeedInfo i;
  i.name = info_.name;
  i.memory = pipeline_ ? pipeline_->memory_text() : std::string();
  i.format = info_.format;
  i.width = info_.width;
  i.height = info_.height;
  i.colorimetry = info_.colorimetry;
  i.rate = info_.rate.value();
  i.frame_count = info_.frame_count;
  i.seekable = info_.frame_count > 0 || scene_.has_value();
  i.ring = ring_.slots;
  return i;
}

bool PipelineFeed::next(FeedFrame& out, bool wait) {
  view::FrameSlot* slot = pipeline_->next(wait);
  if (!slot) return false;
  out = FeedFrame{};
  out.frame = pipeline_->frame_of(*slot);
  out.overlays = slot->has_overlays ? &slot->overlays : nullptr;
  out.produce_ms = slot->produce_ms;
  out.map_ms = slot->map_ms;
  handed_out_ = slot;
  return true;
}

void PipelineFeed::release(FeedFrame&) {
  if (!handed_out_) return;
  pipeline_->release(std::exchange(handed_out_, nullptr));
}

void PipelineFeed::seek(std::int64_t index) {
  if (pipeline_) pipeline_->seek(index);
}

bool PipelineFeed::finished() const { return pipeline_ && pipeline_->finished(); }

void PipelineFeed::stop() noexcept { pipeline_.reset(); }

// The scene is endless: looping does not apply.
SceneFeed::SceneFeed(const media::SceneOptions& scene, GlRingOptions ring)
    : PipelineFeed(media::make_scene_source(scene), std::move(ring), true, scene) {}

namespace {

std::unique_ptr<media::FrameSource> open_file(const std::string& path, const FileOptions& o) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw media::ParseError(path, "", "", "no such file");
  if (std::filesystem::is_directory(path, ec)) throw media::ParseError(path, "", "", "is a directory, not a video file");
  if (media::is_y4m_path(path)) {
    if (o.width || o.height || o.format)
      log(LogLevel::Warning, "the size and format given for " + path + " are ignored (the Y4M header says them)");
    return media::open_y4m(path);
  }
  if (!o.width || !o.height)
    throw media::ParseError(path, "", "--size",
                             "a raw file needs its size (--size WxH), and its format unless it is nv12 (" +
                                 spellings<PixelFormat>(" | ") + "); files ending in .y4m are read as Y4M");
  media::RawOptions ro;
  ro.width = o.width;
  ro.height = o.height;
  ro.format = o.format.value_or(PixelFormat::NV12);
  if (o.matrix) ro.colorimetry.matrix = *o.matrix;
  if (o.range) ro.colorimetry.range = *o.range;
  return media::open_raw(path, ro);
}

}  // namespace

FileFeed::FileFeed(const std::string& path, const FileOptions& options, GlRingOptions ring, bool loop)
    : PipelineFeed(open_file(path, options), std::move(ring), loop, std::nullopt) {}

}  // namespace handoff::view
