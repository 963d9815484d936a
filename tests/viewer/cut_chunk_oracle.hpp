#pragma once
// What survives of a compressed chunk the end of a file cut into, worked out
// independently of the reader: the compressed bytes present are handed to
// each library's streaming decoder in one call per step, into one buffer as
// large as the whole chunk's records, and the decoded bytes are walked for
// whole Message records. The reader must keep exactly those messages.
#include <handoff/media/mcap.hpp>

#include "recording_test_util.hpp"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace handoff::media::test {

// Where a Chunk record's compressed records start (after its two times,
// uncompressed size and CRC, compression string and records length).
inline std::size_t chunk_records_at(const std::vector<std::uint8_t>& file, const Rec& chunk) {
  return chunk.content() + 8 + 8 + 8 + 4 + 4 + le32(file, chunk.content() + 28) + 8;
}
inline std::uint64_t chunk_uncompressed_size(const std::vector<std::uint8_t>& file, const Rec& chunk) {
  return le64(file, chunk.content() + 16);
}

// The bytes `present` (the start of a compressed stream) decode to; the
// whole stream decodes to `whole_size` bytes.
inline std::vector<std::uint8_t> decodable_prefix(mcap::Compression c, std::span<const std::uint8_t> present,
                                                  std::size_t whole_size) {
  std::vector<std::uint8_t> out(whole_size);
  std::size_t produced = 0;
  if (c == mcap::Compression::Zstd) {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    ZSTD_inBuffer in{present.data(), present.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{out.data(), out.size(), produced};
      const std::size_t before = in.pos;
      const std::size_t r = ZSTD_decompressStream(d, &o, &in);
      EXPECT_FALSE(ZSTD_isError(r)) << ZSTD_getErrorName(r);
      const bool progress = o.pos != produced || in.pos != before;
      produced = o.pos;
      if (ZSTD_isError(r) || r == 0 || !progress) break;
    }
    ZSTD_freeDCtx(d);
  } else if (c == mcap::Compression::Lz4) {
    LZ4F_dctx* d = nullptr;
    LZ4F_createDecompressionContext(&d, LZ4F_VERSION);
    std::size_t used = 0;
    for (;;) {
      std::size_t dst_n = out.size() - produced, src_n = present.size() - used;
      const std::size_t r = LZ4F_decompress(d, out.data() + produced, &dst_n, present.data() + used, &src_n, nullptr);
      EXPECT_FALSE(LZ4F_isError(r)) << LZ4F_getErrorName(r);
      produced += dst_n;
      used += src_n;
      if (LZ4F_isError(r) || r == 0 || (dst_n == 0 && src_n == 0)) break;
    }
    LZ4F_freeDecompressionContext(d);
  } else {
    produced = std::min(present.size(), whole_size);
    std::copy_n(present.begin(), produced, out.begin());
  }
  out.resize(produced);
  return out;
}

// The Message records (opcode 0x05) wholly inside `records`.
inline std::size_t whole_messages(std::span<const std::uint8_t> records) {
  std::size_t n = 0;
  const std::vector<std::uint8_t> b(records.begin(), records.end());
  for (std::size_t at = 0; at + 9 <= b.size();) {
    const std::size_t end = at + 9 + std::size_t(le64(b, at + 1));
    if (end > b.size()) break;
    if (b[at] == 0x05) ++n;
    at = end;
  }
  return n;
}

// What the reader keeps of `chunk` (in the uncut `file`) when the file is cut at byte `cut`.
struct CutChunk {
  std::size_t decoded = 0;   // bytes of records the compressed bytes present decode to
  std::size_t messages = 0;  // whole Message records in them
};
inline CutChunk what_survives(const std::vector<std::uint8_t>& file, const Rec& chunk, mcap::Compression c,
                              std::size_t cut) {
  const std::size_t at = chunk_records_at(file, chunk);
  if (cut <= at) return {};
  const auto records = decodable_prefix(c, std::span(file).subspan(at, cut - at),
                                        std::size_t(chunk_uncompressed_size(file, chunk)));
  return {records.size(), whole_messages(records)};
}

}  // namespace handoff::media::test
