#pragma once
// The played sources whose frames go through the frame pipeline (a producer
// thread writing into a ring of interop buffers, frame_pipeline.hpp): the
// built-in scene (its CUDA kernel where CUDA works, else all CPU cores) and
// files (Y4M, raw NV12 / P010). Paced: frames are due at the source's rate.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <handoff/cuda_gl_buffer.hpp>
#include <handoff/view/feed.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/scene.hpp>

#include "frame_pipeline.hpp"

namespace handoff::view {

class PipelineFeed : public Feed {
 public:
  void start(FeedContext& context) override;
  FeedInfo info() const override;
  bool paced() const override { return true; }
  bool next(FeedFrame& out, bool wait) override;
  void release(FeedFrame& frame) override;
  void seek(std::int64_t index) override;
  bool finished() const override;
  void stop() noexcept override;
  // Before start(): whether a finite source starts over at its end.
  void set_loop(bool loop) { loop_ = loop; }

 protected:
  // The source is opened here, so bad input fails before any thread starts.
  // `loop`: a finite source starts over at its end.
  PipelineFeed(std::unique_ptr<media::FrameSource> source, GlRingOptions ring, bool loop,
               std::optional<media::SceneOptions> scene);

 private:
  std::unique_ptr<media::FrameSource> source_;  // until start() hands it to the pipeline
  media::SourceInfo info_;
  GlRingOptions ring_;
  bool loop_ = true;
  std::optional<media::SceneOptions> scene_;
  std::unique_ptr<view::FramePipeline> pipeline_;
  view::FrameSlot* handed_out_ = nullptr;  // the slot of the frame next() returned, until release()
};

// The synthetic scene with its ground-truth overlays; seekable both ways.
class SceneFeed final : public PipelineFeed {
 public:
  SceneFeed(const media::SceneOptions& scene, GlRingOptions ring);
};

// What a file feed needs beyond the path (raw files: the size and format).
struct FileOptions {
  std::uint32_t width = 0, height = 0;  // raw files: required
  std::optional<PixelFormat> format;    // raw files: default NV12; Y4M: must match the header if given
  std::optional<ColorMatrix> matrix;    // override the file's colorimetry
  std::optional<ColorRange> range;
};

// A Y4M file (".y4m") or raw NV12 / P010. Throws media::ParseError naming the
// file and what is wrong (no such file, a directory, a bad header, a raw file
// without a size or of the wrong length).
class FileFeed final : public PipelineFeed {
 public:
  FileFeed(const std::string& path, const FileOptions& options, GlRingOptions ring, bool loop);
};

}  // namespace handoff::view
