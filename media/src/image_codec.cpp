// JPEG (libjpeg-turbo's libjpeg API) and PNG (libspng) decoding for
// compressed images in recordings.
#include <handoff/media/image_codec.hpp>

#include "mcap_format.hpp"

#include <handoff/frame_validate.hpp>
#include <handoff/media/error.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <spng.h>

#include <cctype>
#include <climits>
#include <csetjmp>
#include <cstdio>
#include <algorithm>
#include <cstring>
// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

namespace handoff::media {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A size the decoders may allocate for; "" when it fits.
std::string size_problem(std::uint64_t width, std::uint64_t height) {
  for (auto [name, v] : {std::pair{"width", width}, std::pair{"height", height}}) {
    if (std::string p = dimension_problem(name, v); !p.empty()) return p;
  }
  if (width * height > kMaxDecodedPixels) {
    return std::to_string(width) + "x" + std::to_string(height) + " is past the " +
           std::to_string(kMaxDecodedPixels) + " pixels handoff decodes";
  }
  return {};
}

// libjpeg reports errors through error_exit, which must not return: it
// longjmps back to decode_jpeg_rows. Corrupt-data warnings (emit_message
// level -1) are errors too: the picture they leave is partly grey.
struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_fail(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErrors*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_message(j_common_ptr c, int level) {
  if (level < 0) jpeg_fail(c);  // a warning: the data is corrupt
}

// Only trivially destructible objects live in this frame (longjmp skips destructors).
// Returns "" on success, else what went wrong.
std::string decode_jpeg(std::span<const std::uint8_t> data, DecodedPicture& out) {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = jpeg_fail;
  errors.mgr.emit_message = jpeg_message;
  errors.message[0] = '\0';
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return std::string("corrupt JPEG: ") + errors.message;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data.data(), static_cast<unsigned long>(data.size()));
  if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) {
    jpeg_destroy_decompress(&cinfo);
    return "corrupt JPEG: no image in the data (tables only)";
  }
  const bool gray = cinfo.jpeg_color_space == JCS_GRAYSCALE;
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
    jpeg_destroy_decompress(&cinfo);
    return "CMYK JPEG is not supported (handoff shows grayscale and colour JPEG)";
  }
  if (const std::string p = size_problem(cinfo.image_width, cinfo.image_height); !p.empty()) {
    jpeg_destroy_decompress(&cinfo);
    return "JPEG image " + p;
  }
  cinfo.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.format = gray ? PixelFormat::GRAY8 : PixelFormat::RGB8;
  out.width = cinfo.output_width;
  out.height = cinfo.output_height;
  out.stride = std::size_t(out.width) * std::size_t(cinfo.output_components);
  out.pixels.resize(out.stride * out.height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.pixels.data() + std::size_t(cinfo.output_scanline) * out.stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return {};
}

struct Spng {
  spng_ctx* ctx = spng_ctx_new(0);
  ~Spng() { spng_ctx_free(ctx); }
  Spng() = default;
  Spng(const Spng&) = delete;
  Spng& operator=(const Spng&) = delete;
};

std::string spng_problem(int rc) { return std::string("corrupt PNG: ") + spng_strerror(rc); }

// Returns "" on success, else what went wrong.
std::string decode_png_picture(std::span<const std::uint8_t> data, DecodedPicture& out) {
  Spng png;
  if (!png.ctx) return "out of memory";
  // Ancillary chunks are capped so a corrupt length cannot ask for much memory.
  spng_set_chunk_limits(png.ctx, std::size_t(1) << 24, std::size_t(1) << 26);
  if (int rc = spng_set_png_buffer(png.ctx, data.data(), data.size())) return spng_problem(rc);
  spng_ihdr ihdr{};
  if (int rc = spng_get_ihdr(png.ctx, &ihdr)) return spng_problem(rc);
  if (const std::string p = size_problem(ihdr.width, ihdr.height); !p.empty()) return "PNG image " + p;
  int fmt = SPNG_FMT_RGBA8;
  std::size_t bytes_per_pixel = 4;
  out.format = PixelFormat::RGB8;
  if (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth == 16) {
    fmt = SPNG_FMT_PNG;  // 16-bit samples in host byte order
    bytes_per_pixel = 2;
    out.format = PixelFormat::GRAY16;
  } else if (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE) {
    fmt = SPNG_FMT_G8;
    bytes_per_pixel = 1;
    out.format = PixelFormat::GRAY8;
  } else if (ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA) {
    fmt = SPNG_FMT_GA8;
    bytes_per_pixel = 2;
    out.format = PixelFormat::GRAY8;
  }
  std::size_t size = 0;
  if (int rc = spng_decoded_image_size(png.ctx, fmt, &size)) return spng_problem(rc);
  out.width = ihdr.width;
  out.height = ihdr.height;
  out.pixels.resize(size);
  if (int rc = spng_decode_image(png.ctx, out.pixels.data(), size, fmt, 0)) return spng_problem(rc);
  // Drop alpha in place (RGBA8 -> RGB8, GA8 -> G8): each pixel moves left, never over one not yet read.
  const std::size_t keep = out.format == PixelFormat::RGB8 ? 3 : out.format == PixelFormat::GRAY16 ? 2 : 1;
  if (keep != bytes_per_pixel) {
    const std::size_t n = std::size_t(out.width) * out.height;
    for (std::size_t i = 0; i < n; ++i) std::memmove(&out.pixels[i * keep], &out.pixels[i * bytes_per_pixel], keep);
  }
  out.stride = std::size_t(out.width) * keep;
  out.pixels.resize(out.stride * out.height);
  return {};
}

}  // namespace

std::optional<ImageCodec> image_codec(std::string_view format) {
  // ROS's "<encoding>; <codec> compressed <encoding>" names the codec after "; ".
  const std::string f = lower(format);
  const auto semi = f.find(';');
  std::string_view rest = semi == std::string::npos ? std::string_view(f) : std::string_view(f).substr(semi + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const std::string_view word = rest.substr(0, rest.find(' '));
  if (word == "jpeg" || word == "jpg") return ImageCodec::Jpeg;
  if (word == "png") return ImageCodec::Png;
  return std::nullopt;
}

std::string_view DecodedPicture::encoding() const {
  return format == PixelFormat::GRAY8 ? "mono8" : format == PixelFormat::GRAY16 ? "mono16" : "rgb8";
}

void decode_picture(ImageCodec codec, std::span<const std::uint8_t> data, DecodedPicture& out,
                    const MessagePlace& where, const std::string& field) {
  const std::string problem = codec == ImageCodec::Jpeg ? decode_jpeg(data, out) : decode_png_picture(data, out);
  if (!problem.empty()) {
    out.width = out.height = 0;
    throw ParseError(std::string(where.file), where.location(), field, problem);
  }
}

CompressedImageView parse_compressed_image(std::span<const std::uint8_t> bytes, const MessagePlace& where) {
  using google::protobuf::io::CodedInputStream;
  using WFL = google::protobuf::internal::WireFormatLite;
  auto fail = [&](const std::string& detail) {
    throw ParseError(std::string(where.file), where.location(), "CompressedImage", detail);
  };
  if (bytes.size() > std::size_t(INT_MAX)) fail("message larger than 2 GiB");
  CodedInputStream in(bytes.data(), int(bytes.size()));
  CompressedImageView v;
  while (const std::uint32_t tag = in.ReadTag()) {
    const int field = WFL::GetTagFieldNumber(tag);
    if (WFL::GetTagWireType(tag) != WFL::WIRETYPE_LENGTH_DELIMITED || field < 1 || field > 3) {
      if (!WFL::SkipField(&in, tag)) fail("malformed field " + std::to_string(field));
      continue;
    }
    std::uint32_t n = 0;
    if (!in.ReadVarint32(&n)) fail("truncated length");
    const int at = in.CurrentPosition();
    if (!in.Skip(int(std::min<std::uint32_t>(n, INT_MAX)))) fail("a length-delimited field runs past the end of the message");
    const auto s = bytes.subspan(std::size_t(at), n);
    if (field == 2) v.data = s;
    if (field == 3) v.format = {reinterpret_cast<const char*>(s.data()), s.size()};
    if (field == 1) {  // google.protobuf.Timestamp: seconds 1, nanos 2
      const char* error = nullptr;
      v.timestamp_ns = mcap::detail::protobuf_timestamp_ns(s, error);
      if (error) fail(error);
      v.has_timestamp = true;
    }
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != int(bytes.size())) fail("malformed message");
  return v;
}

RawImageView decode_compressed_image(const CompressedImageView& message, DecodedPicture& picture,
                                     const MessagePlace& where) {
  const auto codec = image_codec(message.format);
  if (!codec) {
    throw ParseError(std::string(where.file), where.location(), "CompressedImage.format",
                     "unsupported format \"" + std::string(message.format) + "\" (handoff decodes jpeg and png)");
  }
  decode_picture(*codec, message.data, picture, where, "CompressedImage.data");
  RawImageView v;
  v.width = picture.width;
  v.height = picture.height;
  v.step = std::uint32_t(picture.stride);
  v.encoding = picture.encoding();
  v.data = picture.pixels;
  v.has_timestamp = message.has_timestamp;
  v.timestamp_ns = message.timestamp_ns;
  return v;
}

}  // namespace handoff::media
