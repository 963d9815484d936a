// The GStreamer plugin "handoff" (libgsthandoff.so): handoffsink and handoffsrc.
#include <handoff/gst/elements.hpp>

#define PACKAGE "handoff"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, handoff,
                  "handoff: show pipelines' NV12 / P010 frames and detections, and take frames from "
                  "handoff publishers in other processes",
                  handoff_gst_register_elements, HANDOFF_GST_VERSION, "unknown", "handoff", "handoff (this repository)")
