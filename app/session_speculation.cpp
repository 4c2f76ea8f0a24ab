#include "app/session_speculation.hpp"

#include <algorithm>
#include <filesystem>

#include "app/session.hpp"
#include "core/io/model_files.hpp"

namespace sf {

namespace {

// The model at `path` if it can draft for `target`; null (with `why`) otherwise.
std::shared_ptr<const Model> load_draft(const std::string& path, const Model& target, std::string& why) {
  try {
    OpenedModel om = open_model(path);
    check_draft_model(target, om.checkpoint.model);
    return std::make_shared<const Model>(std::move(om.checkpoint.model));
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

// The .safetensors files directly in `dir`, sorted by name.
std::vector<std::filesystem::path> safetensors_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool Speculation::pick_draft(const std::string& name, const std::string& path, const Model& target) {
  std::string why;
  std::shared_ptr<const Model> m = load_draft(path, target, why);
  if (!m) {
    error_ = why;  // the loader's and check_draft_model's messages name the file or the model
    return false;
  }
  draft_ = std::move(m);
  draft_name_ = name;
  draft_path_ = path;
  error_.clear();
  return true;
}

std::vector<DraftCandidate> Speculation::candidates(const Model& target) const {
  if (candidates_known_) return candidates_;
  std::vector<DraftCandidate>& out = candidates_;
  out.clear();
  const auto add = [&](const std::filesystem::path& p, const std::string& origin) {
    for (const DraftCandidate& c : out)
      if (std::filesystem::path(c.path).lexically_normal() == p.lexically_normal()) return;
    std::string why;
    if (load_draft(p.string(), target, why)) out.push_back({p.filename().string() + " (" + origin + ")", p.string()});
  };
  const std::filesystem::path assets = assets_dir();
  add(assets / "draft.safetensors", "bundled");
  for (const auto& p : safetensors_in(assets)) add(p, "bundled");
  for (const auto& p : safetensors_in(assets / "lessons")) add(p, "bundled lesson model");
  for (const std::string& p : opened_) add(p, "opened");
  candidates_known_ = true;
  return out;
}

void Speculation::remember_opened(const std::string& path) {
  if (std::find(opened_.begin(), opened_.end(), path) == opened_.end()) opened_.push_back(path);
  candidates_known_ = false;
}

void Speculation::retarget(const Model& target) {
  result_ = {};
  candidates_known_ = false;
  if (!draft_) return;
  try {
    check_draft_model(target, *draft_);
  } catch (const std::exception& e) {
    error_ = draft_name_ + " no longer fits: " + e.what();
    draft_.reset();
    draft_name_.clear();
  }
}

}  // namespace sf
