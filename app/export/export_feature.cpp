#include "app/export/export_feature.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/app.hpp"
#include "app/export/export_targets.hpp"
#include "app/export/frame_capture.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/heatmap.hpp"
#include "core/io/fileio.hpp"
#include "core/model/error.hpp"
#include "imgui.h"
#include "imgui_stdlib.h"

namespace sf {

namespace {

namespace fs = std::filesystem;

constexpr ExportFormat kFormats[] = {ExportFormat::Csv, ExportFormat::Npy, ExportFormat::Png, ExportFormat::Svg};

class ExportFeature : public Feature {
 public:
  void file_menu(App& app) override;
  void heatmap_menu(App& app, const HeatmapMenuRequest& req) override;
  void overlay(App& app) override;
  void after_render(App& app, int w, int h) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

 private:
  // Opens the save dialog for `job`, its path `stem`.ext in the last export folder.
  void ask(ExportJob job, const std::string& stem);
  // Runs a job now (a frame capture: after this frame is rendered); false with the error kept.
  bool run(App& app, const ExportJob& job, const std::string& path, bool capture_now);
  void done(App& app, const std::string& path, std::string error);
  void dialog(App& app);

  std::optional<ExportJob> dialog_job_;  // what the open dialog saves
  bool open_dialog_ = false;             // open it on the next frame
  std::string dialog_path_, dialog_error_;
  // A window or panel capture waiting for its frame to be rendered.
  struct Capture {
    ExportJob job;
    std::string path;
    size_t frame = 0;
  };
  std::optional<Capture> capture_;
  std::string last_dir_, last_path_, last_error_;
  int count_ = 0;
};

void ExportFeature::ask(ExportJob job, const std::string& stem) {
  const std::string ext = job.kind == ExportKind::Matrix ? extension(job.format)
                          : job.kind == ExportKind::Trace ? "json"
                                                          : "png";
  const fs::path dir = last_dir_.empty() ? fs::path(".") : fs::path(last_dir_);
  dialog_path_ = (dir / (stem + "." + ext)).lexically_normal().string();
  dialog_error_.clear();
  dialog_job_ = std::move(job);
  open_dialog_ = true;
}

void ExportFeature::done(App& app, const std::string& path, std::string error) {
  last_error_ = std::move(error);
  if (!last_error_.empty()) {
    app.notify("Export failed: " + last_error_, true);
    return;
  }
  last_path_ = path;
  last_dir_ = fs::path(path).parent_path().string();
  ++count_;
  app.notify("Exported " + path);
}

bool ExportFeature::run(App& app, const ExportJob& job, const std::string& path, bool capture_now) {
  std::string error = check_export_path(path);
  if (error.empty() && (job.kind == ExportKind::Window || job.kind == ExportKind::Panel)) {
    // The pixels exist once the frame is rendered (after_render); a dialog waits one frame so
    // that it is not in the picture.
    capture_ = Capture{job, path, app.ui.frame_index + (capture_now ? 0 : 1)};
    return true;
  }
  if (error.empty()) try {
      run_export(app, job, path);
    } catch (const std::exception& e) {
      error = e.what();
    }
  const bool ok = error.empty();
  done(app, path, std::move(error));
  return ok;
}

void ExportFeature::after_render(App& app, int w, int h) {
  if (!capture_ || capture_->frame > app.ui.frame_index) return;
  const Capture c = std::move(*capture_);
  capture_.reset();
  std::string error;
  try {
    RgbaImage img = read_back_buffer(w, h);
    if (c.job.kind == ExportKind::Panel) {
      const PanelRect r = panel_rect(c.job.window);
      if (!r.found) throw Error("no open window named \"" + c.job.window + "\"");
      const ImVec2 s = ImGui::GetIO().DisplayFramebufferScale;
      img = crop(img, static_cast<int>(r.x * s.x), static_cast<int>(r.y * s.y), static_cast<int>(r.w * s.x),
                 static_cast<int>(r.h * s.y));
      if (img.w == 0 || img.h == 0) throw Error("the window \"" + c.job.window + "\" is off the screen");
    }
    write_file_atomic(c.path, encode_png(img));
  } catch (const std::exception& e) {
    error = e.what();
  }
  done(app, c.path, std::move(error));
}

void ExportFeature::file_menu(App& app) {
  if (!ImGui::BeginMenu("Export")) return;
  if (ImGui::BeginMenu("Shown tensor as")) {
    std::string why;
    std::optional<ExportJob> job = shown_tensor_job(app, ExportFormat::Csv, why);
    if (!job) ImGui::TextDisabled("%s", why.c_str());
    for (ExportFormat f : kFormats)
      if (ImGui::MenuItem((std::string(format_title(f)) + "…").c_str(), nullptr, false, job.has_value())) {
        job->format = f;
        ask(*job, file_stem(job->what.figure.caption));
      }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Window as PNG…")) ask(job_of_kind(ExportKind::Window), "stepformer-window");
  if (ImGui::BeginMenu("Panel as PNG")) {
    for (const std::string& name : open_panels())
      if (ImGui::MenuItem((window_title(name) + "…").c_str())) {
        ExportJob job = job_of_kind(ExportKind::Panel);
        job.window = name;
        ask(job, "stepformer-" + file_stem(window_title(name)));
      }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Trace as JSON…", nullptr, false, app.session.trace().size() > 0))
    ask(job_of_kind(ExportKind::Trace), "stepformer-trace");
  ImGui::EndMenu();
}

void ExportFeature::heatmap_menu(App& app, const HeatmapMenuRequest& req) {
  if (req.value.kind == ValueKind::Tokens || req.value.m.size() == 0) return;
  for (ExportFormat f : kFormats) {
    const std::string label = std::string(f == ExportFormat::Csv ? "Export as CSV" : format_title(f)) + "…";
    if (ImGui::MenuItem(label.c_str())) {
      ExportJob job = matrix_job(req.value, req.opt, f);
      ask(job, file_stem(job.what.figure.caption));
    }
  }
  if (ImGui::MenuItem("Copy caption")) {
    const std::string c = req.opt.caption.empty() ? req.value.name : req.opt.caption;
    ImGui::SetClipboardText(c.c_str());
    app.notify("Copied: " + c);
  }
}

void ExportFeature::overlay(App& app) {
  if (open_dialog_) {
    ImGui::OpenPopup("Export##export-dialog");
    open_dialog_ = false;
  }
  if (dialog_job_) dialog(app);
}

void ExportFeature::dialog(App& app) {
  const float F = ImGui::GetFontSize();
  ImGui::SetNextWindowSize(ImVec2(F * 36, 0), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal("Export##export-dialog", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    dialog_job_.reset();
    return;
  }
  ExportJob& job = *dialog_job_;
  ImGui::TextUnformatted(describe_job(job).c_str());
  if (job.kind == ExportKind::Matrix) ImGui::TextDisabled("%s", job.what.figure.caption.c_str());
  ImGui::Spacing();
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(F * 34);
  const bool enter = ImGui::InputText("##export-path", &dialog_path_, ImGuiInputTextFlags_EnterReturnsTrue);
  std::error_code ec;
  if (fs::exists(dialog_path_, ec)) ImGui::TextDisabled("This file exists: Save replaces it.");
  if (job.kind == ExportKind::Trace) {
    ImGui::Checkbox("with the values", &job.values);
    ImGui::SameLine();
    help_marker("Every value's numbers, row-major (docs/export.md). A GPT-2 trace's values are hundreds of MB.");
  }
  if (!dialog_error_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.3f, 1.0f));
    ImGui::TextWrapped("%s", dialog_error_.c_str());
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  bool close = false;
  if (ImGui::Button("Save") || enter) {
    if (run(app, job, dialog_path_, false)) close = true;
    else dialog_error_ = last_error_;
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) close = true;
  if (close) {
    ImGui::CloseCurrentPopup();
    dialog_job_.reset();
  }
  ImGui::EndPopup();
}

ActionResult ExportFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  // FIRST:REST of an argument.
  auto split = [](const std::string& s) -> std::pair<std::string, std::string> {
    const size_t c = s.find(':');
    return c == std::string::npos ? std::pair{s, std::string()} : std::pair{s.substr(0, c), s.substr(c + 1)};
  };
  auto finish = [&](bool ok) {
    if (!ok) error = last_error_;
    return ok ? ActionResult::Done : ActionResult::Failed;
  };
  auto format_of = [&](const std::string& s) {
    std::optional<ExportFormat> f = parse_export_format(s);
    if (!f) error = "unknown export format \"" + s + "\" (csv, npy, png or svg)";
    return f;
  };
  if (verb == "export" || verb == "export-dialog") {
    const auto [fmt, path] = split(arg);
    const std::optional<ExportFormat> f = format_of(fmt);
    if (!f) return ActionResult::Failed;
    std::optional<ExportJob> job = shown_tensor_job(app, *f, error);
    if (!job) return ActionResult::Failed;
    if (verb == "export-dialog") {
      ask(*job, file_stem(job->what.figure.caption));
      return ActionResult::Done;
    }
    if (path.empty()) return error = "export needs FORMAT:PATH, e.g. export:csv:/tmp/P.csv", ActionResult::Failed;
    return finish(run(app, *job, path, true));
  }
  if (verb == "export-value") {
    const auto [name, rest] = split(arg);
    const auto [fmt, path] = split(rest);
    if (path.empty())
      return error = "export-value needs NAME:FORMAT:PATH, e.g. export-value:Q:npy:/tmp/Q.npy", ActionResult::Failed;
    const std::optional<ExportFormat> f = format_of(fmt);
    if (!f) return ActionResult::Failed;
    std::optional<ExportJob> job = value_job(app, name, *f, error);
    return job ? finish(run(app, *job, path, true)) : ActionResult::Failed;
  }
  if (verb == "export-window" || verb == "export-panel") {
    ExportJob job = job_of_kind(verb == "export-window" ? ExportKind::Window : ExportKind::Panel);
    std::string path = arg;
    if (job.kind == ExportKind::Panel) {
      std::tie(job.window, path) = split(arg);
      if (!panel_rect(job.window).found) {
        std::string names;
        for (const auto& n : open_panels()) names += (names.empty() ? "" : ", ") + n;
        return error = "no open window named \"" + job.window + "\" (open: " + names + ")", ActionResult::Failed;
      }
    }
    if (path.empty()) return error = verb + " needs a PATH", ActionResult::Failed;
    return finish(run(app, job, path, true));
  }
  if (verb == "export-trace" || verb == "export-trace-values") {
    if (arg.empty()) return error = verb + " needs a PATH", ActionResult::Failed;
    ExportJob job = job_of_kind(ExportKind::Trace);
    job.values = verb == "export-trace-values";
    return finish(run(app, job, arg, true));
  }
  return ActionResult::NotMine;
}

void ExportFeature::dump(const App&, nlohmann::ordered_json& j) const {
  j["export"] = {{"last_path", last_path_},
                 {"last_error", last_error_},
                 {"count", count_},
                 {"dialog", dialog_job_ ? dialog_path_ : std::string()},
                 {"pending_capture", capture_.has_value()}};
}

}  // namespace

std::unique_ptr<Feature> make_export_feature() { return std::make_unique<ExportFeature>(); }

}  // namespace sf
