#include "mcap_format.hpp"

#include <handoff/error.hpp>
#include <handoff/unique_handle.hpp>
#include <handoff/media/error.hpp>

#include <isa-l/crc.h>
#include <lz4frame.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

namespace handoff::media::mcap {

std::string record_name(std::uint8_t opcode) {
  static constexpr const char* kNames[] = {nullptr,      "Header",     "Footer",         "Schema",
                                           "Channel",    "Message",    "Chunk",          "MessageIndex",
                                           "ChunkIndex", "Attachment", "AttachmentIndex", "Statistics",
                                           "Metadata",   "MetadataIndex", "SummaryOffset", "DataEnd"};
  if (opcode >= 1 && opcode <= 0x0F) return kNames[opcode];
  char buf[32];
  std::snprintf(buf, sizeof buf, "record 0x%02X", unsigned(opcode));
  return buf;
}

std::string_view compression_field(Compression c) {
  switch (c) {
    case Compression::None: return "";
    case Compression::Zstd: return "zstd";
    case Compression::Lz4: return "lz4";
  }
  return "";
}

std::optional<Compression> compression_from_field(std::string_view field) {
  if (field.empty()) return Compression::None;
  if (field == "zstd") return Compression::Zstd;
  if (field == "lz4") return Compression::Lz4;
  return std::nullopt;
}

Compression parse_compression(std::string_view name) {
  if (name == "none") return Compression::None;
  if (name == "zstd") return Compression::Zstd;
  if (name == "lz4") return Compression::Lz4;
  throw UsageError("compression " + detail::quoted(name) + ": expected none, zstd or lz4");
}

}  // namespace handoff::media::mcap

namespace handoff::media::mcap::detail {
namespace {

struct ZstdCctxFree {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct ZstdDctxFree {
  void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
};
struct Lz4DctxFree {
  void operator()(LZ4F_dctx* c) const noexcept { LZ4F_freeDecompressionContext(c); }
};
using UniqueZstdCctx = UniqueHandle<ZSTD_CCtx*, ZstdCctxFree>;
using UniqueZstdDctx = UniqueHandle<ZSTD_DCtx*, ZstdDctxFree>;
using UniqueLz4Dctx = UniqueHandle<LZ4F_dctx*, Lz4DctxFree>;

template <typename T>
void store_le(std::vector<std::uint8_t>& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}

}  // namespace

std::uint32_t crc32(std::uint32_t crc, std::span<const std::uint8_t> bytes) {
  // ISA-L's gzip CRC is zlib's CRC-32 (same polynomial, reflection and
  // chaining), computed with carry-less multiplication where the CPU has it.
  return ::crc32_gzip_refl(crc, bytes.data(), bytes.size());
}

std::uint32_t crc32_combine(std::uint32_t crc_a, std::uint32_t crc_b, std::uint64_t length_b) {
  static_assert(sizeof(z_off_t) == 8, "64-bit file offsets");
  return std::uint32_t(::crc32_combine(crc_a, crc_b, z_off_t(length_b)));
}

std::uint16_t load_u16(const std::uint8_t* p) { return std::uint16_t(p[0] | (p[1] << 8)); }
std::uint32_t load_u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) | (std::uint32_t(p[3]) << 24);
}
std::uint64_t load_u64(const std::uint8_t* p) { return std::uint64_t(load_u32(p)) | (std::uint64_t(load_u32(p + 4)) << 32); }

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", unsigned(v));
  return buf;
}

std::string quoted(std::string_view text) {
  std::string q;
  q.reserve(text.size() + 2);
  q += '"';
  q += text;
  q += '"';
  return q;
}

// --- Builder ------------------------------------------------------------------------

void Builder::u16(std::uint16_t v) { store_le(out_, v); }
void Builder::u32(std::uint32_t v) { store_le(out_, v); }
void Builder::u64(std::uint64_t v) { store_le(out_, v); }
void Builder::string(std::string_view s) {
  if (s.size() > std::numeric_limits<std::uint32_t>::max()) throw UsageError("MCAP string longer than 4 GiB");
  u32(std::uint32_t(s.size()));
  out_.insert(out_.end(), s.begin(), s.end());
}
void Builder::raw(std::span<const std::uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
void Builder::string_map(const StringMap& m) {
  const std::size_t at = out_.size();
  u32(0);
  for (const auto& [k, v] : m) {
    string(k);
    string(v);
  }
  const std::uint64_t n = out_.size() - at - 4;
  if (n > std::numeric_limits<std::uint32_t>::max()) throw UsageError("MCAP map longer than 4 GiB");
  for (int i = 0; i < 4; ++i) out_[at + i] = std::uint8_t(n >> (8 * i));
}
std::size_t Builder::begin_record(Opcode op) {
  const std::size_t at = out_.size();
  u8(std::uint8_t(op));
  u64(0);
  return at;
}
void Builder::end_record(std::size_t begin) {
  const std::uint64_t n = out_.size() - begin - kRecordHeaderBytes;
  for (int i = 0; i < 8; ++i) out_[begin + 1 + i] = std::uint8_t(n >> (8 * i));
}

// --- Cursor -------------------------------------------------------------------------

std::string RecordPlace::location() const {
  if (chunk_start == kNotInChunk) return record_name(opcode) + " at byte " + std::to_string(offset);
  return record_name(opcode) + " at offset " + std::to_string(offset) + " of the Chunk at byte " +
         std::to_string(chunk_start);
}

void Cursor::fail(const char* field, const std::string& detail) const {
  throw ParseError(std::string(where_.file), where_.location(), field, detail);
}

void Cursor::need(const char* field, std::uint64_t n) const {
  const std::size_t left = bytes_.size() - pos_;
  if (n > left) {
    fail(field, "needs " + std::to_string(n) + " bytes but the record has " + std::to_string(left) + " left");
  }
}

std::uint8_t Cursor::u8(const char* field) {
  need(field, 1);
  return bytes_[pos_++];
}
std::uint16_t Cursor::u16(const char* field) {
  need(field, 2);
  pos_ += 2;
  return load_u16(bytes_.data() + pos_ - 2);
}
std::uint32_t Cursor::u32(const char* field) {
  need(field, 4);
  pos_ += 4;
  return load_u32(bytes_.data() + pos_ - 4);
}
std::uint64_t Cursor::u64(const char* field) {
  need(field, 8);
  pos_ += 8;
  return load_u64(bytes_.data() + pos_ - 8);
}
std::span<const std::uint8_t> Cursor::bytes(const char* field, std::uint64_t n) {
  need(field, n);
  auto s = bytes_.subspan(pos_, std::size_t(n));
  pos_ += std::size_t(n);
  return s;
}
std::string_view Cursor::string(const char* field) {
  auto s = prefixed32(field);
  return {reinterpret_cast<const char*>(s.data()), s.size()};
}
std::span<const std::uint8_t> Cursor::prefixed32(const char* field) { return bytes(field, u32(field)); }
std::span<const std::uint8_t> Cursor::prefixed64(const char* field) { return bytes(field, u64(field)); }

StringMap Cursor::string_map(const char* field) {
  Cursor inner(prefixed32(field), where_);
  StringMap m;
  while (!inner.rest().empty()) {
    std::string k(inner.string(field));
    std::string v(inner.string(field));
    m.emplace_back(std::move(k), std::move(v));
  }
  return m;
}

// --- Compression ----------------------------------------------------------------------

struct Compressor::Impl {
  Compression kind;
  int level;
  UniqueZstdCctx zstd;
};

Compressor::Compressor(Compression c, int level) : impl_(std::make_unique<Impl>(Impl{c, level, {}})) {
  if (c == Compression::Zstd) {
    impl_->zstd = UniqueZstdCctx(ZSTD_createCCtx());
    if (!impl_->zstd) throw Error(Api::None, "ZSTD_createCCtx", 0, "", "out of memory");
  }
}
Compressor::~Compressor() = default;

void Compressor::compress(std::span<const std::uint8_t> in, std::vector<std::uint8_t>& out) {
  if (impl_->kind == Compression::Zstd) {
    out.resize(ZSTD_compressBound(in.size()));
    const std::size_t n =
        ZSTD_compressCCtx(impl_->zstd.get(), out.data(), out.size(), in.data(), in.size(), impl_->level);
    if (ZSTD_isError(n)) throw Error(Api::None, "ZSTD_compressCCtx", long(n), ZSTD_getErrorName(n), "");
    out.resize(n);
  } else if (impl_->kind == Compression::Lz4) {
    LZ4F_preferences_t prefs{};
    prefs.frameInfo.contentSize = in.size();
    prefs.compressionLevel = impl_->level;
    out.resize(LZ4F_compressFrameBound(in.size(), &prefs));
    const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), in.data(), in.size(), &prefs);
    if (LZ4F_isError(n)) throw Error(Api::None, "LZ4F_compressFrame", long(n), LZ4F_getErrorName(n), "");
    out.resize(n);
  } else {
    throw UsageError("Compressor: no compression to do");
  }
}

namespace {

UniqueLz4Dctx make_lz4_dctx() {
  LZ4F_dctx* raw = nullptr;
  const std::size_t made = LZ4F_createDecompressionContext(&raw, LZ4F_VERSION);
  UniqueLz4Dctx ctx(raw);
  if (LZ4F_isError(made)) throw Error(Api::None, "LZ4F_createDecompressionContext", 0, LZ4F_getErrorName(made), "");
  return ctx;
}

void decompress_zstd(UniqueZstdDctx& ctx, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
                     const RecordPlace& where) {
  if (!ctx) ctx = UniqueZstdDctx(ZSTD_createDCtx());
  if (!ctx) throw Error(Api::None, "ZSTD_createDCtx", 0, "", "out of memory");
  const std::size_t n = ZSTD_decompressDCtx(ctx.get(), out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n)) {
    throw ParseError(std::string(where.file), where.location(), "records",
                     std::string("zstd: ") + ZSTD_getErrorName(n));
  }
  if (n != out.size()) {
    throw ParseError(std::string(where.file), where.location(), "records",
                     "zstd data decompresses to " + std::to_string(n) + " bytes, uncompressed_size says " +
                         std::to_string(out.size()));
  }
}

void decompress_lz4(UniqueLz4Dctx& ctx, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
                    const RecordPlace& where) {
  auto fail = [&](const std::string& detail) {
    throw ParseError(std::string(where.file), where.location(), "records", "lz4: " + detail);
  };
  if (!ctx) ctx = make_lz4_dctx();
  LZ4F_resetDecompressionContext(ctx.get());  // a failed frame may have left it mid-frame
  std::size_t src_done = 0, dst_done = 0;
  for (;;) {
    std::size_t src_n = in.size() - src_done, dst_n = out.size() - dst_done;
    const std::size_t r = LZ4F_decompress(ctx.get(), out.data() + dst_done, &dst_n, in.data() + src_done, &src_n, nullptr);
    if (LZ4F_isError(r)) fail(LZ4F_getErrorName(r));
    src_done += src_n;
    dst_done += dst_n;
    if (r == 0) break;  // frame complete
    if (src_n == 0 && dst_n == 0) {
      fail(src_done == in.size() ? "the frame ends early (truncated data)"
                                 : "data decompresses to more than uncompressed_size (" +
                                       std::to_string(out.size()) + " bytes)");
    }
  }
  if (dst_done != out.size()) {
    fail("data decompresses to " + std::to_string(dst_done) + " bytes, uncompressed_size says " +
         std::to_string(out.size()));
  }
  if (src_done != in.size()) fail(std::to_string(in.size() - src_done) + " bytes follow the end of the lz4 frame");
}

// Decoding a stream cut short: `out` grows with what is decoded (doubling,
// from 64 KiB) up to `limit`, so a claimed size the input cannot fill is
// never allocated. Both decoders keep the history they refer back to in
// their own buffers, so `out` may move between calls.
class PrefixOutput {
 public:
  PrefixOutput(std::vector<std::uint8_t>& out, std::size_t limit, const RecordPlace& where)
      : out_(out), limit_(limit), where_(where) {
    out_.clear();
  }
  // Where the decoder writes next: into `out` (at least `at_least` bytes of
  // room while `limit` allows), or, once it holds `limit` bytes, into a
  // one-byte probe that must stay empty.
  std::pair<std::uint8_t*, std::size_t> room(std::size_t at_least = 1) {
    if (out_.size() - used_ < at_least && out_.size() < limit_) {
      out_.resize(std::min(limit_, std::max({out_.size() * 2, std::size_t(64) << 10, used_ + at_least})));
    }
    if (used_ < out_.size()) return {out_.data() + used_, out_.size() - used_};
    return {&probe_, 1};
  }
  // The decoder wrote `n` bytes where room() said.
  void wrote(std::size_t n, const char* algorithm) {
    if (n == 0) return;
    if (used_ == out_.size()) {
      fail(std::string(algorithm) + ": data decompresses to more than uncompressed_size (" + std::to_string(limit_) +
           " bytes)");
    }
    used_ += n;
  }
  // What the decoder made of the bytes so far is all there is: `reason` says why.
  std::string stop(std::string reason) {
    finish();
    return reason;
  }
  void finish() { out_.resize(used_); }
  [[noreturn]] void fail(const std::string& detail) const {
    throw ParseError(std::string(where_.file), where_.location(), "records", detail);
  }

 private:
  std::vector<std::uint8_t>& out_;
  std::size_t limit_;
  const RecordPlace& where_;
  std::size_t used_ = 0;
  std::uint8_t probe_ = 0;
};

std::string decompress_zstd_prefix(std::span<const std::uint8_t> in, std::size_t limit, std::vector<std::uint8_t>& out,
                                   const RecordPlace& where) {
  UniqueZstdDctx ctx(ZSTD_createDCtx());
  if (!ctx) throw Error(Api::None, "ZSTD_createDCtx", 0, "", "out of memory");
  // The streaming decoder allocates the window a frame header asks for: no
  // more than what the chunk may decode to (1 MiB at least, as encoders
  // round windows up; 128 MiB at most, zstd's own default limit).
  int window_log = 20;
  while (window_log < 27 && (std::size_t(1) << window_log) < limit) ++window_log;
  const std::size_t set = ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, window_log);
  if (ZSTD_isError(set)) {
    throw Error(Api::None, "ZSTD_DCtx_setParameter", long(set), ZSTD_getErrorName(set), "windowLogMax");
  }
  PrefixOutput dst(out, limit, where);
  // Input a few KiB at a time and room for a whole block each call: each
  // block is written out as soon as its bytes are in, so bad bytes cost the
  // block they are in and nothing decoded before them.
  constexpr std::size_t kStep = 4096;
  const std::size_t block = ZSTD_DStreamOutSize();
  std::size_t fed = 0;
  ZSTD_inBuffer src{in.data(), 0, 0};
  for (;;) {
    if (src.pos == src.size && fed < in.size()) src.size = fed = std::min(in.size(), fed + kStep);
    const auto [room, room_n] = dst.room(block);
    ZSTD_outBuffer o{room, room_n, 0};
    const std::size_t src_before = src.pos;
    const std::size_t r = ZSTD_decompressStream(ctx.get(), &o, &src);
    dst.wrote(o.pos, "zstd");  // what the call wrote before any error it met
    if (ZSTD_isError(r)) return dst.stop(std::string("zstd: ") + ZSTD_getErrorName(r));
    if (r == 0 && src.pos == in.size()) break;  // every frame present was whole
    if (o.pos == 0 && src.pos == src_before && fed == in.size()) break;  // the rest needs bytes the file does not have
  }
  return dst.stop("");
}

std::string decompress_lz4_prefix(std::span<const std::uint8_t> in, std::size_t limit, std::vector<std::uint8_t>& out,
                                  const RecordPlace& where) {
  const UniqueLz4Dctx ctx = make_lz4_dctx();
  PrefixOutput dst(out, limit, where);
  std::size_t src_done = 0;
  // Input a few KiB at a time, so bad bytes cost at most the block they are
  // in and nothing decoded before them.
  constexpr std::size_t kStep = 4096;
  for (;;) {
    auto [room, dst_n] = dst.room();
    std::size_t src_n = std::min(kStep, in.size() - src_done);
    const std::size_t r = LZ4F_decompress(ctx.get(), room, &dst_n, in.data() + src_done, &src_n, nullptr);
    if (LZ4F_isError(r)) return dst.stop(std::string("lz4: ") + LZ4F_getErrorName(r));
    dst.wrote(dst_n, "lz4");
    src_done += src_n;
    if (r == 0) {  // the frame ended within the bytes present
      if (src_done != in.size()) {
        return dst.stop("lz4: " + std::to_string(in.size() - src_done) + " bytes follow the end of the lz4 frame");
      }
      break;
    }
    if (dst_n == 0 && src_n == 0) break;  // the rest needs bytes the file does not have
  }
  return dst.stop("");
}

}  // namespace

struct Decompressor::Impl {
  UniqueZstdDctx zstd;
  UniqueLz4Dctx lz4;
};

Decompressor::Decompressor() : impl_(std::make_unique<Impl>()) {}
Decompressor::~Decompressor() = default;

void Decompressor::run(Compression c, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
                       const RecordPlace& where) {
  switch (c) {
    case Compression::Zstd: return decompress_zstd(impl_->zstd, in, out, where);
    case Compression::Lz4: return decompress_lz4(impl_->lz4, in, out, where);
    case Compression::None:
      if (in.size() != out.size()) {
        throw ParseError(std::string(where.file), where.location(), "records",
                         std::to_string(in.size()) + " bytes of uncompressed records, uncompressed_size says " +
                             std::to_string(out.size()));
      }
      if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
      return;
  }
}

std::string Decompressor::run_prefix(Compression c, std::span<const std::uint8_t> in, std::uint64_t limit,
                                     std::vector<std::uint8_t>& out, const RecordPlace& where) {
  const auto cap = std::size_t(std::min<std::uint64_t>(limit, std::numeric_limits<std::size_t>::max()));
  switch (c) {
    case Compression::Zstd: return decompress_zstd_prefix(in, cap, out, where);
    case Compression::Lz4: return decompress_lz4_prefix(in, cap, out, where);
    case Compression::None:
      out.assign(in.begin(), in.begin() + std::ptrdiff_t(std::min<std::size_t>(in.size(), cap)));
      return {};
  }
  return {};
}

}  // namespace handoff::media::mcap::detail
