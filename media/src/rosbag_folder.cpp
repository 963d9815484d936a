// A rosbag2 bag folder: its metadata.yaml names the storage files
// (rosbag2_bagfile_information.relative_file_paths); a bag of one file plays
// that file (.mcap or .db3).
#include "rosbag_db3.hpp"

#include <handoff/media/error.hpp>

#include <yaml-cpp/yaml.h>

namespace handoff::media {

std::filesystem::path rosbag_storage_file(const std::filesystem::path& folder) {
  const auto meta = folder / "metadata.yaml";
  const std::string file = meta.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(meta, ec)) {
    throw ParseError(folder.string(), "", "", "is a directory without a metadata.yaml, not a rosbag2 bag");
  }
  YAML::Node info;
  try {
    info = YAML::LoadFile(file)["rosbag2_bagfile_information"];
  } catch (const YAML::Exception& e) {
    throw ParseError(file, "line " + std::to_string(e.mark.line + 1), "", e.msg);
  }
  try {
    if (!info || !info.IsMap()) throw ParseError(file, "", "rosbag2_bagfile_information", "missing");
    const YAML::Node mode = info["compression_mode"];
    if (mode && !mode.as<std::string>().empty()) {
      throw ParseError(file, "", "compression_mode",
                       "\"" + mode.as<std::string>() + "\": compressed bags are not played yet (decompress with `ros2 bag convert`)");
    }
    const YAML::Node paths = info["relative_file_paths"];
    if (!paths || !paths.IsSequence() || paths.size() == 0) {
      throw ParseError(file, "", "relative_file_paths", "names no storage file");
    }
    if (paths.size() > 1) {
      throw ParseError(file, "", "relative_file_paths",
                       std::to_string(paths.size()) + " files: a split bag is not played yet (give handoff one of its files)");
    }
    const auto path = folder / paths[0].as<std::string>();
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw ParseError(file, "", "relative_file_paths", "names " + paths[0].as<std::string>() + ", which is not in the folder");
    }
    return path;
  } catch (const YAML::Exception& e) {
    throw ParseError(file, "line " + std::to_string(e.mark.line + 1), "", e.msg);
  }
}

}  // namespace handoff::media
