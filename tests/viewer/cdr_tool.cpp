// The CDR decoder driven by the python tier (tests/python/ros): decodes one
// message file and prints the values at the paths given, one line each.
//   handoff_cdr_tool TYPE DEFINITION_FILE|- MESSAGE_FILE PATH...
// "-" takes the built-in definition of TYPE. A line reads "PATH=VALUE":
// integers in decimal, floats as %.17g, strings as they are, arrays of
// numbers as "len:N hex:..." (their bytes as stored), arrays of anything
// else as "len:N". A ParseError is printed to stderr, exit status 1.
//   handoff_cdr_tool --hash TYPE DEFINITION_FILE|-
// prints the definition's ROS 2 type hash (RIHS01_...).
#include <handoff/media/cdr.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace handoff::media::ros;

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw handoff::Error(std::string("cannot open ") + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string show(const CdrValue& v) {
  char buf[64];
  if (v.is_array()) {
    std::string s = "len:" + std::to_string(v.size());
    if (v.primitive() && *v.primitive() != Primitive::String) {
      s += " hex:";
      for (std::uint8_t b : v.as_bytes()) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        s += buf;
      }
    }
    return s;
  }
  if (v.is_struct()) return "struct";
  switch (*v.primitive()) {
    case Primitive::String: return std::string(v.as_string());
    case Primitive::Float32: case Primitive::Float64:
      std::snprintf(buf, sizeof buf, "%.17g", v.as_double());
      return buf;
    case Primitive::UInt64: return std::to_string(v.as_uint());
    default: return std::to_string(v.as_int());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--hash") {
    try {
      const std::string type = argv[2];
      const auto definition = std::string(argv[3]) == "-" ? MessageDefinition::builtin(type)
                                                          : MessageDefinition::parse(type, read_file(argv[3]), argv[3]);
      std::printf("%s\n", type_hash(*definition).c_str());
    } catch (const handoff::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
    return 0;
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: handoff_cdr_tool TYPE DEFINITION_FILE|- MESSAGE_FILE PATH...\n");
    return 2;
  }
  try {
    const std::string type = argv[1];
    const auto definition = std::string(argv[2]) == "-" ? MessageDefinition::builtin(type)
                                                        : MessageDefinition::parse(type, read_file(argv[2]), argv[2]);
    const std::string bytes = read_file(argv[3]);
    const auto m = CdrMessage::decode(
        definition, {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, {argv[3], ""});
    for (int i = 4; i < argc; ++i) std::printf("%s=%s\n", argv[i], show(m.at(argv[i])).c_str());
  } catch (const handoff::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
