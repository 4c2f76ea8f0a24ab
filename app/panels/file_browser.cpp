#include "app/panels/file_browser.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <system_error>

#include "app/panels/panel.hpp"
#include "imgui_stdlib.h"

namespace fs = std::filesystem;

namespace sf {

namespace {

std::string human_size(uintmax_t n) {
  static const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_checkpoint(const std::string& name) {
  const std::string n = lower(name), ext = ".safetensors";
  return n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0;
}

fs::path home_dir() {
  const char* h = std::getenv("HOME");
  return h && *h ? fs::path(h) : fs::path("/");
}

}  // namespace

bool FileBrowser::open_dir(const fs::path& dir) {
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  if (ec) abs = dir;
  abs = abs.lexically_normal();
  if (!abs.has_filename() && abs != abs.root_path()) abs = abs.parent_path();  // "/a/b/" → "/a/b"
  fs::directory_iterator it(abs, ec);
  if (ec) {
    error_ = "Cannot read " + abs.string() + ": " + ec.message();
    return false;
  }
  std::vector<Entry> list;
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::directory_entry& de = *it;
    Entry e;
    e.name = de.path().filename().string();
    std::error_code ec2;
    e.dir = de.is_directory(ec2);
    e.model = e.dir && fs::exists(de.path() / "config.json", ec2);
    e.size = e.dir ? unknown_size : de.file_size(ec2);
    if (ec2) e.size = unknown_size;
    std::error_code ec3;
    const fs::file_time_type t = de.last_write_time(ec3);
    if (!ec3) {
      const auto sys = std::chrono::file_clock::to_sys(t);
      const std::time_t tt = std::chrono::system_clock::to_time_t(
          std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys));
      e.mtime = static_cast<int64_t>(tt);
      std::tm tm{};
      char buf[32];
      if (localtime_r(&tt, &tm) && std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm)) e.modified = buf;
    }
    list.push_back(std::move(e));
  }
  error_ = ec ? "Could not list all of " + abs.string() + ": " + ec.message() : "";
  dir_ = abs;
  path_buf_ = abs.string();
  entries_ = std::move(list);
  selected_.clear();
  sort_entries();
  return true;
}

void FileBrowser::sort_entries() {
  std::stable_sort(entries_.begin(), entries_.end(), [&](const Entry& a, const Entry& b) {
    if (a.dir != b.dir) return a.dir;  // folders first, whatever the order
    bool less = false;
    if (sort_column_ == 1 && a.size != b.size) less = a.size < b.size;
    else if (sort_column_ == 2 && a.mtime != b.mtime) less = a.mtime < b.mtime;
    else if (lower(a.name) != lower(b.name)) less = lower(a.name) < lower(b.name);
    else return false;
    return sort_ascending_ ? less : !less;
  });
}

bool FileBrowser::browse(const std::string& dir) {
  started_ = true;
  return open_dir(dir);
}

void FileBrowser::open_file(App& app, const fs::path& file) {
  app.open_model(file.string());
  if (app.ui.notice_is_error) {
    error_ = app.ui.notice;
  } else {
    error_.clear();
    app.ui.show.files = false;
  }
}

void FileBrowser::draw(App& app) {
  const float fs_px = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(fs_px * 46.0f, fs_px * 28.0f), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the panels, for a projector
  bool open = true;
  if (!ImGui::Begin("Open a checkpoint or a model folder###files", &open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    app.ui.show.files = open;
    return;
  }
  if (ImGui::IsWindowAppearing()) {
    if (!started_) {
      started_ = true;
      fs::path start = assets_dir();
      std::error_code ec;
      if (!app.settings.recent_files.empty()) {
        const fs::path last = fs::path(app.settings.recent_files.front()).parent_path();
        if (fs::is_directory(last, ec)) start = last;
      }
      if (!open_dir(start) && !open_dir(home_dir())) open_dir("/");
    } else {
      open_dir(dir_);  // list it again: files may have changed while the window was closed
    }
  }
  // What to do after the table is drawn (entries_ must not change while it is being drawn).
  fs::path go_dir, go_file;

  if (ImGui::Button("↑ Parent")) go_dir = dir_.parent_path();
  item_tooltip("The folder that contains this one");
  ImGui::SameLine();
  if (ImGui::Button("Home")) go_dir = home_dir();
  item_tooltip(home_dir().string());
  ImGui::SameLine();
  if (ImGui::Button("Assets")) go_dir = assets_dir();
  item_tooltip("Stepformer's assets folder: " + assets_dir());
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (ImGui::InputText("##path", &path_buf_, ImGuiInputTextFlags_EnterReturnsTrue)) {
    std::error_code ec;
    const fs::path p(path_buf_);
    if (fs::is_directory(p, ec)) go_dir = p;
    else if (fs::is_regular_file(p, ec)) go_file = p;
    else error_ = "No such file or folder: " + path_buf_;
  }
  item_tooltip("Type a folder or a file and press Enter");

  ImGui::Checkbox("Show all files", &show_all_);
  item_tooltip("Off: folders and .safetensors checkpoints only. On: every file, hidden ones too.");
  ImGui::SameLine();
  ImGui::TextDisabled(show_all_ ? "(every file)" : "(folders and *.safetensors)");
  const char* open_folder_label = "Open this folder";
  ImGui::SameLine(ImGui::GetContentRegionMax().x - ImGui::CalcTextSize("Refresh").x -
                  ImGui::CalcTextSize(open_folder_label).x - ImGui::GetStyle().FramePadding.x * 4.0f -
                  ImGui::GetStyle().ItemSpacing.x);
  const bool open_this = ImGui::Button(open_folder_label);
  item_tooltip("Opens " + dir_.string() + " as a model: its .safetensors checkpoint with config.json and the tokenizer "
               "files beside it (Hugging Face GPT-2 or BERT, nanoGPT/minGPT; docs/ecosystem.md), or the only "
               "Stepformer checkpoint in it");
  ImGui::SameLine();
  if (ImGui::Button("Refresh")) go_dir = dir_;
  if (!error_.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.35f, 1.0f), "%s", error_.c_str());
    ImGui::PopTextWrapPos();
  }

  const float footer = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  const ImGuiTableFlags tf = ImGuiTableFlags_Sortable | ImGuiTableFlags_ScrollY | ImGuiTableFlags_RowBg |
                             ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable;
  int shown = 0;
  if (ImGui::BeginTable("dir", 3, tf, ImVec2(0, std::max(fs_px * 5.0f, ImGui::GetContentRegionAvail().y - footer)))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("Size", ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_PreferSortDescending,
                            fs_px * 5.5f);
    ImGui::TableSetupColumn("Modified", ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_PreferSortDescending,
                            fs_px * 9.0f);
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* ss = ImGui::TableGetSortSpecs(); ss && ss->SpecsDirty) {
      if (ss->SpecsCount > 0) {
        sort_column_ = ss->Specs[0].ColumnIndex;
        sort_ascending_ = ss->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
      }
      sort_entries();
      ss->SpecsDirty = false;
    }
    for (const Entry& e : entries_) {
      if (!show_all_ && (e.name.starts_with(".") || (!e.dir && !is_checkpoint(e.name)))) continue;
      ++shown;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string label = e.dir ? e.name + "/" : e.name;
      if (ImGui::Selectable(label.c_str(), selected_ == e.name,
                            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
        selected_ = e.name;
        if (ImGui::IsMouseDoubleClicked(0)) (e.dir ? go_dir : go_file) = dir_ / e.name;
      }
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", e.model ? "model folder"
                                : e.size == unknown_size ? (e.dir ? "folder" : "?")
                                                         : human_size(e.size).c_str());
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", e.modified.c_str());
    }
    ImGui::EndTable();
  }

  // Footer: the selection, Open and Cancel.
  const Entry* sel = nullptr;
  for (const Entry& e : entries_)
    if (e.name == selected_) sel = &e;
  ImGui::AlignTextToFramePadding();
  if (sel) ImGui::TextUnformatted((dir_ / sel->name).string().c_str());
  else ImGui::TextDisabled(shown ? "Double-click a checkpoint to open it, or open a model's folder" : "Nothing to show here");
  const float bw = ImGui::CalcTextSize("Open").x + ImGui::CalcTextSize("Cancel").x +
                   ImGui::GetStyle().FramePadding.x * 4.0f + ImGui::GetStyle().ItemSpacing.x;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetContentRegionMax().x - bw));
  ImGui::BeginDisabled(!sel);
  if (ImGui::Button("Open") && sel) (sel->dir ? go_dir : go_file) = dir_ / sel->name;
  ImGui::EndDisabled();
  ImGui::SameLine();
  bool close = ImGui::Button("Cancel");
  if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && !ImGui::IsAnyItemActive()) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) close = true;
    if (sel && go_dir.empty() && go_file.empty() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false))
      (sel->dir ? go_dir : go_file) = dir_ / sel->name;
  }
  ImGui::End();

  if (!go_dir.empty()) open_dir(go_dir);
  if (!go_file.empty()) open_file(app, go_file);
  if (open_this) open_file(app, dir_);
  if (!open || close) app.ui.show.files = false;
}

}  // namespace sf
