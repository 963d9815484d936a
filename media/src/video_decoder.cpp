// libavcodec decoding of H.264 / H.265 access units into NV12 (see
// video_decoder.hpp). Written against FFmpeg's send/receive API
// (avcodec_send_packet / avcodec_receive_frame).
#include <handoff/media/video_decoder.hpp>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

namespace handoff::media {

std::optional<VideoCodec> video_codec(std::string_view format) {
  // Publishers differ in case and spelling ("h264", "H264", "H.264"; ROS
  // CompressedImage has no fixed list), so the name is compared folded.
  const auto b = format.find_first_not_of(" \t");
  const auto e = format.find_last_not_of(" \t");
  std::string f;
  if (b != std::string_view::npos) {
    for (char c : format.substr(b, e - b + 1)) f += char(std::tolower(static_cast<unsigned char>(c)));
  }
  if (f == "h264" || f == "h.264") return VideoCodec::H264;
  if (f == "h265" || f == "h.265" || f == "hevc") return VideoCodec::H265;
  return std::nullopt;
}

namespace {

std::string av_error(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

// Length of the start code at `i` (3 or 4 bytes), 0 when none.
std::size_t start_code_at(std::span<const std::uint8_t> b, std::size_t i) {
  if (i + 3 <= b.size() && b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1) return 3;
  if (i + 4 <= b.size() && b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 0 && b[i + 3] == 1) return 4;
  return 0;
}

// The NAL unit types that matter here (H.264 table 7-1, H.265 table 7-1).
enum : int { kH264Idr = 5, kH264Sps = 7, kH264Pps = 8 };
enum : int { kH265IrapFirst = 16, kH265IrapLast = 21, kH265Vps = 32, kH265Sps = 33, kH265Pps = 34 };

}  // namespace

AccessUnitInfo scan_access_unit(VideoCodec codec, std::span<const std::uint8_t> au) {
  if (au.empty()) throw VideoDecodeError("empty access unit");
  std::size_t at = start_code_at(au, 0);
  if (at == 0) {
    throw VideoDecodeError("does not start with an Annex B start code (00 00 01); length-prefixed (AVCC/HVCC) "
                           "data is not supported");
  }
  AccessUnitInfo info;
  bool vps = false, sps = false, pps = false;
  const std::size_t header = codec == VideoCodec::H264 ? 1 : 2;
  for (;;) {
    const std::size_t begin = at;
    std::size_t end = begin, next = 0;
    while (end < au.size() && (next = start_code_at(au, end)) == 0) ++end;
    // A NAL unit's trailing zero bytes belong to the next start code (00 00 00 01).
    const std::string where = "NAL unit " + std::to_string(info.nal_units) + " (byte " + std::to_string(begin) + ")";
    if (end - begin < header) throw VideoDecodeError(where + " is empty or shorter than its header");
    const std::uint8_t h0 = au[begin];
    if (h0 & 0x80) throw VideoDecodeError(where + " has its forbidden_zero_bit set");
    if (codec == VideoCodec::H264) {
      const int type = h0 & 0x1f;
      info.keyframe |= type == kH264Idr;
      sps |= type == kH264Sps;
      pps |= type == kH264Pps;
    } else {
      const int type = (h0 >> 1) & 0x3f;
      if ((au[begin + 1] & 0x07) == 0) throw VideoDecodeError(where + " has nuh_temporal_id_plus1 0");
      info.keyframe |= type >= kH265IrapFirst && type <= kH265IrapLast;
      vps |= type == kH265Vps;
      sps |= type == kH265Sps;
      pps |= type == kH265Pps;
    }
    ++info.nal_units;
    if (end == au.size()) break;
    at = end + next;
  }
  info.parameter_sets = sps && pps && (codec == VideoCodec::H264 || vps);
  return info;
}

struct VideoDecoder::State {
  AVCodecContext* context = nullptr;
  AVPacket* packet = nullptr;
  AVFrame* frame = nullptr;
  bool have_picture = false;
  ~State() {
    av_frame_free(&frame);
    av_packet_free(&packet);
    avcodec_free_context(&context);
  }
};

VideoDecoder::VideoDecoder(VideoCodec codec, int threads) : s_(std::make_unique<State>()) {
  const AVCodec* c = avcodec_find_decoder(codec == VideoCodec::H264 ? AV_CODEC_ID_H264 : AV_CODEC_ID_HEVC);
  if (!c) throw Error("libavcodec has no " + std::string(to_string(codec)) + " decoder");
  s_->context = avcodec_alloc_context3(c);
  s_->packet = av_packet_alloc();
  s_->frame = av_frame_alloc();
  if (!s_->context || !s_->packet || !s_->frame) throw Error("libavcodec: out of memory");
  s_->context->thread_count = threads;
  // A hostile SPS cannot make it allocate pictures past 8K (7680x4320).
  s_->context->max_pixels = 7680 * 4320;
  // Bitstream errors fail the picture instead of being concealed: a corrupt
  // access unit is reported, not shown as a smeared frame.
  s_->context->err_recognition = AV_EF_EXPLODE | AV_EF_BITSTREAM;
  if (const int r = avcodec_open2(s_->context, c, nullptr); r < 0) {
    throw Error("avcodec_open2 (" + std::string(to_string(codec)) + "): " + av_error(r));
  }
}

VideoDecoder::~VideoDecoder() = default;

void VideoDecoder::send(std::span<const std::uint8_t> au, std::int64_t number) {
  // libavcodec reads up to AV_INPUT_BUFFER_PADDING_SIZE bytes past the data: a padded copy.
  if (const int r = av_new_packet(s_->packet, int(au.size())); r < 0) throw Error("av_new_packet: " + av_error(r));
  std::memcpy(s_->packet->data, au.data(), au.size());
  s_->packet->pts = number;
  s_->packet->dts = number;
  const int r = avcodec_send_packet(s_->context, s_->packet);
  av_packet_unref(s_->packet);
  if (r < 0) throw VideoDecodeError("libavcodec refused the access unit: " + av_error(r));
}

void VideoDecoder::drain() {
  const int r = avcodec_send_packet(s_->context, nullptr);
  if (r < 0 && r != AVERROR_EOF) throw VideoDecodeError("libavcodec: " + av_error(r));
}

std::optional<std::int64_t> VideoDecoder::receive() {
  s_->have_picture = false;
  const int r = avcodec_receive_frame(s_->context, s_->frame);
  if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return std::nullopt;
  if (r < 0) throw VideoDecodeError("libavcodec could not decode it: " + av_error(r));
  const AVFrame* f = s_->frame;
  if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT)) {
    throw VideoDecodeError("libavcodec decoded a corrupt picture (decode_error_flags " +
                           std::to_string(f->decode_error_flags) + ")");
  }
  const auto fmt = AVPixelFormat(f->format);
  if (fmt != AV_PIX_FMT_YUV420P && fmt != AV_PIX_FMT_YUVJ420P && fmt != AV_PIX_FMT_NV12) {
    const char* name = av_get_pix_fmt_name(fmt);
    throw VideoDecodeError(std::string("pictures are ") + (name ? name : "of an unknown format") +
                           ", handoff plays 8-bit 4:2:0 video");
  }
  s_->have_picture = true;
  return f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp : f->pts;
}

bool VideoDecoder::has_picture() const noexcept { return s_->have_picture; }

PictureInfo VideoDecoder::picture() const {
  if (!s_->have_picture) throw UsageError("VideoDecoder::picture: no picture received");
  const AVFrame* f = s_->frame;
  PictureInfo p;
  p.width = std::uint32_t(f->width);
  p.height = std::uint32_t(f->height);
  if (f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P) p.range = ColorRange::Full;
  else if (f->color_range == AVCOL_RANGE_MPEG) p.range = ColorRange::Limited;
  switch (f->colorspace) {
    case AVCOL_SPC_BT709: p.matrix = ColorMatrix::BT709; break;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: p.matrix = ColorMatrix::BT601; break;
    case AVCOL_SPC_BT2020_NCL: p.matrix = ColorMatrix::BT2020; break;
    default: break;
  }
  return p;
}

void VideoDecoder::copy_nv12(const FrameWriteTarget& t) const {
  const PictureInfo p = picture();
  const AVFrame* f = s_->frame;
  for (std::uint32_t y = 0; y < p.height; ++y)
    std::memcpy(t.luma + y * t.luma_pitch, f->data[0] + std::ptrdiff_t(y) * f->linesize[0], p.width);
  const std::uint32_t cw = (p.width + 1) / 2, ch = (p.height + 1) / 2;
  for (std::uint32_t y = 0; y < ch; ++y) {
    std::uint8_t* out = t.chroma + y * t.chroma_pitch;
    if (f->format == AV_PIX_FMT_NV12) {
      std::memcpy(out, f->data[1] + std::ptrdiff_t(y) * f->linesize[1], std::size_t(cw) * 2);
      continue;
    }
    const std::uint8_t* u = f->data[1] + std::ptrdiff_t(y) * f->linesize[1];
    const std::uint8_t* v = f->data[2] + std::ptrdiff_t(y) * f->linesize[2];
    for (std::uint32_t x = 0; x < cw; ++x) {
      out[2 * x] = u[x];
      out[2 * x + 1] = v[x];
    }
  }
}

void VideoDecoder::reset() {
  avcodec_flush_buffers(s_->context);
  s_->have_picture = false;
}

namespace {
// Whether this libavcodec's decoder `id` can decode into CUDA frames (NVDEC).
bool has_cuda_decoding(AVCodecID id) {
  const AVCodec* c = avcodec_find_decoder(id);
  for (int i = 0; c; ++i) {
    const AVCodecHWConfig* h = avcodec_get_hw_config(c, i);
    if (!h) break;
    if (h->device_type == AV_HWDEVICE_TYPE_CUDA) return true;
  }
  return false;
}
}  // namespace

std::vector<std::pair<std::string, std::string>> video_decoders_report() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [id, name] : {std::pair{AV_CODEC_ID_H264, "H.264 decode"}, std::pair{AV_CODEC_ID_HEVC, "H.265 decode"}}) {
    const AVCodec* c = avcodec_find_decoder(id);
    out.emplace_back(name, c ? "software (libavcodec " + std::string(c->name) + ", " LIBAVCODEC_IDENT ")"
                             : std::string("unavailable (this libavcodec has no such decoder)"));
  }
  const bool cuda = has_cuda_decoding(AV_CODEC_ID_H264) && has_cuda_decoding(AV_CODEC_ID_HEVC);
  out.emplace_back("NVDEC", std::string("unavailable: handoff does not use libavcodec's CUDA decoding yet (this libavcodec ") +
                                (cuda ? "has it" : "lacks it") + " for h264 and h265)");
  return out;
}

}  // namespace handoff::media
