#pragma once
// handoff-view's command line: what it asks of handoff::Viewer.
#include <optional>
#include <string>
#include <vector>

#include <handoff/viewer.hpp>

namespace handoff::app {

struct CommandLine {
  ViewerOptions viewer;
  Viewer::PlayOptions play;
  bool quiet = false;
  bool vk_debug = false;  // validation messages make the exit status 3
  std::vector<std::string> attach;  // --attach NAME|PATH (repeatable: side by side): live publishers instead of a source
  bool list = false;      // --list / --topics: print the live publishers (with a FILE: its topics) and exit
};

// Fills `out` from argv. Returns an exit status when the program should stop
// now: 0 after --help, 2 for a bad command line (the message is printed).
std::optional<int> parse_command_line(int argc, char** argv, CommandLine& out);

}  // namespace handoff::app
