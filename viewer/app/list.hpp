#pragma once
// handoff-view --list.
namespace handoff::app {

// Prints the live publishers of $XDG_RUNTIME_DIR/handoff (or that none are
// there) on stdout; returns the exit status (0). Throws handoff::Error when
// the folder cannot be used (XDG_RUNTIME_DIR unset, open to others).
int list_publishers();

}  // namespace handoff::app
