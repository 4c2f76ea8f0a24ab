#include "app/panels/model_builder.hpp"

#include <algorithm>
#include <cmath>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/params.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

namespace {

// The builder makes models up to this many parameters (θ is allocated at once, in memory).
constexpr size_t kMaxParams = 20'000'000;

// Where a variant comes from, for the label beside its choice ("" for the paper's choice).
const char* source(NormPosition v) {
  return v == NormPosition::Pre ? "variant: pre-LN, GPT-2 (seed 004)" : "variant: post-LN, GPT-1 (seed 004)";
}
const char* source(Norm v) { return v == Norm::RmsNorm ? "variant: RMSNorm (seed 004)" : ""; }
const char* source(Position v) {
  switch (v) {
    case Position::Learned: return "";
    case Position::Sinusoidal: return "variant: §5's sinusoid, computed";
    case Position::Rope: return "variant: RoPE (seed 004)";
    case Position::Alibi: return "variant: ALiBi (seed 004)";
    case Position::None: return "variant: no position at all";
    case Position::Relative: return "variant: T5's relative bias (not in the paper)";
  }
  return "";
}
const char* source(Activation v) {
  switch (v) {
    case Activation::GELU: return "variant: the paper's GPT/BERT GELU, eq. (5)";
    case Activation::GELUTanh: return "variant: GPT-2's tanh GELU";
    case Activation::ReLU: return "variant: the paper's encoder-decoder ReLU";
    case Activation::SwiGLU: return "variant: SwiGLU (seed 004)";
  }
  return "";
}
const char* source(MaskKind v) { return v == MaskKind::Prefix ? "variant: prefix-LM (seed 004)" : ""; }

constexpr NormPosition kNormPositions[] = {NormPosition::Pre, NormPosition::Post};
constexpr Norm kNorms[] = {Norm::LayerNorm, Norm::RmsNorm};
constexpr Position kPositions[] = {Position::Learned, Position::Sinusoidal, Position::Rope, Position::Alibi,
                                   Position::None,    Position::Relative};
constexpr Activation kActivations[] = {Activation::GELU, Activation::GELUTanh, Activation::ReLU, Activation::SwiGLU};
constexpr MaskKind kMasks[] = {MaskKind::Causal, MaskKind::Prefix};
const char* source(AttentionKind v) {
  return v == AttentionKind::Flash            ? "Algorithm 4-F, FlashAttention (seed 004, not in the paper)"
         : v == AttentionKind::RandomFeatures ? "Algorithm 4-R, random features (seed 004, not in the paper)"
                                              : "";
}
constexpr AttentionKind kAttentions[] = {AttentionKind::Exact, AttentionKind::Flash, AttentionKind::RandomFeatures};

// The value of `all` whose to_string is `text`; false when none is.
template <class E, size_t N>
bool parse_choice(const std::string& text, const E (&all)[N], E& out) {
  for (E v : all)
    if (text == to_string(v)) return out = v, true;
  return false;
}

template <class E, size_t N>
std::string choices(const E (&all)[N]) {
  std::string s;
  for (E v : all) s += std::string(s.empty() ? "" : ", ") + to_string(v);
  return s;
}

// A note in the builder's column, wrapped at its edge: at 1280×720 the column is about 34 text
// heights wide, and a note on one line (or after SameLine) would run off the window.
void note(const std::string& text) {
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s", text.c_str());
  ImGui::PopTextWrapPos();
}

// A combo over `all`; `paper` is the paper's value for the arch (its label says so), the others
// are labelled with their source, in the list and in a wrapped note under the combo (the closed
// combo shows the value alone: with its source it would not fit the column at 1280×720). True when
// the user picked another value.
template <class E, size_t N>
bool variant_combo(const char* label, const E (&all)[N], E paper, E& v) {
  auto text = [&](E x) {
    return std::string(to_string(x)) + (x == paper ? "  (the paper's)" : std::string("  — ") + source(x));
  };
  bool changed = false;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12.0f);
  if (ImGui::BeginCombo(label, to_string(v))) {
    for (E x : all)
      if (ImGui::Selectable(text(x).c_str(), x == v)) v = x, changed = true;
    ImGui::EndCombo();
  }
  if (v == paper) {
    ImGui::SameLine();
    ImGui::TextDisabled("(the paper's)");
  } else if (*source(v)) {
    ImGui::Indent();
    note(source(v));
    ImGui::Unindent();
  }
  return changed;
}

bool parse_number(const std::string& text, double& out) {
  try {
    size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size();
  } catch (...) {
    return false;
  }
}

}  // namespace

void ModelBuilder::open(App& app) {
  c_ = app.session.model().config;
  seed_ = 1;
  vocab_[0] = '\0';
  result_.clear();
  app.ui.show.builder = true;
}

std::string ModelBuilder::why_not() const {
  const std::string why = validate(c_);
  if (!why.empty()) return why;
  const size_t n = ParamTable(c_).total();
  if (n > kMaxParams)
    return "this model has " + std::to_string(n) + " parameters; the builder makes models of up to " +
           std::to_string(kMaxParams) + " (θ is held in memory)";
  return "";
}

bool ModelBuilder::set(const std::string& key, const std::string& value, std::string& error) {
  auto bad = [&](const std::string& expected) {
    error = "builder: " + key + " must be " + expected + " (not \"" + value + "\")";
    return false;
  };
  double x = 0;
  if (key == "arch") {
    if (!find_architecture(value)) return bad("gpt, bert or ed");
    c_.arch = value;
  } else if (int* p = config_int(c_, key)) {
    if (!parse_number(value, x) || x != std::floor(x) || std::abs(x) > 1e9) return bad("a whole number");
    *p = static_cast<int>(x);
  } else if (key == "H_kv") {
    if (!parse_number(value, x) || x != std::floor(x) || x < 0 || x > 65536) return bad("a whole number dividing H");
    c_.H_kv = static_cast<int>(x);
  } else if (key == "seed") {
    if (!parse_number(value, x) || x != std::floor(x) || x < 0) return bad("a whole number ≥ 0");
    seed_ = static_cast<uint64_t>(x);
  } else if (key == "norm_position") {
    NormPosition v;
    if (!parse_choice(value, kNormPositions, v)) return bad(choices(kNormPositions));
    c_.norm_position = v;
  } else if (key == "norm") {
    if (!parse_choice(value, kNorms, c_.norm)) return bad(choices(kNorms));
  } else if (key == "position") {
    if (!parse_choice(value, kPositions, c_.position)) return bad(choices(kPositions));
  } else if (key == "activation") {
    Activation v;
    if (!parse_choice(value, kActivations, v)) return bad(choices(kActivations));
    c_.activation = v;
  } else if (key == "mask") {
    if (!parse_choice(value, kMasks, c_.mask)) return bad(choices(kMasks));
  } else if (key == "attention") {
    if (!parse_choice(value, kAttentions, c_.attention)) return bad(choices(kAttentions));
  } else if (key == "block_r" || key == "block_c") {
    if (!parse_number(value, x) || x != std::floor(x) || x < 1 || x > 65536) return bad("a whole number ≥ 1");
    (key == "block_r" ? c_.block_r : c_.block_c) = static_cast<int>(x);
  } else if (key == "rf_features" || key == "rf_seed") {
    if (!parse_number(value, x) || x != std::floor(x) || x < 0 || x > 65536) return bad("a whole number");
    (key == "rf_features" ? c_.rf_features : c_.rf_seed) = static_cast<int>(x);
  } else if (key == "rf_orthogonal") {
    if (value != "true" && value != "false") return bad("true or false");
    c_.rf_orthogonal = value == "true";
  } else if (key == "position_base") {
    if (value == "l_max") c_.position_base = 0;
    else if (parse_number(value, x)) c_.position_base = x;
    else return bad("l_max or a number such as 10000");
  } else if (key == "rope_base") {
    if (!parse_number(value, x)) return bad("a number such as 10000");
    c_.rope_base = x;
  } else if (key == "window" || key == "relative_buckets" || key == "relative_max_distance") {
    if (!parse_number(value, x) || x != std::floor(x) || x < 0 || x > 65536) return bad("a whole number ≥ 0");
    (key == "window" ? c_.window : key == "relative_buckets" ? c_.relative_buckets : c_.relative_max_distance) = static_cast<int>(x);
  } else if (key == "tied_unembedding") {
    if (value != "true" && value != "false") return bad("true or false");
    c_.tied_unembedding = value == "true";
  } else if (key == "prefix_separator") {
    c_.prefix_separator = value;
  } else if (key == "vocab") {
    if (value.size() >= sizeof vocab_) return bad("at most " + std::to_string(sizeof vocab_ - 1) + " bytes");
    std::copy(value.begin(), value.end(), vocab_);
    vocab_[value.size()] = '\0';
    c_.vocab = value.empty() ? ModelConfig::default_vocab() : utf8_split(value);
  } else {
    error = "builder: unknown key \"" + key +
            "\" (arch, L, L_enc, L_dec, d_f, H, d_e, d_attn, d_mid, d_mlp, l_max, norm_position, norm, position, "
            "position_base, rope_base, activation, tied_unembedding, H_kv, mask, prefix_separator, attention, block_r, "
            "block_c, rf_features, rf_seed, rf_orthogonal, vocab, seed, window, relative_buckets, relative_max_distance)";
    return false;
  }
  return true;
}

bool ModelBuilder::create(App& app, std::string& error) {
  error = why_not();
  if (!error.empty()) {
    result_ = "Not created: " + error;
    result_error_ = true;
    return false;
  }
  const std::string summary = variant_summary(c_);
  const std::string label = "new " + c_.arch + " model (seed " + std::to_string(seed_) + ")" +
                            (summary.empty() ? "" : ": " + summary);
  try {
    app.session.set_model(Model::initialised(c_, seed_), label);
  } catch (const std::exception& e) {  // a tokenizer read from files (GPT-2's, WordPiece) that does not fit
    result_ = "Not created: " + std::string(e.what());
    result_error_ = true;
    return error = e.what(), false;
  }
  app.session.restart();
  app.ui.viewed_event = SIZE_MAX;
  result_ = "Created: " + label + ", " + std::to_string(app.session.model().table.total()) + " parameters.";
  result_error_ = false;
  app.notify(result_);
  return true;
}

bool ModelBuilder::save_as(App& app, const std::string& path, std::string& error) {
  if (path.empty()) return error = "Save as needs a file name", false;
  if (!create(app, error)) return false;
  try {
    save_checkpoint(path, app.session.model(), {{"created_by", "stepformer model builder, seed " + std::to_string(seed_)}});
  } catch (const std::exception& ex) {
    error = ex.what();
    result_ = "Created, but not saved: " + error;
    result_error_ = true;
    app.notify(result_, true);
    return false;
  }
  result_ = "Created and saved as " + path + " (" + std::to_string(app.session.model().table.total()) + " parameters).";
  app.notify(result_);
  return true;
}

void ModelBuilder::draw_sizes() {
  const float F = ImGui::GetFontSize();
  int arch = 0;
  const auto& archs = all_architectures();
  for (size_t i = 0; i < archs.size(); ++i)
    if (archs[i]->name() == c_.arch) arch = static_cast<int>(i);
  for (size_t i = 0; i < archs.size(); ++i) {
    if (i) ImGui::SameLine();
    if (ImGui::RadioButton(archs[i]->name().c_str(), &arch, static_cast<int>(i))) c_.arch = archs[i]->name();
    item_tooltip(archs[i]->title() + " (Algorithm " + std::to_string(archs[i]->forward_algorithm()) + ")");
  }
  note(archs[arch]->title());
  std::vector<std::string> keys = archs[arch]->config_keys();
  for (const char* k : {"H", "d_e", "d_attn", "d_mid", "d_mlp", "l_max"}) keys.emplace_back(k);
  if (ImGui::BeginTable("sizes", 2, ImGuiTableFlags_SizingFixedFit)) {
    for (const std::string& k : keys) {
      ImGui::TableNextColumn();
      ImGui::SetNextItemWidth(F * 7.0f);
      ImGui::InputInt(k == "l_max" ? "ℓ_max" : k.c_str(), config_int(c_, k), 1, 8);
    }
    ImGui::TableNextColumn();
    int seed = static_cast<int>(std::min<uint64_t>(seed_, 1u << 30));
    ImGui::SetNextItemWidth(F * 7.0f);
    if (ImGui::InputInt("seed", &seed)) seed_ = static_cast<uint64_t>(std::max(0, seed));
    ImGui::EndTable();
  }
  ImGui::SetNextItemWidth(F * 22.0f);
  if (ImGui::InputTextWithHint("vocabulary", "the default: space, a–z, 0–9, 24 marks", vocab_, sizeof vocab_))
    c_.vocab = vocab_[0] ? utf8_split(vocab_) : ModelConfig::default_vocab();
  note("N_V = " + std::to_string(c_.N_V()) + " (" + std::to_string(c_.vocab.size()) + " characters + [MASK], [BOS], [EOS])");
}

// Which algorithm the heads run: Algorithm 4, 4-F (with its block sizes B_r, B_c) or 4-R (with its D,
// seed and orthogonal features).
void ModelBuilder::draw_attention_kind() {
  variant_combo("attention", kAttentions, AttentionKind::Exact, c_.attention);
  const float F = ImGui::GetFontSize();
  if (c_.attention == AttentionKind::Flash) {  // the query and key block sizes B_r, B_c (≥ 1: validate says so)
    ImGui::Indent();
    ImGui::SetNextItemWidth(F * 7.0f);
    ImGui::InputInt("block_r (B_r, query columns)", &c_.block_r);
    ImGui::SetNextItemWidth(F * 7.0f);
    ImGui::InputInt("block_c (B_c, keys)", &c_.block_c);
    ImGui::Unindent();
  }
  if (c_.attention != AttentionKind::RandomFeatures) return;
  ImGui::Indent();
  ImGui::SetNextItemWidth(F * 7.0f);
  if (ImGui::InputInt("rf_features (D)", &c_.rf_features)) c_.rf_features = std::clamp(c_.rf_features, 1, 65536);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(F * 7.0f);
  if (ImGui::InputInt("rf_seed", &c_.rf_seed)) c_.rf_seed = std::max(0, c_.rf_seed);
  ImGui::Checkbox("rf_orthogonal: Performer's orthogonal features", &c_.rf_orthogonal);
  note("ω is drawn from rf_seed, fixed and not trained; the checkpoint stores the seed, not ω.");
  ImGui::Unindent();
}

void ModelBuilder::draw_variants() {
  const Architecture* a = find_architecture(c_.arch);
  if (!a) return;
  NormPosition np = c_.norm_pos();
  if (variant_combo("norm_position", kNormPositions, a->paper_norm_position(), np)) c_.norm_position = np;
  variant_combo("norm", kNorms, Norm::LayerNorm, c_.norm);
  variant_combo("position", kPositions, Position::Learned, c_.position);
  const float F = ImGui::GetFontSize();
  if (c_.position == Position::Sinusoidal) {
    ImGui::Indent();
    const bool fixed = c_.position_base != 0;  // 0 stands for ℓ_max
    if (ImGui::RadioButton("base ℓ_max (the paper, §5)", !fixed)) c_.position_base = 0;
    if (ImGui::RadioButton("a fixed base — Vaswani et al.: 10000 (seeds 003, 004)", fixed)) c_.position_base = 10000;
    if (fixed) {
      ImGui::SetNextItemWidth(F * 9.0f);
      ImGui::InputDouble("position_base", &c_.position_base, 0, 0, "%.6g");
    }
    ImGui::Unindent();
  }
  if (c_.position == Position::Rope) {
    ImGui::Indent();
    ImGui::SetNextItemWidth(F * 9.0f);
    ImGui::InputDouble("rope_base", &c_.rope_base, 0, 0, "%.6g");
    ImGui::Unindent();
  }
  if (c_.position == Position::Relative) draw_relative_bias();
  Activation act = c_.act();
  if (variant_combo("activation", kActivations, a->paper_activation(), act)) c_.activation = act;
  ImGui::Checkbox("tied_unembedding: W_u = W_eᵀ", &c_.tied_unembedding);
  if (c_.tied_unembedding) {
    ImGui::SameLine();
    note("variant: seed 001, GPT-2");
  }
  int h_kv = c_.kv_heads();
  ImGui::SetNextItemWidth(F * 7.0f);
  if (ImGui::InputInt("H_kv (key/value heads)", &h_kv)) c_.H_kv = std::max(0, h_kv) == c_.H ? 0 : std::max(0, h_kv);
  if (c_.H_kv > 0 && c_.H_kv < c_.H) {
    ImGui::SameLine();
    note(c_.H_kv == 1 ? "variant: multi-query (seed 004)" : "variant: grouped-query (seed 004)");
  }
  if (c_.arch == "gpt") {
    variant_combo("mask", kMasks, MaskKind::Causal, c_.mask);
    if (c_.mask == MaskKind::Prefix) {
      ImGui::Indent();
      char sep[16];
      const size_t n = std::min(c_.prefix_separator.size(), sizeof sep - 1);
      std::copy_n(c_.prefix_separator.begin(), n, sep);
      sep[n] = '\0';
      ImGui::SetNextItemWidth(F * 4.0f);
      if (ImGui::InputText("prefix_separator", sep, sizeof sep)) c_.prefix_separator = sep;
      ImGui::Unindent();
    }
  }
  draw_attention_kind();
  draw_window();
  const std::string summary = variant_summary(c_);
  note(summary.empty() ? "The paper's model." : "Variants: " + summary);
}

// T5's bucketing of the relative bias (issue 25, not in the paper).
void ModelBuilder::draw_relative_bias() {
  const float F = ImGui::GetFontSize();
  ImGui::Indent();
  ImGui::SetNextItemWidth(F * 7.0f);
  ImGui::InputInt("relative_buckets", &c_.relative_buckets);
  ImGui::SetNextItemWidth(F * 7.0f);
  ImGui::InputInt("relative_max_distance", &c_.relative_max_distance);
  note("B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)] is added to S/√d_attn in every self-attention");
  if (c_.arch == "ed")  // T5's own architecture: both bucketings, no bias across the two sequences
    note("encoder: bidirectional buckets; decoder: causal buckets; cross-attention: no B");
  ImGui::Unindent();
}

// Sliding-window attention (issue 25, not in the paper): every self-attention's mask keeps |t_z − t_x| ≤ w.
void ModelBuilder::draw_window() {
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.0f);
  if (ImGui::InputInt("window w (0: off)", &c_.window)) c_.window = std::max(0, c_.window);
  if (c_.window > 0) {
    ImGui::Indent();
    note("variant: sliding window (seed 004): causal keeps t_x − w ≤ t_z ≤ t_x, " + std::to_string(c_.window + 1) +
         " keys; bidirectional |t_x − t_z| ≤ w; cross-attention unwindowed");
    ImGui::Unindent();
  }
}

void ModelBuilder::draw_table(App& app, float height) {
  const ParamTable table(c_);
  ImGui::Text("%zu parameters", table.total());
  ImGui::SameLine();
  ImGui::TextDisabled("in %zu tensors", table.entries().size());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_SizingStretchProp;
  const float F = ImGui::GetFontSize();
  if (!ImGui::BeginTable("params", 4, flags, ImVec2(0, std::max(F * 4.0f, height - F * 3.0f)))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 3.0f);
  ImGui::TableSetupColumn("symbol", ImGuiTableColumnFlags_WidthStretch, 1.5f);
  ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_WidthStretch, 2.0f);
  ImGui::TableSetupColumn("size", ImGuiTableColumnFlags_WidthStretch, 1.2f);
  ImGui::TableHeadersRow();
  ImGuiListClipper clip;
  clip.Begin(static_cast<int>(table.entries().size()));
  while (clip.Step())
    for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
      const ParamEntry& e = table.entries()[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(e.name.c_str());
      ImGui::TableNextColumn();
      math_text(app.fonts, e.symbol);
      ImGui::TableNextColumn();
      std::string shape;
      for (int64_t d : e.shape()) shape += (shape.empty() ? "" : " × ") + std::to_string(d);
      ImGui::PushFont(app.fonts.mono);
      ImGui::TextUnformatted(shape.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%zu", e.size());
      ImGui::PopFont();
    }
  ImGui::EndTable();
}

void ModelBuilder::draw(App& app) {
  const float F = ImGui::GetFontSize();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(std::min(F * 64.0f, vp->WorkSize.x * 0.95f), std::min(F * 42.0f, vp->WorkSize.y * 0.92f)),
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowBgAlpha(1.0f);  // opaque over the panels, for a projector
  bool open = true;
  if (ImGui::Begin("New model###builder", &open, ImGuiWindowFlags_NoCollapse)) {
    const std::string why = why_not();
    const float footer = F * (2.4f + (why.empty() ? 0.0f : 2.4f) + (result_.empty() ? 0.0f : 1.4f));
    const float body_h = std::max(F * 8.0f, ImGui::GetContentRegionAvail().y - footer);
    if (ImGui::BeginTable("builder", 2, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerV,
                          ImVec2(0, body_h))) {
      ImGui::TableSetupColumn("choices", ImGuiTableColumnFlags_WidthStretch, 1.15f);
      ImGui::TableSetupColumn("table", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      ImGui::TableNextColumn();
      ImGui::BeginChild("choices", ImVec2(0, body_h - F * 0.4f));
      ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "Architecture and sizes");
      draw_sizes();
      ImGui::Separator();
      ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "Variants (docs/variants.md)");
      draw_variants();
      ImGui::EndChild();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "Parameters θ");
      if (validate(c_).empty()) draw_table(app, body_h);
      else ImGui::TextDisabled("(no table for an impossible configuration)");
      ImGui::EndTable();
    }
    ImGui::Separator();
    ImGui::PushTextWrapPos(0.0f);
    if (!why.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "Impossible: %s", why.c_str());
    ImGui::PopTextWrapPos();
    std::string error;
    ImGui::BeginDisabled(!why.empty());
    if (ImGui::Button("Create")) create(app, error);
    ImGui::SameLine();
    if (ImGui::Button("Create and save as")) save_as(app, save_path_, error);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::SetNextItemWidth(F * 18.0f);
    ImGui::InputText("##save", save_path_, sizeof save_path_);
    ImGui::SameLine();
    if (ImGui::Button("Close")) open = false;
    if (!result_.empty())
      ImGui::TextColored(result_error_ ? ImVec4(1, 0.4f, 0.35f, 1) : ImVec4(0.5f, 0.85f, 0.5f, 1), "%s", result_.c_str());
  }
  ImGui::End();
  if (!open) app.ui.show.builder = false;
}

}  // namespace sf
