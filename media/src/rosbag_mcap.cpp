// The MCAP storage files of a rosbag2 bag read as one recording: a split bag's
// files (each opened once, its summary and message indexes read as for one
// file, messages read when asked for), a file compressed whole, messages
// compressed one by one. Played and listed through the one-file code
// (RecordingSourceImpl, list_mcap) as an mcap::Reader.
#include "rosbag_folder.hpp"

#include <handoff/media/error.hpp>

#include <algorithm>
#include <map>
#include <tuple>

namespace handoff::media {
namespace {

class BagReader final : public mcap::Reader {
 public:
  BagReader(std::string name, std::vector<std::unique_ptr<mcap::Reader>> parts, bool compressed_messages,
            std::uint64_t max_message_bytes, std::vector<std::string> skipped);

  const std::string& name() const override { return name_; }
  const mcap::Header& header() const override { return parts_.front()->header(); }
  bool indexed() const override {
    return std::all_of(parts_.begin(), parts_.end(), [](const auto& p) { return p->indexed(); });
  }
  const std::map<std::uint16_t, mcap::Schema>& schemas() const override { return schemas_; }
  const std::map<std::uint16_t, mcap::Channel>& channels() const override { return channels_; }
  // Each file has its own; the bag as a whole has none.
  const std::optional<mcap::Statistics>& statistics() const override { return statistics_; }
  const std::vector<mcap::MessageRef>& messages(std::uint16_t channel) const override {
    const auto it = messages_.find(channel);
    return it == messages_.end() ? none_ : it->second;
  }
  mcap::MessageView read(const mcap::MessageRef& ref) override;
  const std::vector<std::string>& warnings() const override;
  std::string describe(const mcap::MessageRef& ref) const override;

 private:
  // A bag message: its file, its place there, and its index in its topic.
  struct Entry {
    std::size_t part = 0;
    mcap::MessageRef ref;
    std::size_t index = 0;
  };
  const Entry& entry(const mcap::MessageRef& ref) const {
    if (ref.offset >= entries_.size()) throw UsageError("mcap::Reader::read: no message " + std::to_string(ref.offset) + " in " + name_);
    return entries_[std::size_t(ref.offset)];
  }
  void merge(std::size_t part);

  std::string name_;
  std::vector<std::unique_ptr<mcap::Reader>> parts_;
  bool compressed_messages_ = false;
  std::uint64_t max_message_bytes_ = 0;  // decompressed (ReaderOptions::max_chunk_bytes)
  std::map<std::uint16_t, mcap::Schema> schemas_;
  std::map<std::uint16_t, mcap::Channel> channels_;
  std::optional<mcap::Statistics> statistics_;
  // A bag MessageRef's offset is its entry's index here (chunk kNoChunk).
  std::vector<Entry> entries_;
  std::map<std::uint16_t, std::vector<mcap::MessageRef>> messages_;
  std::vector<mcap::MessageRef> none_;
  std::vector<std::uint8_t> decompressed_;  // the message last read, decompressed
  std::vector<std::string> skipped_;         // the files left out, with their problems
  mutable std::vector<std::string> warnings_;
};

BagReader::BagReader(std::string name, std::vector<std::unique_ptr<mcap::Reader>> parts, bool compressed_messages,
                     std::uint64_t max_message_bytes, std::vector<std::string> skipped)
    : name_(std::move(name)), parts_(std::move(parts)), compressed_messages_(compressed_messages),
      max_message_bytes_(max_message_bytes), skipped_(std::move(skipped)) {
  for (std::size_t p = 0; p < parts_.size(); ++p) merge(p);
  for (auto& [id, refs] : messages_) {
    // Files in recording order, each ordered by log time: a stable sort keeps
    // file order among equal times.
    std::stable_sort(refs.begin(), refs.end(), [](const auto& a, const auto& b) { return a.log_time < b.log_time; });
    for (std::size_t k = 0; k < refs.size(); ++k) entries_[std::size_t(refs[k].offset)].index = k;
  }
}

// Adds file `part`'s schemas (one bag schema per distinct name, encoding and
// definition), channels (one bag channel per topic, encoding and schema) and
// message references.
void BagReader::merge(std::size_t part) {
  const mcap::Reader& r = *parts_[part];
  std::map<std::uint16_t, std::uint16_t> schema_ids;
  for (const auto& entry : r.schemas()) {
    // Named, not structured bindings: the lambdas below capture them (C++20 clang refuses bindings there).
    const std::uint16_t id = entry.first;
    const mcap::Schema& s = entry.second;
    const auto same = std::find_if(schemas_.begin(), schemas_.end(), [&](const auto& kv) {
      return kv.second.name == s.name && kv.second.encoding == s.encoding && kv.second.data == s.data;
    });
    if (same != schemas_.end()) {
      schema_ids[id] = same->first;
      continue;
    }
    if (schemas_.size() >= 0xFFFF) throw ParseError(name_, "", "schemas", "more than 65535 schemas in the bag");
    mcap::Schema copy = s;
    copy.id = std::uint16_t(schemas_.size() + 1);
    schema_ids[id] = copy.id;
    schemas_.emplace(copy.id, std::move(copy));
  }
  for (const auto& entry : r.channels()) {
    const std::uint16_t id = entry.first;
    const mcap::Channel& c = entry.second;
    // The file's reader refused a channel naming a schema it does not have.
    const std::uint16_t schema = c.schema_id == 0 ? 0 : schema_ids.at(c.schema_id);
    auto same = std::find_if(channels_.begin(), channels_.end(), [&](const auto& kv) {
      return kv.second.topic == c.topic && kv.second.message_encoding == c.message_encoding && kv.second.schema_id == schema;
    });
    if (same == channels_.end()) {
      if (channels_.size() > 0xFFFF) throw ParseError(name_, "", "channels", "more than 65536 channels in the bag");
      mcap::Channel copy = c;
      copy.id = std::uint16_t(channels_.size());
      copy.schema_id = schema;
      same = channels_.emplace(copy.id, std::move(copy)).first;
    }
    auto& refs = messages_[same->first];
    for (const mcap::MessageRef& m : r.messages(id)) {
      refs.push_back({m.log_time, entries_.size(), mcap::MessageRef::kNoChunk, same->first});
      entries_.push_back({part, m, 0});
    }
  }
}

mcap::MessageView BagReader::read(const mcap::MessageRef& ref) {
  const Entry& e = entry(ref);
  mcap::MessageView view = parts_[e.part]->read(e.ref);
  view.channel = ref.channel;
  if (compressed_messages_) {
    const std::string where = "topic " + channels_.at(ref.channel).topic + ": message " + std::to_string(e.index) +
                              " (" + parts_[e.part]->describe(e.ref) + ")";
    decompressed_ = zstd_decompress_message(view.data, parts_[e.part]->name(), where, max_message_bytes_);
    view.data = decompressed_;
  }
  return view;
}

// The lists only grow: rebuilt only when one of them did (asked after every frame played).
const std::vector<std::string>& BagReader::warnings() const {
  std::size_t total = skipped_.size();
  for (const auto& p : parts_) total += p->warnings().size();
  if (warnings_.size() != total) {
    warnings_ = skipped_;
    for (const auto& p : parts_) warnings_.insert(warnings_.end(), p->warnings().begin(), p->warnings().end());
  }
  return warnings_;
}

std::string BagReader::describe(const mcap::MessageRef& ref) const {
  const Entry& e = entry(ref);
  return parts_[e.part]->name() + ": " + parts_[e.part]->describe(e.ref);
}

}  // namespace

std::unique_ptr<mcap::Reader> open_bag_mcap(const RosbagFolder& bag, const mcap::ReaderOptions& options) {
  std::vector<std::unique_ptr<mcap::Reader>> parts;
  std::vector<std::string> skipped;
  open_bag_files(bag, [&](std::size_t i) {
    const std::filesystem::path& file = bag.files[i];
    if (bag.compression == BagCompression::File) {
      // The MCAP reader reads from memory as well as from a file, so a file
      // compressed whole is decompressed to memory (no temporary file to
      // clean up); it is named by its compressed file's path.
      parts.push_back(mcap::Reader::open_memory(zstd_decompress_file(file), file.string(), options));
    } else {
      parts.push_back(mcap::Reader::open(file, options));
    }
  }, skipped);
  return join_bag_mcap(bag.name, std::move(parts), bag.compression == BagCompression::Message, options, std::move(skipped));
}

std::unique_ptr<mcap::Reader> join_bag_mcap(std::string name, std::vector<std::unique_ptr<mcap::Reader>> parts,
                                            bool compressed_messages, const mcap::ReaderOptions& options,
                                            std::vector<std::string> skipped) {
  if (parts.empty()) throw UsageError("join_bag_mcap: no storage file");
  if (parts.size() == 1 && !compressed_messages && skipped.empty()) return std::move(parts.front());
  return std::make_unique<BagReader>(std::move(name), std::move(parts), compressed_messages, options.max_chunk_bytes,
                                     std::move(skipped));
}

std::unique_ptr<mcap::Reader> open_bag_mcap_memory(const std::vector<std::span<const std::uint8_t>>& parts,
                                                   bool compressed_messages, const std::string& name,
                                                   const mcap::ReaderOptions& options) {
  RosbagFolder bag;
  bag.name = bag.metadata = name;
  for (std::size_t i = 0; i < parts.size(); ++i) bag.files.push_back(name + "#" + std::to_string(i));
  std::vector<std::unique_ptr<mcap::Reader>> readers;
  std::vector<std::string> skipped;
  open_bag_files(bag, [&](std::size_t i) {
    readers.push_back(mcap::Reader::open_memory(parts[i], bag.files[i].string(), options));
  }, skipped);
  return join_bag_mcap(name, std::move(readers), compressed_messages, options, std::move(skipped));
}

}  // namespace handoff::media
