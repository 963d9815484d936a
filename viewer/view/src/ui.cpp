#include "ui.hpp"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

namespace handoff::view {
namespace {

const char* const kMatrices[] = {"source", "BT.601", "BT.709", "BT.2020"};
const char* const kRanges[] = {"source", "limited", "full"};
const char* const kSitings[] = {"source", "left", "center", "top-left"};

void help_window(UiState& ui) {
  if (!ui.show_help) return;
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x * 0.5f, ImGui::GetIO().DisplaySize.y * 0.5f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::Begin("Keyboard", &ui.show_help, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse);
  const char* rows[][2] = {
      {"Space", "play / pause"},        {"Left / Right", "step one frame back / forward (pauses)"},
      {"Home / End", "first / last frame (files, recordings)"}, {"Page Up / Down", "10 frames back / forward"},
      {"+ / -", "faster / slower"},     {"Wheel", "zoom around the cursor"},
      {"Drag (left / middle)", "pan"},  {"F", "fit to window"}, {"G / double click", "a grid tile alone, and back"},
      {"1", "1:1 (one frame pixel per screen pixel)"}, {"N", "nearest-neighbour when zoomed in"},
      {"O", "overlays on / off"},       {"H / Tab", "hide / show the panel"},
      {"?", "this help"},               {"Q / Esc", "quit"},
  };
  if (ImGui::BeginTable("keys", 2)) {
    for (auto& r : rows) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TextUnformatted(r[0]);
      ImGui::TableSetColumnIndex(1);
      ImGui::TextUnformatted(r[1]);
    }
    ImGui::EndTable();
  }
  ImGui::End();
}

// An attached viewer: the publisher, its rate, drops on either side, the age
// of the frame on screen (from its announcement) and the link's state.
void attach_lines(const ViewerState& v) {
  const std::optional<AttachStatus> a = v.attach_status();
  if (!a) return;
  const bool live = a->state == "live";
  const ImVec4 colour = live ? ImVec4(0.4f, 0.9f, 0.4f, 1) : a->state == "failed" ? ImVec4(1, 0.35f, 0.3f, 1)
                                                                                   : ImVec4(1, 0.75f, 0.2f, 1);
  ImGui::TextColored(colour, "publisher '%s': %s", a->publisher.c_str(),
                     a->state == "gone" ? "publisher gone" : a->state.c_str());
  if (a->pid) {
    ImGui::SameLine();
    ImGui::TextDisabled("pid %u", a->pid);
  }
  if (live && a->publisher_fps > 0) ImGui::Text("publisher %.1f fps", a->publisher_fps);
  ImGui::Text("dropped: publisher %llu (+%llu not sent here), viewer %llu",
              static_cast<unsigned long long>(a->publisher_dropped),
              static_cast<unsigned long long>(a->publisher_skipped),
              static_cast<unsigned long long>(a->viewer_dropped));
  if (v.has_frame() && v.submitted() != std::chrono::steady_clock::time_point{}) {
    const double age = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - v.submitted()).count();
    if (age < 10000) ImGui::Text("frame age %.1f ms", age);
    else ImGui::Text("frame age %.1f s", age / 1000);
  }
}

// Source, size, format, frame number, status.
void header(ViewerState& v, const UiState& ui) {
  const view::FeedInfo& in = v.info();
  ImGui::Text("%s", in.name.c_str());
  if (!in.source.empty()) ImGui::Text("source: %s", in.source.c_str());
  if (in.rate > 0)
    ImGui::Text("%ux%u %s  %.3g fps", in.width, in.height, std::string(to_string(in.format)).c_str(), in.rate);
  else  // frames as the application hands them in
    ImGui::Text("%ux%u %s", in.width, in.height, std::string(to_string(in.format)).c_str());
  // gray16 / gray32f: what is shown black .. white, and whose range it is.
  if (in.format == PixelFormat::GRAY16 || in.format == PixelFormat::GRAY32F)
    if (const auto r = v.renderer().gray_range(v.value_range))
      ImGui::Text("grey %.6g .. %.6g (%s)", r->lo, r->hi,
                  v.value_range ? "given" : in.format == PixelFormat::GRAY32F ? "automatic" : "full range");
  if (in.frame_count > 0)
    ImGui::Text("frame %lld / %lld", static_cast<long long>(v.frame_index()),
                static_cast<long long>(in.frame_count));
  else
    ImGui::Text("frame %lld", static_cast<long long>(v.frame_index()));
  attach_lines(v);
  for (const std::string& line : ui.tiles) ImGui::TextUnformatted(line.c_str());
  if (!ui.status.empty()) ImGui::TextDisabled("%s", ui.status.c_str());
}

// Files and recordings: a slider over every frame; moving it seeks.
void timeline(ViewerState& v, UiState& ui) {
  const view::FeedInfo& in = v.info();
  if (!v.paced() || !in.seekable || in.frame_count <= 0) return;
  std::int64_t at = std::max<std::int64_t>(v.frame_index(), 0);
  const std::int64_t first = 0, last = in.frame_count - 1;
  if (ImGui::SliderScalar("frame##timeline", ImGuiDataType_S64, &at, &first, &last, "%lld")) ui.seek = at;
}

void playback(ViewerState& v, UiState& ui) {
  if (ImGui::CollapsingHeader("Playback", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ImGui::Button(v.playing() ? "Pause" : "Play")) ui.toggle_play = true;
    ImGui::SameLine();
    ImGui::BeginDisabled(!v.info().seekable);
    if (ImGui::Button("< Step")) ui.step = -1;
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Step >")) ui.step = +1;
    timeline(v, ui);
    float speed = static_cast<float>(v.speed);
    if (ImGui::SliderFloat("speed", &speed, float(Viewer::kMinSpeed), float(Viewer::kMaxSpeed), "%.2fx",
                           ImGuiSliderFlags_Logarithmic))
      v.speed = speed;
    ImGui::Checkbox("as fast as possible", &v.no_vsync);
    if (ImGui::Button("Fit")) ui.fit_requested = true;
    ImGui::SameLine();
    if (ImGui::Button("1:1")) ui.actual_size_requested = true;
    ImGui::SameLine();
    ImGui::Checkbox("nearest when zoomed", &v.nearest_when_zoomed);
    ImGui::Text("zoom %.0f%%", ui.view.scale * 100.0);
  }
}

void colour(ViewerState& v) {
  if (ImGui::CollapsingHeader("Colour")) {
    const Colorimetry src = v.info().colorimetry;
    ImGui::Text("source: %s, %s, siting %s", std::string(to_string(src.matrix)).c_str(),
                std::string(to_string(src.range)).c_str(), std::string(to_string(src.siting)).c_str());
    int m = v.matrix_override ? int(*v.matrix_override) + 1 : 0;
    if (ImGui::Combo("matrix", &m, kMatrices, 4))
      v.matrix_override = m == 0 ? std::nullopt : std::optional<ColorMatrix>(ColorMatrix(m - 1));
    int r = v.range_override ? int(*v.range_override) + 1 : 0;
    if (ImGui::Combo("range", &r, kRanges, 3))
      v.range_override = r == 0 ? std::nullopt : std::optional<ColorRange>(ColorRange(r - 1));
    int s = v.siting_override ? int(*v.siting_override) + 1 : 0;
    if (ImGui::Combo("chroma siting", &s, kSitings, 4))
      v.siting_override = s == 0 ? std::nullopt : std::optional<ChromaSiting>(ChromaSiting(s - 1));
  }
}

// The classes present in this frame, toggled individually.
void class_filter(ViewerState& v, const media::OverlayFrame* f) {
  if (f && ImGui::TreeNode("classes")) {
    int shown = 0;
    for (const media::OverlayObject& o : f->objects) {
      if (o.class_id < 0 || shown > 32) continue;
      bool seen = false;
      for (const media::OverlayObject& p : f->objects) {
        if (&p == &o) break;
        if (p.class_id == o.class_id) { seen = true; break; }
      }
      if (seen) continue;
      ++shown;
      auto& cls = v.filter.classes;
      bool on = cls.empty() || std::find(cls.begin(), cls.end(), o.class_id) != cls.end();
      const media::Color8 c = media::class_color(o.class_id);
      ImGui::PushStyleColor(ImGuiCol_CheckMark, IM_COL32(c.r, c.g, c.b, 255));
      char name[32];
      std::snprintf(name, sizeof name, "class %d", o.class_id);
      if (ImGui::Checkbox(name, &on)) {
        if (cls.empty()) {  // start from "all present classes"
          for (const media::OverlayObject& q : f->objects)
            if (q.class_id >= 0 && std::find(cls.begin(), cls.end(), q.class_id) == cls.end())
              cls.push_back(q.class_id);
        }
        if (on) cls.push_back(o.class_id);
        else cls.erase(std::remove(cls.begin(), cls.end(), o.class_id), cls.end());
      }
      ImGui::PopStyleColor();
    }
    if (ImGui::SmallButton("all classes")) v.filter.classes.clear();
    ImGui::TreePop();
  }
}

void overlays_panel(ViewerState& v) {
  const media::OverlayFrame* f = v.current_overlays();
  ImGui::Checkbox("overlays", &v.show_overlays);
  ImGui::SameLine();
  ImGui::TextDisabled("%zu objects", f ? f->objects.size() : std::size_t(0));
  if (ImGui::CollapsingHeader("Overlays")) {
    if (!v.overlay_file.empty()) {
      ImGui::TextWrapped("%s", v.overlay_file.c_str());
      if (v.overlay_diagnostics) ImGui::TextColored(ImVec4(1, 0.6f, 0.2f, 1), "%zu bad lines skipped", v.overlay_diagnostics);
    }
    ImGui::SliderFloat("min score", &v.filter.min_score, 0.0f, 1.0f, "%.2f");
    ImGui::Checkbox("boxes", &v.filter.boxes);
    ImGui::SameLine();
    ImGui::Checkbox("labels", &v.filter.labels);
    ImGui::SameLine();
    ImGui::Checkbox("scores", &v.filter.scores);
    ImGui::Checkbox("track ids", &v.filter.track_ids);
    ImGui::SameLine();
    ImGui::Checkbox("keypoints", &v.filter.keypoints);
    ImGui::SameLine();
    ImGui::Checkbox("shapes", &v.filter.shapes);
    ImGui::Checkbox("texts", &v.filter.texts);
    class_filter(v, f);
    ImGui::SliderFloat("line width", &v.style.line_width, 1.0f, 6.0f, "%.1f");
  }
}

// The dense layers: a toggle and an opacity slider each; a class map's legend
// (a toggle per class, with its name); a scalar map's colour bar and range.
// The last item's rectangle into `drawn` (when given) under `name`;
// `width` > 0: only its first `width` pixels (a slider's frame, not its label).
void note(ControlRects* drawn, const std::string& name, float width = 0) {
  if (!drawn) return;
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  (*drawn)[name] = {a.x, a.y, width > 0 ? a.x + width : b.x, b.y};
}

void class_legend(LayerRenderer& r, std::size_t i, ControlRects* drawn) {
  const auto& m = std::get<media::ClassMap>(r.layer(i));
  const std::string layer = "layer " + std::to_string(i);
  const bool open = ImGui::TreeNode("legend");
  note(drawn, layer + " legend");
  if (!open) return;
  LayerControl& c = r.controls()[i];
  bool changed = false;
  for (std::int64_t id : r.legend_ids(i)) {
    if (std::find(m.transparent.begin(), m.transparent.end(), id) != m.transparent.end()) continue;
    auto it = m.colors.find(id);
    const media::Color8 col = it != m.colors.end() ? it->second : media::default_class_color(id);
    ImGui::ColorButton(("##c" + std::to_string(id)).c_str(), ImVec4(col.r / 255.f, col.g / 255.f, col.b / 255.f, 1),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
    ImGui::SameLine();
    bool on = !c.hidden.count(id);
    auto name = m.names.find(id);
    const std::string text = media::class_id_text(m.ids.type, id);
    const std::string label = name != m.names.end() ? name->second + " (" + text + ")" : "id " + text;
    if (ImGui::Checkbox((label + "##l" + std::to_string(id)).c_str(), &on)) {
      if (on) c.hidden.erase(id);
      else c.hidden.insert(id);
      changed = true;
    }
    note(drawn, layer + " id " + std::to_string(id));
  }
  if (ImGui::SmallButton("all classes")) {
    c.hidden.clear();
    changed = true;
  }
  note(drawn, layer + " all classes");
  if (changed) r.refresh_palettes();
  ImGui::TreePop();
}

void colour_bar(const LayerRenderer& r, std::size_t i) {
  const auto& s = std::get<media::ScalarMap>(r.layer(i));
  const auto range = r.range(i).value_or(std::array{0.0, 1.0});
  const auto& table = media::colormap_table(s.colormap);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float w = 200.0f, h = 10.0f;
  ImDrawList* list = ImGui::GetWindowDrawList();
  for (int k = 0; k < 64; ++k) {
    const media::Color8 c = table[std::size_t(k * 255 / 63)];
    list->AddRectFilled(ImVec2(at.x + w * float(k) / 64, at.y), ImVec2(at.x + w * float(k + 1) / 64, at.y + h),
                        IM_COL32(c.r, c.g, c.b, 255));
  }
  ImGui::Dummy(ImVec2(w, h));
  ImGui::Text("%.4g .. %.4g  %s %s", range[0], range[1], std::string(media::to_string(s.colormap)).c_str(),
              s.range ? "(fixed)" : "(auto)");
}

void layers_panel(ViewerState& v) { draw_layer_controls(v.layers()); }

void stats_panel(ViewerState& v) {
  if (ImGui::CollapsingHeader("Stats", ImGuiTreeNodeFlags_DefaultOpen)) {
    Stats& s = v.stats();
    ImGui::Text("%.1f fps   frame p50 %.2f ms  p99 %.2f ms", s.fps, s.frame_ms.percentile(50),
                s.frame_ms.percentile(99));
    const view::FeedInfo& in = v.info();
    if (!in.uploads) {
      // Vulkan writes straight into the textures GL samples: nothing to map or upload.
      ImGui::Text("vulkan %.2f  upload none  draw %.2f ms", s.produce_ms.mean(), s.draw_ms.mean());
      ImGui::TextWrapped("%s", in.memory.c_str());
    } else {
      ImGui::Text("map %.2f  write %.2f  upload %.2f  draw %.2f ms", s.map_ms.mean(),
                  s.produce_ms.mean() - s.map_ms.mean(), s.upload_ms.mean(), s.draw_ms.mean());
      const std::string& mem = in.memory;
      const std::string shown = mem.substr(0, mem.find(" ("));
      ImGui::Text("ring of %zu %s", in.ring, shown.c_str());
      if (shown.size() != mem.size() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", mem.c_str());
    }
    // Where the colour is converted: "cpu" / "gpu shader", the reason on hover.
    const std::string& path = v.renderer().convert_text();
    ImGui::Text("colour: %s", path.substr(0, path.find(" (")).c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", path.c_str());
  }
}

void pixel_panel(ViewerState& viewer, const UiState& ui) {
  if (ImGui::CollapsingHeader("Pixel", ImGuiTreeNodeFlags_DefaultOpen)) {
    const PixelProbe& p = ui.probe;
    ViewerState& v = ui.probe_tile ? *ui.probe_tile : viewer;
    if (ui.probe_tile) ImGui::Text("tile %s", ui.probe_tile_name.c_str());
    if (p.valid) {
      ImGui::Text("x %d  y %d  %s", p.x, p.y, std::string(to_string(p.format)).c_str());
      ImGui::Text("%s", probe_text(p).c_str());
      ImGui::ColorButton("##rgb", ImVec4(p.rgb[0] / 255.f, p.rgb[1] / 255.f, p.rgb[2] / 255.f, 1),
                         ImGuiColorEditFlags_NoTooltip, ImVec2(14, 14));
      ImGui::SameLine();
      ImGui::Text("R %d  G %d  B %d", p.rgb[0], p.rgb[1], p.rgb[2]);
      // The layers under the cursor: the class id and name, the value, the mask.
      for (std::size_t i = 0; i < v.layers().size(); ++i) {
        const LayerProbe lp = v.layers().probe(i, p.x + 0.5, p.y + 0.5);
        ImGui::Text("%s %zu: %s", lp.kind.c_str(), i, lp.text.c_str());
      }
    } else {
      ImGui::TextDisabled("(cursor outside the frame)");
    }
  }
}

}  // namespace

void draw_layer_controls(LayerRenderer& r, ControlRects* drawn) {
  if (r.size() == 0 || !ImGui::CollapsingHeader("Layers", ImGuiTreeNodeFlags_DefaultOpen)) return;
  for (std::size_t i = 0; i < r.size(); ++i) {
    ImGui::PushID(int(i));
    LayerControl& c = r.controls()[i];
    const media::Layer& l = r.layer(i);
    const std::string layer = "layer " + std::to_string(i);
    const std::string name = std::string(media::layer_kind(l)) + " " + std::to_string(i);
    ImGui::Checkbox(name.c_str(), &c.visible);
    note(drawn, layer);
    float opacity = c.opacity.value_or(std::visit([](const auto& x) { return x.opacity; }, l));
    constexpr float kSliderWidth = 120;
    ImGui::SetNextItemWidth(kSliderWidth);
    if (ImGui::SliderFloat("opacity", &opacity, 0.0f, 1.0f, "%.2f")) c.opacity = opacity;
    note(drawn, layer + " opacity", kSliderWidth);
    if (std::holds_alternative<media::ClassMap>(l)) class_legend(r, i, drawn);
    else if (std::holds_alternative<media::ScalarMap>(l)) colour_bar(r, i);
    ImGui::PopID();
  }
}

void draw_ui(ViewerState& v, UiState& ui) {
  help_window(ui);
  if (!ui.show_panel) return;
  ImGui::SetNextWindowPos(ImVec2(8, 8), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(320, 0), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowBgAlpha(0.85f);
  ImGui::Begin(ui.title.empty() ? "handoff" : ui.title.c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize);
  header(v, ui);
  playback(v, ui);
  colour(v);
  overlays_panel(v);
  layers_panel(v);
  stats_panel(v);
  pixel_panel(v, ui);
  ImGui::TextDisabled("press ? for keys");
  ImGui::End();
}

}  // namespace handoff::view
