#pragma once
// handoff's GStreamer elements (docs/gstreamer.md):
//   handoffsink  shows a pipeline's NV12 / P010 frames and their regions of
//                interest in a handoff::Viewer (a window, or headless), and/or
//                publishes them to `handoff-view --attach` viewers;
//   handoffsrc   a live source of the frames a handoff::Publisher in another
//                process shares.
// The plugin (libgsthandoff.so, found through GST_PLUGIN_PATH) registers both;
// a program that links the elements statically registers them itself with
// handoff_gst_register_elements (tests do).
#include <gst/gst.h>

G_BEGIN_DECLS

GType handoff_sink_get_type(void);
GType handoff_src_get_type(void);

// Registers handoffsink and handoffsrc with `plugin` (may be NULL for a
// program's own static registration). TRUE when both are registered.
// Thread safety: as gst_element_register.
gboolean handoff_gst_register_elements(GstPlugin* plugin);

G_END_DECLS
