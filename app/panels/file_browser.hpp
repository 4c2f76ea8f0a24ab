// File › Open… (Ctrl+O): an in-app file browser built on std::filesystem, so that it works
// everywhere the app does (no system dialog in Debian's packages, none under Xvfb). A path
// field, parent and home buttons, a sortable table of the directory, .safetensors only unless
// "all files" is on; double-click or Open loads a checkpoint through App::open_model. A model
// from the ecosystem is a folder (the checkpoint, config.json, the tokenizer files): "Open this
// folder" opens the folder shown, and folders holding a config.json are marked as models.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/app.hpp"

namespace sf {

struct FileBrowser {
  void draw(App& app);
  // Shows `dir` (--actions files:PATH); false with the reason in the window when it cannot be read.
  bool browse(const std::string& dir);
  // "Open this folder": opens the folder shown as a model.
  void open_folder(App& app) { open_file(app, dir_); }

 private:
  static constexpr uintmax_t unknown_size = static_cast<uintmax_t>(-1);
  struct Entry {
    std::string name;
    bool dir = false;
    bool model = false;    // a folder holding config.json (an ecosystem model's folder)
    uintmax_t size = 0;    // bytes; unknown_size for folders and unreadable files
    std::string modified;  // "2024-05-01 12:34", or "" when unknown
    int64_t mtime = 0;     // seconds since the epoch, for sorting
  };
  // Lists `dir`; on failure keeps the current directory and sets error_.
  bool open_dir(const std::filesystem::path& dir);
  void open_file(App& app, const std::filesystem::path& file);
  void sort_entries();

  bool started_ = false;
  std::filesystem::path dir_;
  std::string path_buf_;
  std::vector<Entry> entries_;
  std::string error_;
  std::string selected_;   // the selected entry's name
  bool show_all_ = false;  // every file, hidden ones included, not only .safetensors
  int sort_column_ = 0;    // 0 name, 1 size, 2 modified
  bool sort_ascending_ = true;
};

}  // namespace sf
