// Registration of handoff's elements (the plugin's init, or a program's own).
#include <handoff/gst/elements.hpp>

gboolean handoff_gst_register_elements(GstPlugin* plugin) {
  const gboolean sink = gst_element_register(plugin, "handoffsink", GST_RANK_NONE, handoff_sink_get_type());
  const gboolean src = gst_element_register(plugin, "handoffsrc", GST_RANK_NONE, handoff_src_get_type());
  return sink && src;
}
