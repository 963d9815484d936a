// VideoEncoder: libavcodec (libx264 / libx265) behind the recording writer.
// Frames are converted to yuv420p with libswscale; YUV formats keep their
// samples (only chroma is resampled, 10-bit reduced to 8), RGB and gray are
// converted with the matrix and range video_colorimetry() names, which the
// stream's VUI and the channel metadata then carry.
#include "video_encoder.hpp"

#include <handoff/error.hpp>
#include <handoff/frame_validate.hpp>
#include <handoff/media/error.hpp>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <mutex>
#include <string>

namespace handoff::media {

namespace {

std::string av_text(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

AVPixelFormat av_format(PixelFormat f) {
  switch (f) {
    case PixelFormat::NV12: return AV_PIX_FMT_NV12;
    case PixelFormat::P010: return AV_PIX_FMT_P010LE;
    case PixelFormat::I420: return AV_PIX_FMT_YUV420P;
    case PixelFormat::YUYV: return AV_PIX_FMT_YUYV422;
    case PixelFormat::UYVY: return AV_PIX_FMT_UYVY422;
    case PixelFormat::RGB8: return AV_PIX_FMT_RGB24;
    case PixelFormat::BGR8: return AV_PIX_FMT_BGR24;
    case PixelFormat::RGBA8: return AV_PIX_FMT_RGBA;
    case PixelFormat::BGRA8: return AV_PIX_FMT_BGRA;
    case PixelFormat::GRAY8: return AV_PIX_FMT_GRAY8;
    case PixelFormat::GRAY16: return AV_PIX_FMT_GRAY16LE;
    case PixelFormat::GRAY32F: break;
  }
  return AV_PIX_FMT_NONE;
}

int sws_matrix(ColorMatrix m) {
  switch (m) {
    case ColorMatrix::BT601: return SWS_CS_ITU601;
    case ColorMatrix::BT709: return SWS_CS_ITU709;
    case ColorMatrix::BT2020: return SWS_CS_BT2020;
  }
  return SWS_CS_ITU709;
}

// The VUI the stream carries (H.273 code points through libavcodec's enums).
void set_vui(AVCodecContext& c, const Colorimetry& col) {
  switch (col.matrix) {
    case ColorMatrix::BT601:
      c.colorspace = AVCOL_SPC_SMPTE170M;
      c.color_primaries = AVCOL_PRI_SMPTE170M;
      c.color_trc = AVCOL_TRC_SMPTE170M;
      break;
    case ColorMatrix::BT709:
      c.colorspace = AVCOL_SPC_BT709;
      c.color_primaries = AVCOL_PRI_BT709;
      c.color_trc = AVCOL_TRC_BT709;
      break;
    case ColorMatrix::BT2020:
      c.colorspace = AVCOL_SPC_BT2020_NCL;
      c.color_primaries = AVCOL_PRI_BT2020;
      c.color_trc = AVCOL_TRC_BT709;
      break;
  }
  c.color_range = col.range == ColorRange::Full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  c.chroma_sample_location = col.siting == ChromaSiting::Center    ? AVCHROMA_LOC_CENTER
                             : col.siting == ChromaSiting::TopLeft ? AVCHROMA_LOC_TOPLEFT
                                                                   : AVCHROMA_LOC_LEFT;
}

// libavcodec logs every encoder's banner at "info"; a recording says nothing
// unless something is wrong (only when nobody chose a level).
void quiet_av_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_ERROR);
  });
}

}  // namespace

void check_video_frame(VideoCodec codec, PixelFormat format, std::uint32_t width, std::uint32_t height) {
  if (codec == VideoCodec::Raw) return;  // RawImage holds every format and size
  const std::string name(to_string(codec));
  if (av_format(format) == AV_PIX_FMT_NONE)
    throw InvalidFrame("format", std::string(to_string(format)) + " frames cannot be recorded as " + name +
                                     "; record them with codec raw");
  if (width % 2 != 0 || height % 2 != 0 || width == 0 || height == 0)
    throw InvalidFrame("width", name + " recording needs an even width and height (4:2:0), not " +
                                    std::to_string(width) + "x" + std::to_string(height) +
                                    "; record with codec raw");
}

Colorimetry video_colorimetry(PixelFormat format, std::uint32_t height, const Colorimetry& frame) {
  if (is_yuv(format)) return frame;
  Colorimetry c;
  c.matrix = height <= 576 ? ColorMatrix::BT601 : ColorMatrix::BT709;
  c.range = ColorRange::Limited;
  c.siting = ChromaSiting::Center;  // swscale averages 2x2 blocks
  return c;
}

struct VideoEncoder::Impl {
  AVCodecContext* ctx = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  SwsContext* sws = nullptr;
  ~Impl() {
    sws_freeContext(sws);
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&ctx);
  }
};

VideoEncoder::VideoEncoder(VideoCodec codec, const VideoOptions& options, PixelFormat format, std::uint32_t width,
                           std::uint32_t height, const Colorimetry& colorimetry)
    : impl_(std::make_unique<Impl>()), format_(format), width_(width), height_(height) {
  check_video_frame(codec, format, width, height);
  quiet_av_log();
  const char* encoder = codec == VideoCodec::H265 ? "libx265" : "libx264";
  const AVCodec* c = avcodec_find_encoder_by_name(encoder);
  if (!c) throw Error(std::string("recording as ") + std::string(to_string(codec)) + ": libavcodec has no " + encoder);
  Impl& m = *impl_;
  m.ctx = avcodec_alloc_context3(c);
  m.frame = av_frame_alloc();
  m.packet = av_packet_alloc();
  if (!m.ctx || !m.frame || !m.packet) throw std::bad_alloc();
  m.ctx->width = int(width);
  m.ctx->height = int(height);
  m.ctx->pix_fmt = AV_PIX_FMT_YUV420P;
  m.ctx->time_base = AVRational{1, 1'000'000};  // pts in microseconds
  m.ctx->framerate = AVRational{30, 1};         // a rate-control hint only; pts carry the real times
  m.ctx->max_b_frames = 0;                      // decode order = display order (Foxglove needs it)
  m.ctx->gop_size = 600;  // the time-based keyframes (VideoOptions) come first at any rate >= 0.6 / s
  // No AV_CODEC_FLAG_GLOBAL_HEADER: the wrappers then repeat SPS / PPS (/ VPS) before every keyframe, in Annex B.
  set_vui(*m.ctx, colorimetry);
  av_opt_set(m.ctx->priv_data, "preset", options.preset.c_str(), 0);
  av_opt_set_double(m.ctx->priv_data, "crf", options.crf, 0);
  av_opt_set_int(m.ctx->priv_data, "forced-idr", 1, 0);  // a forced keyframe is an IDR, not an open-GOP I
  if (codec == VideoCodec::H265) av_opt_set(m.ctx->priv_data, "x265-params", "log-level=error:open-gop=0", 0);
  if (const int err = avcodec_open2(m.ctx, c, nullptr); err < 0)
    throw Error(std::string(encoder) + ": cannot open the encoder for " + std::to_string(width) + "x" +
                std::to_string(height) + ": " + av_text(err));
  m.frame->format = AV_PIX_FMT_YUV420P;
  m.frame->width = int(width);
  m.frame->height = int(height);
  if (const int err = av_frame_get_buffer(m.frame, 0); err < 0) throw Error("av_frame_get_buffer: " + av_text(err));
  m.sws = sws_getContext(int(width), int(height), av_format(format), int(width), int(height), AV_PIX_FMT_YUV420P,
                         SWS_BILINEAR, nullptr, nullptr, nullptr);
  if (!m.sws) throw Error("sws_getContext: cannot convert " + std::string(to_string(format)) + " to yuv420p");
  // RGB / gray in: the matrix and range written (YUV in: the same both sides, so no conversion).
  const int* table = sws_getCoefficients(sws_matrix(colorimetry.matrix));
  const bool src_full = !is_yuv(format) || colorimetry.range == ColorRange::Full;
  const bool dst_full = colorimetry.range == ColorRange::Full;
  sws_setColorspaceDetails(m.sws, table, src_full ? 1 : 0, table, dst_full ? 1 : 0, 0, 1 << 16, 1 << 16);
}

VideoEncoder::~VideoEncoder() = default;

void VideoEncoder::encode(const Frame& frame, std::int64_t pts, bool keyframe, std::vector<EncodedUnit>& out) {
  Impl& m = *impl_;
  if (const int err = av_frame_make_writable(m.frame); err < 0) throw Error("av_frame_make_writable: " + av_text(err));
  const std::uint8_t* src[4] = {};
  int src_pitch[4] = {};
  for (int p = 0; p < plane_count(frame.format); ++p) {
    src[p] = static_cast<const std::uint8_t*>(frame.planes[std::size_t(p)].data);
    src_pitch[p] = int(frame.planes[std::size_t(p)].pitch);
  }
  sws_scale(m.sws, src, src_pitch, 0, int(frame.height), m.frame->data, m.frame->linesize);
  m.frame->pts = pts;
  m.frame->pict_type = keyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
  m.frame->key_frame = keyframe ? 1 : 0;
  if (const int err = avcodec_send_frame(m.ctx, m.frame); err < 0) throw Error("encoding a frame: " + av_text(err));
  receive(out);
}

void VideoEncoder::flush(std::vector<EncodedUnit>& out) {
  if (const int err = avcodec_send_frame(impl_->ctx, nullptr); err < 0 && err != AVERROR_EOF)
    throw Error("draining the encoder: " + av_text(err));
  receive(out);
}

void VideoEncoder::receive(std::vector<EncodedUnit>& out) {
  Impl& m = *impl_;
  for (;;) {
    const int err = avcodec_receive_packet(m.ctx, m.packet);
    if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return;
    if (err < 0) throw Error("encoding: " + av_text(err));
    EncodedUnit u;
    u.data.assign(m.packet->data, m.packet->data + m.packet->size);
    u.pts = m.packet->pts;
    u.key = (m.packet->flags & AV_PKT_FLAG_KEY) != 0;
    av_packet_unref(m.packet);
    out.push_back(std::move(u));
  }
}

}  // namespace handoff::media
