#pragma once
// Recordings: frames of every format and their overlays in MCAP files that
// Foxglove and the mcap tools open (docs/recording.md has the format).
//
// - A frame is a foxglove.RawImage message (protobuf) on the stream's topic,
//   its encoding named by raw_image_encoding(): Foxglove's "nv12", "rgb8",
//   "bgr8", "rgba8", "bgra8", "mono8" (gray8), "mono16" (gray16), "32FC1"
//   (gray32f), "yuyv", "uyvy"; handoff's "p010" (the nv12 layout with 16-bit
//   little-endian samples, the 10-bit value in the top bits); i420 is written
//   as "nv12" (RawImage has no planar 4:2:0 encoding). Read also: "8UC1",
//   "16UC1", "yuv422_yuy2" (yuyv), "yuv422" (uyvy).
// - Its overlays are one foxglove.ImageAnnotations message on
//   "<topic>/annotations" with the same log time and timestamps: boxes as
//   LINE_LOOP points with the label as a TextAnnotation, keypoints (POINTS),
//   skeletons (LINE_LIST), polygons (LINE_LOOP), polylines (LINE_STRIP), texts;
//   score, class, track and the rest in each annotation's metadata
//   ("handoff.*" keys), so everything round-trips.
// - Its dense layers (OverlayFrame::layers) are foxglove.RawImage messages on
//   "<topic>/layers/<index>" (mono8, mono16, 32FC1) with the same times; each
//   layer's settings are JSON in its channel's metadata ("handoff.layer"):
//   see encode_layer_messages().
// - Colorimetry is channel metadata ("handoff.color_matrix", ...): a frame
//   whose colorimetry differs from its topic's channel starts a new channel on
//   the same topic.
//
//   RecordingWriter rec("out.mcap");
//   rec.write(frame, overlays, "/camera", log_time_ns);   // queued; a writer thread does the I/O
//   rec.close();
//   auto src = open_recording("out.mcap", {.topic = "/camera"});   // a FrameSource
#include <handoff/frame.hpp>
#include <handoff/media/frame_source.hpp>
#include <handoff/media/mcap.hpp>
#include <handoff/media/overlay.hpp>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace handoff::media {

inline constexpr std::string_view kRawImageSchema = "foxglove.RawImage";
inline constexpr std::string_view kImageAnnotationsSchema = "foxglove.ImageAnnotations";
inline constexpr std::string_view kCompressedVideoSchema = "foxglove.CompressedVideo";
// A stream's annotations are on its topic + this suffix.
inline constexpr std::string_view kAnnotationsSuffix = "/annotations";

// The serialized FileDescriptorSets (foxglove/RawImage.proto and
// foxglove/ImageAnnotations.proto with their imports) the Schema records
// carry. Thread safety: any thread, as every free function in this header.
std::span<const std::uint8_t> raw_image_descriptor_set();
std::span<const std::uint8_t> image_annotations_descriptor_set();
std::span<const std::uint8_t> compressed_video_descriptor_set();

// How a recording stores its frames: foxglove.RawImage (Raw), or
// foxglove.CompressedVideo encoded with libavcodec's libx264 / libx265
// (docs/recording.md "Compressed video").
enum class VideoCodec : std::uint8_t { Raw, H264, H265 };
std::string_view to_string(VideoCodec codec);  // "raw", "h264", "h265"
// UsageError naming the valid spellings for another.
VideoCodec parse_video_codec(std::string_view name);
// InvalidFrame when frames of `format` and this size cannot be encoded as
// `codec` h264 / h265 (gray32f; an odd width or height: 4:2:0); raw holds all.
void check_video_frame(VideoCodec codec, PixelFormat format, std::uint32_t width, std::uint32_t height);

// What handoff writes, handoff reads: a message goes into one chunk, whose
// records start with the Schema and Channel records it is the first of, and
// readers refuse a chunk over their max_chunk_bytes (1 GiB by default). So a
// recorded message (a frame's RawImage, a layer, a frame's annotations) is at
// most max_chunk_bytes less kChunkRecordsReserve (docs/recording.md "Size limits").
inline constexpr std::uint64_t kChunkRecordsReserve = std::uint64_t(1) << 20;
std::uint64_t max_recorded_message_bytes(std::uint64_t max_chunk_bytes);
// The bytes of the foxglove.RawImage encode_raw_image writes for a frame of
// this format and size (its pixels packed; an upper bound, within 64 bytes).
std::uint64_t raw_image_message_bytes(PixelFormat format, std::uint32_t width, std::uint32_t height);
// InvalidFrame naming `field`, `what`, its size and the limit when a message
// of `message_bytes` is over max_recorded_message_bytes(max_chunk_bytes).
void check_message_size(const std::string& field, std::string_view what, std::uint64_t message_bytes,
                        std::uint64_t max_chunk_bytes);
// InvalidFrame when a frame of `format` and this size cannot be recorded as
// `codec`: check_video_frame's, or (raw) a RawImage message larger than a
// chunk of max_chunk_bytes holds (gray8 32768x32768, 1 GiB, is one).
void check_recorded_frame(VideoCodec codec, PixelFormat format, std::uint32_t width, std::uint32_t height,
                          std::uint64_t max_chunk_bytes = mcap::kDefaultMaxChunkBytes);

// Encodes one Annex B access unit as a serialized foxglove.CompressedVideo
// (timestamp, empty frame_id, data, format "h264" / "h265") into `out`.
void encode_compressed_video(std::span<const std::uint8_t> access_unit, VideoCodec codec, std::uint64_t timestamp_ns,
                             std::vector<std::uint8_t>& out);

// --- Messages (one frame or one overlay set <-> protobuf bytes) ------------------------

// Encodes a host-memory frame as a foxglove.RawImage into `out` (replaced),
// encoding raw_image_encoding(format). nv12 / p010 / i420: step = the packed
// chroma row (2 * ceil(W/2) samples; for odd widths one sample of zero
// padding ends each luma row), data = H luma rows then ceil(H/2) interleaved
// chroma rows (i420's U and V interleaved while copying: the frame is read
// back as nv12). Other formats: step = the packed row, data = H rows.
// Multi-byte samples little-endian (RawImage has no byte-order field).
// UsageError for a frame that is not valid or not in host memory.
// Thread safety: any thread.
void encode_raw_image(const Frame& frame, std::uint64_t timestamp_ns, std::vector<std::uint8_t>& out);

// A foxglove.RawImage as parsed, pointing into the message bytes.
struct RawImageView {
  std::uint32_t width = 0, height = 0, step = 0;
  std::string_view encoding;
  std::span<const std::uint8_t> data;
  bool has_timestamp = false;
  std::uint64_t timestamp_ns = 0;
};

// Where a message came from, for ParseError ("<file>: <location>: <field>: ...").
// `location` is called only when an error is reported (so naming the place
// costs nothing per message).
struct MessagePlace {
  std::string_view file;
  std::function<std::string()> location;
};

// Parses foxglove.RawImage bytes without copying the pixels. ParseError at
// `where` (field "RawImage") when the bytes are not such a message.
RawImageView parse_raw_image(std::span<const std::uint8_t> bytes, const MessagePlace& where);

// The frame format of a RawImage encoding (the list above, case-sensitive);
// std::nullopt for others (bayer_*, 8UC3, ...).
std::optional<PixelFormat> raw_image_format(std::string_view encoding);
// The encoding a frame of `format` is written with ("mono8" for gray8, "nv12"
// for i420, ...). InvalidFrame for a value outside PixelFormat.
std::string_view raw_image_encoding(PixelFormat format);
// Every encoding raw_image_format knows, comma-separated (for messages).
std::string raw_image_encodings();

// Checks that a parsed image is an image of `format` (an encoding that reads
// as it), `width` x `height`, whose data holds every row: ParseError at
// `where` naming the field otherwise (encoding, size, a step below the
// packed row, data shorter than step * rows: H + ceil(H/2) for nv12 / p010,
// else H). `message` names the message type in the field ("RawImage.step";
// "Image" for a ROS 2 sensor_msgs/Image read into the same view).
void check_raw_image(const RawImageView& image, PixelFormat format, std::uint32_t width, std::uint32_t height,
                     const MessagePlace& where, std::string_view message = "RawImage");
// check_raw_image(), then copies the image into `target`.
void copy_raw_image(const RawImageView& image, PixelFormat format, std::uint32_t width, std::uint32_t height,
                    const FrameWriteTarget& target, const MessagePlace& where, std::string_view message = "RawImage");

// Encodes overlays as a serialized foxglove.ImageAnnotations into `out`
// (replaced); every annotation and the message carry `timestamp_ns`.
// Thread safety: any thread.
void encode_annotations(const OverlayFrame& overlays, std::uint64_t timestamp_ns, std::string& out);

// Decodes foxglove.ImageAnnotations bytes into `out` (cleared first; its
// frame is left as is). Annotations handoff wrote come back as they were;
// others are mapped: an axis-aligned 4-point LINE_LOOP is a box, other
// LINE_LOOPs polygons, LINE_STRIP polylines, POINTS an object's keypoints,
// LINE_LIST keypoints joined in pairs, circles 32-sided polygons, texts
// texts. ParseError at `where` when the bytes are not such a message.
void decode_annotations(std::span<const std::uint8_t> bytes, OverlayFrame& out, const MessagePlace& where);

// The time foxglove.ImageAnnotations bytes are for (nanoseconds, as
// RawImageView::timestamp_ns): the message's own timestamp when set (its
// annotations' are then ignored), else the first annotation's that has one
// (circles, points, texts); std::nullopt when none does. ParseError at
// `where` when the bytes are not such a message.
std::optional<std::uint64_t> annotations_timestamp(std::span<const std::uint8_t> bytes, const MessagePlace& where);

// --- Layers (docs/recording.md "Layers") ------------------------------------------------

// Layer i of a frame on `topic` is on "<topic>/layers/<i>".
inline constexpr std::string_view kLayersInfix = "/layers/";
// The channel metadata key holding a layer's settings (JSON).
inline constexpr std::string_view kLayerMetadataKey = "handoff.layer";
// A frame's layers (at most kMaxLayers) are on "<topic>/layers/0" .. "/63".
std::string layer_topic(std::string_view image_topic, std::size_t index);
// The index of a layer topic of `image_topic` ("<image_topic>/layers/<0..63>"); nullopt for other topics.
std::optional<std::size_t> layer_topic_index(std::string_view image_topic, std::string_view topic);

// One layer of a frame as recorded: its index in OverlayFrame::layers, its
// settings (the channel metadata's JSON) and its serialized foxglove.RawImage.
struct LayerMessage {
  std::size_t index = 0;
  std::string settings;
  std::vector<std::uint8_t> image;
};

// Encodes each layer of `overlays` (validate_layers: host only, at most
// kMaxLayers) packed as
// pack_layer converts it: class ids of 8 bits as mono8, of 16 bits as mono16,
// of 32 bits as 32FC1 (exact: ids beyond +-2^24 are an InvalidFrame naming
// the layer); scalars as 32FC1; masks as one mono8 image, 0 / 255, the masks
// stacked top to bottom (a frame with no masks writes no message). Settings:
//   {"kind": "class_map", "ids": "u8"|"i8"|"u16"|"i16"|"u32"|"i32",
//    "colors": {"<id>": "#rrggbb"}, "names": {"<id>": "name"}, "transparent": [ids], ...}
//   {"kind": "scalar_map", "colormap": "turbo", "range": [lo, hi] (absent: automatic), ...}
//   {"kind": "instance_masks", "mask_height": H, ...}
//   and in each: "opacity": 0.5, "target": [x, y, w, h] (absent: the whole frame).
void encode_layer_messages(const OverlayFrame& overlays, std::uint64_t timestamp_ns, std::vector<LayerMessage>& out);

// A recorded layer back from its RawImage and settings: packed host arrays as
// pack_layer makes them (masks 0 / 1). ParseError at (file, location) naming
// the field ("handoff.layer.kind", "RawImage.encoding", ...) for settings that
// are not such JSON, an encoding that does not match the kind, sizes or samples
// that do not fit. Not validated against the frame (validate_layers does that).
Layer decode_layer_message(const RawImageView& image, std::string_view settings, const std::string& file,
                           const std::string& location);

// Channel metadata for a stream's colorimetry, and back. Absent or unknown
// values take the defaults a file without them gets (BT.601 up to 576 rows,
// else BT.709; limited range; chroma siting left).
mcap::StringMap colorimetry_metadata(const Colorimetry& c);
Colorimetry colorimetry_from_metadata(const mcap::StringMap& metadata, std::uint32_t height);

// --- Writing ----------------------------------------------------------------------

// The encoder settings of RecordingOptions::codec h264 / h265.
struct VideoOptions {
  int crf = 20;  // constant rate factor (x264 / x265: 0 best .. 51 worst); 20: fine detail kept for debugging
  std::string preset = "veryfast";  // x264 / x265 preset
  // A keyframe (IDR, with its parameter sets) on the first frame whose time is
  // at least this far past the last keyframe's.
  std::uint64_t keyframe_interval_ns = 1'000'000'000;
};

struct RecordingOptions {
  // Raw: foxglove.RawImage; H264 / H265: foxglove.CompressedVideo, encoded on
  // the writer thread (write() still only copies the frame).
  VideoCodec codec = VideoCodec::Raw;
  VideoOptions video{};
  mcap::Compression compression = mcap::Compression::Zstd;
  int compression_level = 1;
  std::size_t chunk_size = std::size_t(4) << 20;
  std::uint64_t chunk_duration_ns = 1'000'000'000;  // see mcap::WriterOptions: what a crash loses at most
  // The largest chunk the file may hold: that of the readers that will read
  // it (mcap::ReaderOptions::max_chunk_bytes). write() refuses a frame with a
  // message a chunk this size cannot hold (check_recorded_frame,
  // check_message_size); a chunk_size above it is a UsageError.
  std::uint64_t max_chunk_bytes = mcap::kDefaultMaxChunkBytes;
  bool summary = true;
  bool sync_on_close = false;  // fdatasync in close()
  // Frames waiting for the writer thread. When the queue is full, write()
  // drops the frame (counted in stats().frames_dropped) unless
  // block_when_full, in which case it waits for room (at most
  // handoff::wait_limit(), then WaitTimeout).
  std::size_t queue_capacity = 4;
  bool block_when_full = false;
  // The writer thread runs at a lower CPU priority (nice + this, Linux
  // threads; 0: the caller's). With a producer that needs every core (a
  // viewer on a software renderer), the recording then falls behind and drops
  // frames instead of slowing the producer.
  int writer_nice = 0;
};

// Where a handoff::Viewer or handoff::Publisher records what it shows or
// publishes (ViewerOptions::record, PublisherOptions::record). A value.
struct RecordTarget {
  std::string path{};  // the MCAP file (created, truncated); empty: no recording
  mcap::Compression compression = mcap::Compression::Zstd;  // of its chunks
  std::string topic{};  // the image topic; empty: the recorder's default ("/handoff/view", "/<publisher name>")
  VideoCodec codec = VideoCodec::Raw;  // RawImage, or CompressedVideo h264 / h265
};

// Lowers the calling thread's CPU priority by `nice` steps (Linux schedules
// threads one by one; 0, or a refusal, changes nothing). What the recorders'
// threads call (RecordingOptions::writer_nice). Thread safety: any thread.
void lower_thread_priority(int nice) noexcept;

struct RecordingStats {
  std::uint64_t frames_written = 0;  // frames (with their overlays) given to the file; after a failure, those it holds
  std::uint64_t frames_dropped = 0;  // refused by write() because the queue was full
  std::uint64_t bytes_written = 0;   // file size so far
};

struct VideoStream;  // recording_writer.cpp

// Records frames and overlays to an MCAP file. write() encodes the frame on
// the caller's thread (one copy of its pixels) and queues it; a writer thread
// does chunking, compression, CRCs and the disk writes, so the caller never
// waits for the disk longer than the bounded queue allows. The first I/O error
// stops the recording: write(), flush() and close() then throw it.
// Thread safety: write() from one thread at a time; stats() from any thread;
// flush() and close() from the thread that calls write(). The destructor
// closes (errors are logged, not thrown).
class RecordingWriter {
 public:
  // Creates (truncates) `path` and starts the writer thread. handoff::Error
  // naming the path when it cannot be created.
  explicit RecordingWriter(const std::filesystem::path& path, RecordingOptions options = {});
  ~RecordingWriter();
  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // Queues `frame` (host memory; its pixels are copied before this returns)
  // on `topic` and, when `overlays` is not empty, its ImageAnnotations on
  // "<topic>/annotations". log_time_ns: the message log time (nanoseconds);
  // publish_time_ns (default: the log time) is also the messages' timestamp
  // field. Each of overlays.layers goes on "<topic>/layers/<index>"
  // (encode_layer_messages). Returns false when the frame was dropped (queue
  // full). UsageError for a frame not in host memory, an empty topic or use
  // after close(); InvalidFrame for bad layers, for a frame of another
  // format or size than its topic's first (a topic holds one: readers refuse
  // the others), or for one with a message too large for a chunk readers
  // accept (check_recorded_frame: field "frame"; a layer: "layers[i]"; its
  // annotations: "overlays"), nothing of the frame written.
  bool write(const Frame& frame, const OverlayFrame& overlays, std::string_view topic, std::uint64_t log_time_ns,
             std::optional<std::uint64_t> publish_time_ns = std::nullopt);
  // Waits until every queued frame is in the file (at most wait_limit()
  // without progress, then WaitTimeout).
  void flush();
  // Writes what is queued, the summary and the footer; closes the file.
  // Throws the recording's first error, if any. A second call does nothing.
  void close();
  RecordingStats stats() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Item;
  struct Channels;
  void run();
  void write_item(Item& item);
  void copy_packed(const Frame& frame, Item& item);
  void write_video(const Item& item, std::uint32_t sequence);
  void write_units(VideoStream& v);
  void finish_video(VideoStream& v);
  std::uint64_t frames_in_file() const;  // writer thread, or after it ended
  void wait_for(std::unique_lock<std::mutex>& lock, const char* what, const std::function<bool()>& done);

  std::filesystem::path path_;
  RecordingOptions options_;
  std::unique_ptr<mcap::Writer> writer_;   // used by the writer thread only (and close() after joining)
  std::unique_ptr<Channels> channels_;     // writer thread only
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Item>> queue_;  // guarded by mutex_
  std::vector<std::unique_ptr<Item>> free_;  // recycled buffers, guarded by mutex_
  bool busy_ = false, stop_ = false, closed_ = false;  // guarded by mutex_
  std::uint64_t progress_ = 0;                          // items finished, guarded by mutex_
  RecordingStats stats_;                                // guarded by mutex_
  std::exception_ptr error_;                            // guarded by mutex_
  struct Shape {
    PixelFormat format;
    std::uint32_t width, height;
    bool operator==(const Shape&) const = default;
  };
  std::map<std::string, Shape, std::less<>> shapes_;  // each topic's first frame's, guarded by mutex_
  std::thread thread_;                                  // last: starts after the members above exist
};

// --- Reading ----------------------------------------------------------------------

struct RecordingOpenOptions {
  // The image topic to play; empty: the first foxglove.RawImage topic (lowest channel id).
  std::string topic;
  // Where its overlays are; empty: "<topic>/annotations" if present, else the
  // only foxglove.ImageAnnotations topic if there is exactly one, else none.
  std::string annotations_topic;
  // A frame's overlays are the annotation message with the frame's timestamp
  // (see RecordingSource) logged at most this far from the frame, in either
  // direction (a detector's output is logged after its image).
  std::uint64_t annotation_window_ns = 2'000'000'000;
  // ROS 2 bags: the vision_msgs/msg/Detection2DArray and
  // foxglove_msgs/msg/ImageAnnotations topics drawn on the image topic;
  // empty: those in the image topic's namespace (its parent, after a trailing
  // "/compressed" is dropped: "/cam/detections" for "/cam/image_raw").
  std::vector<std::string> overlay_topics;
  std::uint64_t max_chunk_bytes = mcap::kDefaultMaxChunkBytes;  // see mcap::ReaderOptions
};

struct RecordingTopic {
  std::string topic;
  std::string schema;
  std::uint64_t messages = 0;
};

// A recording played as a FrameSource: frame i is the i-th image of the
// chosen topic by log time, reached through the index without scanning
// (files without a summary are scanned once at open). overlays_for(i) gives
// the annotation message matched to frame i by timestamp, as Foxglove's image
// panel matches them: the one whose timestamp (annotations_timestamp())
// equals the image's RawImage.timestamp, among the annotation messages logged
// within RecordingOpenOptions::annotation_window_ns of the image (nearest in
// log time first); a message or image without a timestamp is matched by its
// log time instead. Each annotation message's timestamp is read once, when a
// frame near it is first looked up. Errors: ParseError naming the file, the
// record and its byte offset and the field; a file cut short plays up to its
// last whole message, with one warning (logged and in warnings()).
// Thread safety: none; use one from one thread at a time (it may be handed between threads).
class RecordingSource : public FrameSource {
 public:
  virtual const std::vector<RecordingTopic>& image_topics() const = 0;
  virtual const std::string& topic() const = 0;
  virtual const std::string& annotations_topic() const = 0;  // "" when none
  // ROS 2 bags: the Detection2DArray / ImageAnnotations topics drawn (RecordingOpenOptions::overlay_topics).
  virtual const std::vector<std::string>& overlay_topics() const {
    static const std::vector<std::string> none;
    return none;
  }
  virtual std::uint64_t log_time(std::int64_t index) const = 0;
  // Frame `index`'s colorimetry (from its channel; equal to info().colorimetry
  // unless it changed during the recording).
  virtual Colorimetry colorimetry(std::int64_t index) const = 0;
  virtual bool indexed() const = 0;
  virtual const std::vector<std::string>& warnings() const = 0;
};

// Opens a recording: reads its summary and index (or scans it) and its first
// frame (which sets info()'s format, size and colorimetry). ParseError on bad
// input; the message names the file, the record, its offset and the field.
// ROS 2 bags too (docs/recording.md, "ROS 2 bags"): sensor_msgs/msg/Image
// topics of an MCAP bag, of a SQLite3 .db3 file (a path ending in .db3 or an
// SQLite file), or of a rosbag2 folder (a directory: its metadata.yaml names
// the storage files played as one recording). A folder's file that is missing
// or does not open (not its storage, cut short, damaged zstd) is skipped with a
// warning naming it (logged and in warnings()) and the other files play;
// ParseError naming metadata.yaml and each file's problem when none opens.
std::unique_ptr<RecordingSource> open_recording(const std::filesystem::path& path,
                                                const RecordingOpenOptions& options = {});
// What open_recording opens rather than a video file: a directory (a rosbag2
// folder), a path ending in .mcap or .db3 (any case), or a file that starts
// like an MCAP file (0x89 "MCAP") or an SQLite file, whatever its name.
bool is_recording_path(const std::filesystem::path& path);
// One topic of a recording as `handoff-view FILE --list` prints it.
struct RecordingTopicListing {
  enum class Kind : std::uint8_t { Image, Overlay, NotShown };
  std::string topic;
  std::string type;      // the schema name or ROS 2 type ("sensor_msgs/msg/Image")
  std::string encoding;  // of its messages ("cdr", "protobuf")
  std::uint64_t messages = 0;
  double rate = 0;       // messages per second from the first to the last log time (0 below 2 messages)
  Kind kind = Kind::NotShown;
  // Image: its first message's format ("rgb8", "jpeg"); Overlay: what it
  // draws; NotShown: why not (an unknown type, an unsupported encoding, a
  // first message that does not decode).
  std::string note;
};
std::string_view to_string(RecordingTopicListing::Kind kind);  // "image", "overlay", "not shown"

// Every topic of a recording (MCAP, .db3, rosbag2 folder), sorted by topic
// name, each with whether handoff shows it (judged by its type and its first
// message). Works for recordings with no image topic at all. ParseError for
// a file that cannot be read (as open_recording; a split bag's file that
// cannot is skipped as open_recording skips it). `warnings`, when given,
// receives what was wrong but listed anyway (RecordingSource::warnings()'s
// file problems: a damaged tail, a bag's file skipped); each is logged too.
std::vector<RecordingTopicListing> list_recording_topics(const std::filesystem::path& path,
                                                        std::vector<std::string>* warnings = nullptr);
// The same over bytes in memory, for tests and fuzzing; `max_chunk_bytes` as
// mcap::ReaderOptions' (a fuzzer bounds what a chunk may claim).
std::vector<RecordingTopicListing> list_recording_topics_memory(std::span<const std::uint8_t> bytes,
                                                                std::string name = "<memory>",
                                                                std::uint64_t max_chunk_bytes = mcap::kDefaultMaxChunkBytes);

// Same over bytes in memory (copied). For tests and fuzzing.
std::unique_ptr<RecordingSource> open_recording_memory(std::span<const std::uint8_t> bytes,
                                                       std::string name = "<memory>",
                                                       const RecordingOpenOptions& options = {});

}  // namespace handoff::media
