#include "app/panels/tokenizer_panel.hpp"

#include <algorithm>
#include <functional>

#include "app/logic/vision.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "app/widgets/wording.hpp"
#include "imgui_stdlib.h"

namespace sf {

namespace {

// A piece as the panel quotes it, its spaces made visible: “␣cat”.
std::string shown(const std::string& piece) { return "“" + visible_whitespace(piece) + "”"; }

// A colour per piece (its index in the vocabulary), light enough for black text on the light
// theme and dark enough for white on the dark one.
ImU32 piece_color(int index, bool dark) {
  const float hue = static_cast<float>((index * 0.61803398875) - static_cast<int>(index * 0.61803398875));
  return ImColor::HSV(hue, dark ? 0.55f : 0.30f, dark ? 0.45f : 0.97f);
}

// Pieces as boxes, wrapped to the width available; `highlight` (if any) outlined in `accent`.
void piece_flow(App& app, const std::vector<std::string>& pieces, const std::function<int(const std::string&)>& index,
                const std::string& highlight, ImU32 accent) {
  const ImFont* font = app.fonts.mono;
  const float F = font->FontSize, pad = std::round(F * 0.2f), h = F + pad * 2;
  const bool dark = app.settings.dark;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x_start = ImGui::GetCursorScreenPos().x, x_end = x_start + ImGui::GetContentRegionAvail().x;
  ImVec2 p = ImGui::GetCursorScreenPos();
  for (const std::string& piece : pieces) {
    const std::string label = visible_whitespace(piece);
    const float w = font->CalcTextSizeA(F, FLT_MAX, 0, label.c_str()).x + pad * 2;
    if (p.x + w > x_end && p.x > x_start) {
      p.x = x_start;
      p.y += h + 2;
    }
    const ImU32 bg = piece_color(index(piece), dark);
    dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), bg, 2.0f);
    if (piece == highlight) dl->AddRect(p, ImVec2(p.x + w, p.y + h), accent, 2.0f, 0, 2.5f);
    dl->AddText(font, F, ImVec2(p.x + pad, p.y + pad), ink_for(bg), label.c_str());
    p.x += w + 2;
  }
  ImGui::Dummy(ImVec2(x_end - x_start, p.y + h - ImGui::GetCursorScreenPos().y + 2));
}

}  // namespace

std::string merge_heading(const BpeMerge& m) {
  return "Merge " + std::to_string(m.rank) + ": " + shown(m.left) + " + " + shown(m.right) + " → " + shown(m.merged) +
         " (the pair occurred " + counted(m.count, "time") + ")";
}

void TokenizerPanel::set_corpus(const std::string& text) {
  corpus_ = text;
  trainer_.reset();
}

void TokenizerPanel::set_target(int vocab) {
  target_ = std::clamp(vocab, 1, 100000);
  trainer_.reset();
}

bool TokenizerPanel::ensure() {
  if (trainer_) return true;
  try {
    trainer_ = std::make_unique<BpeTrainer>(corpus_, target_);
    error_.clear();
    return true;
  } catch (const std::exception& e) {
    error_ = e.what();
    return false;
  }
}

bool TokenizerPanel::step(int n, std::string& error) {
  if (!ensure()) return error = error_, false;
  for (int i = 0; i < n && !trainer_->done(); ++i) trainer_->step();
  return true;
}

bool TokenizerPanel::run(std::string& error) {
  if (!ensure()) return error = error_, false;
  trainer_->run();
  return true;
}

void TokenizerPanel::draw(App& app) {
  draw_prompt_pieces(app);
  ImGui::Spacing();
  draw_bpe(app);
}

void TokenizerPanel::draw_prompt_pieces(App& app) {
  const Session& s = app.session;
  const Tokenizer& tok = s.tokenizer();
  if (!ImGui::CollapsingHeader("The prompt's pieces", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (s.reads_image()) {  // a vision transformer (not in the paper): no text, no pieces
    wrapped_note(("This model reads an image, not text, and has no tokenizer: " +
                  vision_model_description(s.model().config) + ". Its input is on the Vision tab.").c_str());
    return;
  }
  ImGui::PushTextWrapPos(0.0f);
  // A special token as "id “label”", or `none` where the tokenizer has none (id 0: plain ids have no bos_token).
  const auto special = [&tok](int id, const char* none) {
    return id > 0 ? std::to_string(id) + " “" + token_label(tok, id) + "”" : std::string(none);
  };
  ImGui::TextDisabled("%s. N_V = %d; bos_token = %s, eos_token = %s, mask_token = %s.", tok.describe().c_str(), tok.N_V(),
                      special(tok.bos_token(), "none").c_str(), special(tok.eos_token(), "none").c_str(),
                      special(tok.mask_token(), "none (nothing to fill in)").c_str());
  ImGui::PopTextWrapPos();
  const Tokens& x = s.tokens();
  token_chips(app, x, ImGui::GetContentRegionAvail().x);
  const bool files = tok.file_id(1) != 1;  // an ecosystem tokenizer numbers its files from 0
  const ImGuiTableFlags tf = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                             ImGuiTableFlags_ScrollY;
  const float rows_h = ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min<size_t>(x.size(), 10) + 1.5f);
  if (!ImGui::BeginTable("pieces", files ? 5 : 3, tf, ImVec2(0, rows_h))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("t");
  ImGui::TableSetupColumn("piece");
  ImGui::TableSetupColumn("paper id");
  if (files) {
    ImGui::TableSetupColumn("file id");
    ImGui::TableSetupColumn("in the files");
  }
  ImGui::TableHeadersRow();
  for (size_t k = 0; k < x.size(); ++k) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%zu", k + 1);
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(token_label(tok, x[k]).c_str());
    ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::Text("%d", x[k]);
    if (!files) continue;
    ImGui::TableNextColumn();
    ImGui::Text("%d", tok.file_id(x[k]));
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(tok.piece(x[k]).c_str());
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

void TokenizerPanel::draw_bpe(App& app) {
  if (!ImGui::CollapsingHeader("Train BPE, one merge at a time", ImGuiTreeNodeFlags_DefaultOpen)) return;
  const float F = ImGui::GetFontSize();
  const ImU32 accent = accent_color(app.settings.dark);
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("Byte-pair encoding (§4; Sennrich et al. 2016): start from the corpus's characters, then again and "
                      "again join the most frequent adjacent pair of pieces into a new piece, until the vocabulary has "
                      "the size asked for. Merges never cross words (a word keeps its leading space, as GPT-2's do).");
  ImGui::PopTextWrapPos();
  if (ImGui::InputTextMultiline("##corpus", &corpus_, ImVec2(-FLT_MIN, F * 4.0f))) trainer_.reset();
  ImGui::SetNextItemWidth(F * 8.0f);
  if (ImGui::InputInt("target vocabulary", &target_)) set_target(target_);
  item_tooltip("The number of pieces to reach: the corpus's characters count, the special tokens do not.");
  std::string error;
  const bool ok = ensure();
  ImGui::BeginDisabled(!ok || trainer_->done());
  same_line_if_fits(F + button_width("Step ▶"));
  if (ImGui::Button("Step ▶")) step(1, error);
  item_tooltip("One merge: the most frequent adjacent pair becomes a new piece");
  same_line_if_fits(button_width("Run ▶▶"));
  if (ImGui::Button("Run ▶▶")) run(error);
  item_tooltip("Merge until the vocabulary reaches the target (or no pair is left)");
  ImGui::EndDisabled();
  same_line_if_fits(button_width("Reset"));
  if (ImGui::Button("Reset")) trainer_.reset();
  item_tooltip("Back to the corpus's characters, no merge");
  if (!ensure()) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "%s", error_.c_str());
    return;
  }
  const BpeTrainer& t = *trainer_;
  const std::vector<std::string>& vocab = t.vocab();
  const std::vector<BpeMerge>& merges = t.merges();
  const int base = static_cast<int>(vocab.size() - merges.size());
  const char* state = !t.done() ? "" : static_cast<int>(vocab.size()) < t.target_vocab() ? " — no pair left" : " — done";
  ImGui::PushTextWrapPos(0.0f);
  ImGui::Text("Vocabulary: %s (%s + %s) of %d%s", counted(vocab.size(), "piece").c_str(),
              counted(base, "character").c_str(), counted(merges.size(), "merge").c_str(), t.target_vocab(), state);
  const std::string last = merges.empty() ? "" : merges.back().merged;
  if (!merges.empty()) {
    wrapped_colored(accent, merge_heading(merges.back()));
  } else {
    ImGui::TextDisabled("No merge yet: every piece is one character.");
  }
  if (!t.done()) {
    std::string next;
    for (const auto& [pair, count] : t.top_pairs(5))
      next += shown(pair.first) + "+" + shown(pair.second) + " ×" + std::to_string(count) + "   ";
    ImGui::TextDisabled("Next candidates: %s", next.c_str());
  }
  ImGui::PopTextWrapPos();
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < vocab.size(); ++i) index[vocab[i]] = static_cast<int>(i);
  const auto index_of = [&](const std::string& p) {
    const auto it = index.find(p);
    return it == index.end() ? 0 : it->second;
  };
  ImGui::Separator();
  ImGui::TextUnformatted("The corpus, tokenized with the merges so far:");
  std::vector<std::string> pieces;
  for (const auto& word : t.corpus_pieces()) pieces.insert(pieces.end(), word.begin(), word.end());
  ImGui::TextDisabled("%s for %s of text", counted(pieces.size(), "piece").c_str(), counted(corpus_.size(), "byte").c_str());
  piece_flow(app, pieces, index_of, last, accent);
  ImGui::Separator();
  ImGui::TextUnformatted("The vocabulary (the newest piece outlined):");
  piece_flow(app, vocab, index_of, last, accent);
  ImGui::Separator();
  if (merges.empty()) return;
  if (!ImGui::BeginTable("merges", 4,
                         ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit |
                             ImGuiTableFlags_ScrollY,
                         ImVec2(0, std::max(F * 6.0f, ImGui::GetContentRegionAvail().y))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("rank");
  ImGui::TableSetupColumn("pair");
  ImGui::TableSetupColumn("count");
  ImGui::TableSetupColumn("new piece");
  ImGui::TableHeadersRow();
  for (auto it = merges.rbegin(); it != merges.rend(); ++it) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%d", it->rank);
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::Text("%s + %s", shown(it->left).c_str(), shown(it->right).c_str());
    ImGui::PopFont();
    ImGui::TableNextColumn();
    ImGui::Text("%d", it->count);
    ImGui::TableNextColumn();
    ImGui::PushFont(app.fonts.mono);
    ImGui::TextUnformatted(shown(it->merged).c_str());
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

}  // namespace sf
