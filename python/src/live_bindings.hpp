#pragma once
// Live attach from Python (live_bindings.cpp): handoff.Publisher,
// handoff.Subscriber, handoff.LiveFrame and handoff.list_publishers, over
// handoff::Publisher / handoff::Subscriber (docs/live.md). Not a public header.
#include <nanobind/nanobind.h>

#include <string>

namespace handoff::py {

// A name_or_path argument (a publisher name, or a socket path: a str or
// os.PathLike with a '/' in it), checked: ValueError naming name_or_path for a
// string that is neither. Thread safety: with the GIL held.
std::string endpoint_arg(nanobind::handle obj);

// Adds the live classes to the module (after bind_viewer: frames carry handoff.Overlays).
void bind_live(nanobind::module_& m);

}  // namespace handoff::py
