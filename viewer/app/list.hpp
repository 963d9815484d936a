#pragma once
// handoff-view --list.
#include <string>

namespace handoff::app {

// Prints the live publishers of $XDG_RUNTIME_DIR/handoff (or that none are
// there) on stdout; returns the exit status (0). Throws handoff::Error when
// the folder cannot be used (XDG_RUNTIME_DIR unset, open to others).
int list_publishers();

// handoff-view FILE --list (--topics): every topic of a recording (MCAP,
// .db3, rosbag2 folder) with its type, message count, rate and whether it
// is shown (the reason when not), one line each, on stdout, and the
// warnings after them; returns 0, or 1 when there were warnings.
// Throws ParseError when the recording cannot be read.
int list_recording_topics(const std::string& path);

}  // namespace handoff::app
