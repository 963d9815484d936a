#pragma once
// Test hooks of handoffsink (tests/gst only): the element's viewer.
#include <gst/gst.h>

#include <memory>

#include <handoff/viewer.hpp>

namespace handoff::gst::testing {

// The viewer of a handoffsink between NULL -> READY and READY -> NULL (null
// otherwise, or for any other element). Thread safety: any thread.
std::shared_ptr<Viewer> sink_viewer(GstElement* sink);

}  // namespace handoff::gst::testing
