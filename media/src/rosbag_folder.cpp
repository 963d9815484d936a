// A rosbag2 bag folder: its metadata.yaml (rosbag2_bagfile_information) names
// the storage files (relative_file_paths; several when `ros2 bag record
// --max-bag-size / --max-bag-duration` split the bag, in recording order),
// their storage (storage_identifier) and their compression
// (compression_mode, compression_format).
#include "rosbag_folder.hpp"

#include <handoff/log.hpp>
#include <handoff/media/error.hpp>
#include <handoff/unique_handle.hpp>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>
#include <zstd.h>

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

namespace handoff::media {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "mcap" or "db3" from a storage file's name, past a compressed file's ".zstd".
std::string storage_extension(std::filesystem::path p, BagCompression compression) {
  if (compression == BagCompression::File && lower_extension(p) == ".zstd") p = p.stem();
  return lower_extension(p);
}

BagCompression read_compression(const YAML::Node& info, const std::string& file) {
  const YAML::Node mode = info["compression_mode"];
  const std::string m = mode ? lower(mode.as<std::string>()) : "";
  if (m.empty() || m == "none") return BagCompression::None;
  if (m != "file" && m != "message") {
    throw ParseError(file, "", "compression_mode", "\"" + mode.as<std::string>() + "\" (handoff plays file and message)");
  }
  const YAML::Node format = info["compression_format"];
  const std::string f = format ? format.as<std::string>() : "";
  if (lower(f) != "zstd") {
    throw ParseError(file, "", "compression_format",
                     "\"" + f + "\": handoff decompresses zstd only (decompress with `ros2 bag convert`)");
  }
  return m == "file" ? BagCompression::File : BagCompression::Message;
}

struct DctxFree {
  void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
};
using UniqueDctx = UniqueHandle<ZSTD_DCtx*, DctxFree>;

UniqueDctx make_dctx() {
  UniqueDctx ctx(ZSTD_createDCtx());
  if (!ctx) throw Error(Api::None, "ZSTD_createDCtx", 0, "", "out of memory");
  return ctx;
}

// Decompresses the zstd stream read by `next` (which fills a buffer and returns
// the bytes read, 0 at the end), handing each decompressed block to `sink`.
// `fail` throws the caller's ParseError. A stream may hold several frames.
template <typename Next, typename Sink, typename Fail>
void zstd_stream(Next&& next, Sink&& sink, Fail&& fail) {
  UniqueDctx ctx = make_dctx();
  std::vector<std::uint8_t> in(ZSTD_DStreamInSize()), out(ZSTD_DStreamOutSize());
  std::size_t last = 1;  // 0 once a frame is complete with nothing pending
  bool any = false;
  while (const std::size_t n = next(in)) {
    any = true;
    ZSTD_inBuffer src{in.data(), n, 0};
    while (src.pos < src.size) {
      ZSTD_outBuffer dst{out.data(), out.size(), 0};
      last = ZSTD_decompressStream(ctx.get(), &dst, &src);
      if (ZSTD_isError(last)) fail(std::string("zstd: ") + ZSTD_getErrorName(last));
      sink(std::span<const std::uint8_t>(out.data(), dst.pos));
    }
  }
  // Output the decoder still holds (a frame's last block can need more room than one call gave).
  while (any && last != 0) {
    ZSTD_inBuffer src{nullptr, 0, 0};
    ZSTD_outBuffer dst{out.data(), out.size(), 0};
    last = ZSTD_decompressStream(ctx.get(), &dst, &src);
    if (ZSTD_isError(last)) fail(std::string("zstd: ") + ZSTD_getErrorName(last));
    if (dst.pos == 0) break;
    sink(std::span<const std::uint8_t>(out.data(), dst.pos));
  }
  if (!any) fail("zstd: empty, not a zstd stream");
  if (last != 0) fail("zstd: the stream ends early (truncated data)");
}

template <typename Sink>
void zstd_file(const std::filesystem::path& path, Sink&& sink) {
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(name, "", "open", std::strerror(errno));
  zstd_stream(
      [&](std::vector<std::uint8_t>& buf) {
        in.read(reinterpret_cast<char*>(buf.data()), std::streamsize(buf.size()));
        if (in.bad()) throw ParseError(name, "", "read", std::strerror(errno));
        return std::size_t(in.gcount());
      },
      sink, [&](const std::string& what) { throw ParseError(name, "", "compression", what); });
}

}  // namespace

std::string lower_extension(const std::filesystem::path& path) { return lower(path.extension().string()); }

RosbagFolder read_rosbag_folder(const std::filesystem::path& folder) {
  const auto meta = folder / "metadata.yaml";
  const std::string file = meta.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(meta, ec)) {
    throw ParseError(folder.string(), "", "", "is a directory without a metadata.yaml, not a rosbag2 bag");
  }
  YAML::Node info;
  try {
    info = YAML::LoadFile(file)["rosbag2_bagfile_information"];
  } catch (const YAML::DeepRecursion& e) {  // its own message says "bad file"
    throw ParseError(file, "line " + std::to_string(e.mark.line + 1), "",
                     "nested too deep (yaml-cpp stops at depth " + std::to_string(e.depth()) + ")");
  } catch (const YAML::Exception& e) {
    throw ParseError(file, "line " + std::to_string(e.mark.line + 1), "", e.msg);
  }
  try {
    if (!info || !info.IsMap()) throw ParseError(file, "", "rosbag2_bagfile_information", "missing");
    RosbagFolder bag;
    bag.name = folder.string();
    bag.compression = read_compression(info, file);
    const YAML::Node paths = info["relative_file_paths"];
    if (!paths || !paths.IsSequence() || paths.size() == 0) {
      throw ParseError(file, "", "relative_file_paths", "names no storage file");
    }
    bag.metadata = file;
    std::string first_ext;
    std::map<std::filesystem::path, std::size_t> seen;  // each file as resolved -> its entry
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const std::string relative = paths[i].as<std::string>();
      const auto path = folder / relative;
      // A file named twice (a.db3 and ./a.db3 alike) would play every message of it twice.
      auto resolved = std::filesystem::weakly_canonical(path, ec);
      if (ec) resolved = path.lexically_normal();
      if (const auto [at, fresh] = seen.emplace(resolved, i); !fresh) {
        throw ParseError(file, "", "relative_file_paths",
                         "names the same file twice: " + paths[at->second].as<std::string>() + " (entry " +
                             std::to_string(at->second + 1) + ") and " + relative + " (entry " + std::to_string(i + 1) +
                             "); a storage file is listed once (its messages would play twice)");
      }
      // Each storage has its own player (Db3Source for .db3, RecordingSourceImpl
      // over an mcap::Reader for MCAP); one recording of both would need the
      // .db3 files read as mcap::Readers too, which rosbag2 (one storage a bag)
      // never needs.
      const std::string ext = storage_extension(path, bag.compression);
      if (i == 0) first_ext = ext;
      else if ((ext == ".db3") != (first_ext == ".db3")) {
        throw ParseError(file, "", "relative_file_paths",
                         "names " + relative + ", of another storage than " + paths[0].as<std::string>() +
                             " (a bag of mcap and sqlite3 files together is not played)");
      }
      if (std::filesystem::is_regular_file(path, ec)) {
        bag.files.push_back(path);
      } else {  // played without it (open_bag_files), said as the error it was
        const bool there = std::filesystem::exists(path, ec);
        const ParseError missing(file, "", "relative_file_paths",
                                 "names " + relative + (there ? ", which is not a file" : ", which is not in the folder"));
        bag.missing.push_back(missing.what());
      }
    }
    const YAML::Node storage = info["storage_identifier"];
    bag.db3 = first_ext == ".db3" || (first_ext != ".mcap" && storage && storage.as<std::string>() == "sqlite3");
    return bag;
  } catch (const YAML::Exception& e) {
    throw ParseError(file, "line " + std::to_string(e.mark.line + 1), "", e.msg);
  }
}

RosbagFolder lone_db3_file(const std::filesystem::path& path) {
  RosbagFolder bag;
  bag.name = path.string();
  bag.files = {path};
  bag.db3 = true;
  return bag;
}

void open_bag_files(const RosbagFolder& bag, const std::function<void(std::size_t)>& open,
                    std::vector<std::string>& warnings, bool log_skipped) {
  if (bag.metadata.empty()) {  // a lone storage file: its error is the recording's
    for (std::size_t i = 0; i < bag.files.size(); ++i) open(i);
    return;
  }
  std::vector<std::string> problems = bag.missing;
  std::size_t opened = 0;
  for (std::size_t i = 0; i < bag.files.size(); ++i) {
    try {
      open(i);
      ++opened;
    } catch (const ParseError& e) {
      problems.push_back(e.what());
    }
  }
  if (opened == 0) {
    std::string all;
    for (const std::string& p : problems) all += (all.empty() ? "" : "; ") + p;
    throw ParseError(bag.metadata, "", "relative_file_paths", "no storage file of the bag can be played: " + all);
  }
  for (const std::string& p : problems) {
    warnings.push_back(p + " (file skipped; the rest of the bag plays)");
    if (log_skipped) log(LogLevel::Warning, "recording: " + warnings.back());
  }
}

TempFile& TempFile::operator=(TempFile&& o) noexcept {
  if (this != &o) {
    TempFile old(std::move(*this));
    path_ = std::exchange(o.path_, {});
  }
  return *this;
}

TempFile::~TempFile() {
  if (path_.empty()) return;
  std::error_code ec;
  if (!std::filesystem::remove(path_, ec) && ec)
    log(LogLevel::Warning, "recording: cannot remove " + path_.string() + ": " + ec.message());
}

std::vector<std::uint8_t> zstd_decompress_file(const std::filesystem::path& path) {
  std::vector<std::uint8_t> out;
  zstd_file(path, [&](std::span<const std::uint8_t> block) { out.insert(out.end(), block.begin(), block.end()); });
  return out;
}

TempFile zstd_decompress_to_temp(const std::filesystem::path& path) {
  std::string pattern = (std::filesystem::temp_directory_path() / "handoff-bag-XXXXXX").string();
  // mkstemp: created 0600, so the decompressed bag is the user's alone.
  UniqueFd fd(::mkstemp(pattern.data()));
  if (!fd) throw ParseError(path.string(), "", "compression", "cannot create a temporary file " + pattern + ": " + std::strerror(errno));
  TempFile temp{std::filesystem::path(pattern)};
  zstd_file(path, [&](std::span<const std::uint8_t> block) {
    std::size_t done = 0;
    while (done < block.size()) {
      const ssize_t n = ::write(fd.get(), block.data() + done, block.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw ParseError(path.string(), "", "compression", "writing " + pattern + ": " + std::strerror(errno));
      done += std::size_t(n);
    }
  });
  return temp;
}

std::vector<std::uint8_t> zstd_decompress_message(std::span<const std::uint8_t> data, const std::string& file,
                                                  const std::string& where, std::uint64_t limit) {
  std::vector<std::uint8_t> out;
  bool given = false;
  zstd_stream(
      [&](std::vector<std::uint8_t>& buf) -> std::size_t {
        if (given) return 0;
        given = true;
        buf.assign(data.begin(), data.end());
        return buf.size();
      },
      [&](std::span<const std::uint8_t> block) {
        if (out.size() + block.size() > limit)
          throw ParseError(file, where, "data", "zstd: decompresses to more than " + std::to_string(limit) + " bytes");
        out.insert(out.end(), block.begin(), block.end());
      },
      [&](const std::string& what) { throw ParseError(file, where, "data", what); });
  return out;
}

}  // namespace handoff::media
