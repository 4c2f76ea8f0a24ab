#include "app/panels/gradient_flow_panel.hpp"

#include <chrono>
#include <cstdio>
#include <future>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/app.hpp"
#include "app/panels/gradient_flow_views.hpp"
#include "app/panels/panel.hpp"
#include "app/widgets/flow.hpp"
#include "core/arch/architecture.hpp"
#include "core/gradients/gradient_flow.hpp"
#include "imgui.h"

namespace sf {

namespace {

// What a gradient is computed for: the model (held, so that it outlives a worker) and the batch of
// one sequence (x, z and the loss's targets).
struct FlowInput {
  std::shared_ptr<const Model> model;
  Batch batch;
  bool same(const FlowInput& o) const {
    return model == o.model && batch.tokens == o.batch.tokens && batch.z_tokens == o.batch.z_tokens &&
           batch.targets == o.batch.targets;
  }
};

// BERT (Algorithm 12): the loss is at the positions holding mask_token, each compared with the
// token the [MASK] hides, which the Fill-in tab remembers when it masked it.
std::optional<Batch> masked_input(const Session& s, std::string& why) {
  const Tokenizer& tok = s.tokenizer();
  const int mask = tok.mask_token();
  Tokens x = s.tokens();
  std::vector<int> masks;
  for (size_t k = 0; k < x.size(); ++k) {
    if (x[k] != mask) continue;
    const int t = static_cast<int>(k) + 1;
    const std::string* piece = s.fill_in().masked_piece(t);
    const std::vector<TextPiece> p = piece ? tok.tokenize(*piece) : std::vector<TextPiece>{};
    if (p.size() != 1) {
      why = "The [MASK] at t = " + std::to_string(t) + " was typed, so the token it hides (the loss's target x[" +
            std::to_string(t) + "]) is unknown. Type the token there instead, then mask it by clicking it in the "
            "Fill-in tab, which remembers what it hides.";
      return std::nullopt;
    }
    x[k] = p.front().id;
    masks.push_back(t);
  }
  if (masks.empty()) {
    why = "No [MASK] in x: BERT's loss (Algorithm 12) is −Σ_{t∈masks} log P[x[t], t], at masked positions only. "
          "Open the Fill-in tab and click a token to mask it; its gradient is then computed here.";
    return std::nullopt;
  }
  return masked_batch(x, masks, mask);
}

// The session's model and input as a batch of one, or why there is none.
std::optional<FlowInput> flow_input(const Session& s, std::string& why) {
  FlowInput in{s.model_ptr(), {}};
  if (s.reads_image()) {  // a vision transformer (not in the paper): the image and its true class
    const int y = s.vision().true_class();
    if (y < 0) {
      why = "This image was drawn, so it has no true class y for the loss −log P[y, 1]. Pick a test digit on the "
            "Vision tab (its arrows or Next misclassified); its gradient is then computed here.";
      return std::nullopt;
    }
    in.batch = image_batch(s.vision().pixels(), y + 1);  // class y has id y + 1
    return in;
  }
  if (s.arch().forward_algorithm() == 9) {
    std::optional<Batch> b = masked_input(s, why);
    if (!b) return std::nullopt;
    in.batch = std::move(*b);
    return in;
  }
  if (s.tokens().size() < 2) {
    why = "x has one token: no position t has a next token x[t+1] to predict, so the loss and its gradient are 0. "
          "Type a longer prompt.";
    return std::nullopt;
  }
  const bool ed = s.arch().forward_algorithm() == 8;
  in.batch = next_token_batch(ed ? s.tokens_z() : Tokens{}, s.tokens());
  return in;
}

// The loss in the paper's notation, per forward algorithm (10, 9, 8), or the vision transformer's.
const char* loss_formula(const ModelConfig& c) {
  if (c.arch == "vit")
    return "loss = −log P[y, 1]: the class token's column at the image's true class y (the vision transformer; "
           "Algorithm 9 on patches)";
  switch (architecture(c).forward_algorithm()) {
    case 9: return "loss = −Σ log P[x[t], t] over the masked t (Algorithm 12; x̃: x with mask_token there)";
    case 8: return "loss = −Σ log P[x[t+1], t] over t = 1 … ℓ_x − 1 (Algorithm 11, with the context z)";
    default: return "loss = −Σ log P[x[t+1], t] over t = 1 … ℓ − 1 (Algorithm 13)";
  }
}

class GradientFlowFeature : public Feature {
 public:
  const char* tab_panel() const override { return "gradflow"; }
  void draw_tab(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

 private:
  // Brings the shown result up to date with `in`: at once for a small model, else only when asked
  // (`start`), on a worker thread. Collects a finished worker.
  void update(const App& app, const FlowInput& in, bool start);
  void draw_result(const App& app);
  bool current() const { return shown_ && input_ && shown_->same(*input_); }

  std::optional<FlowInput> input_;   // this frame's input (none: why_)
  std::string why_;
  std::optional<FlowInput> shown_;   // what flow_ / error_ were computed for
  GradientFlow flow_;
  std::string error_;                // core's refusal of shown_
  std::optional<FlowInput> running_;
  std::future<GradientFlow> job_;
  bool async_ = false;               // the model is computed on demand, on a worker thread
  bool start_requested_ = false;     // gradient-flow:compute, or the button
  size_t drawn_frame_ = SIZE_MAX;
};

void GradientFlowFeature::update(const App& app, const FlowInput& in, bool start) {
  if (job_.valid() && job_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    shown_ = std::move(running_);
    running_.reset();
    try {
      flow_ = job_.get();
      error_.clear();
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  async_ = in.model->table.total() > app.session.async_min_params;
  if (current() || (running_ && running_->same(in))) return;
  if (async_) {
    if (!start || job_.valid()) return;  // one worker at a time; a newer input waits for the button
    running_ = in;
    job_ = std::async(std::launch::async, [m = in.model, b = in.batch] { return gradient_flow(*m, b); });
    return;
  }
  shown_ = in;
  try {
    flow_ = gradient_flow(*in.model, in.batch);
    error_.clear();
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void GradientFlowFeature::draw_tab(App& app) {
  drawn_frame_ = app.ui.frame_index;
  const Session& s = app.session;
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextColored(ImColor(variant_color(app.settings.dark)), "%s",
                     s.reads_image()
                         ? "Not in the paper: the gradient of the vision transformer's training loss for this one image."
                         : "Not in the paper: the gradient of the training loss (Algorithms 11–13) for this one sequence.");
  ImGui::TextDisabled("%s, summed, in double, with θ of the model shown. X_l is the residual stream entering layer l.",
                      loss_formula(s.model().config));
  input_ = flow_input(s, why_);
  if (!input_) {
    ImGui::TextUnformatted(why_.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  update(app, *input_, std::exchange(start_requested_, false));
  if (async_) {
    if (running_) ImGui::TextDisabled("Computing ∇loss for %zu parameters on a worker thread…", s.model().table.total());
    else if (!current() && ImGui::Button("Compute the gradient")) start_requested_ = true;
    if (!running_ && !current())
      ImGui::TextDisabled("%s on demand: this model has %zu parameters (over %zu, the size traced off the UI thread).",
                          shown_ ? "The numbers below are for an earlier input or model; computed" : "Computed",
                          s.model().table.total(), s.async_min_params);
  }
  ImGui::PopTextWrapPos();
  if (!shown_) return;
  if (!error_.empty()) {
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "%s", error_.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  draw_result(app);
}

void GradientFlowFeature::draw_result(const App& app) {
  const Batch& b = shown_->batch;
  const ModelConfig& c = shown_->model->config;
  ImGui::Text("loss = %.6g", flow_.loss);
  char exact[40];
  std::snprintf(exact, sizeof exact, "%.17g", flow_.loss);
  item_tooltip("The summed loss of this sequence: " + std::string(loss_formula(c)) +
               " = " + exact);
  // Short headers, so that they fit a projector's Inspector whole; what they show is the wrapped line below each.
  if (ImGui::CollapsingHeader("Residual stream", ImGuiTreeNodeFlags_DefaultOpen)) {
    wrapped_note("‖∇X_l[:, t]‖ per layer boundary l and token t.");
    draw_stream(app, b.tokens, flow_.x, "X");
    if (!flow_.z.empty()) draw_stream(app, b.z_tokens, flow_.z, "Z");
  }
  if (ImGui::CollapsingHeader("Per head", ImGuiTreeNodeFlags_DefaultOpen)) {
    wrapped_note("‖∇W_q^h‖, ‖∇W_k^h‖, ‖∇W_v^h‖ of each layer and head.");
    draw_heads(app, flow_.heads, c.H, c.kv_heads());
  }
  if (ImGui::CollapsingHeader("Saliency per input token", ImGuiTreeNodeFlags_DefaultOpen)) {
    wrapped_note("‖∇e_t‖ = ‖∂loss/∂X[:, t]‖ as X enters layer 1 (the embedding's output): how much the loss changes "
                 "per unit change of token t's embedding column.");
    draw_saliency(app, b.tokens, flow_.saliency(), "x");
    if (!flow_.z.empty()) draw_saliency(app, b.z_tokens, flow_.saliency_z(), "z");
  }
}

ActionResult GradientFlowFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  if (verb != "gradient-flow") return ActionResult::NotMine;
  if (arg == "wait") {  // for scripts and tests: until the worker's gradient is done (shown next frame)
    if (job_.valid()) job_.wait();
    return ActionResult::Done;
  }
  if (arg != "compute")
    return error = "gradient-flow takes compute (start it on demand) or wait (until it is done)", ActionResult::Failed;
  app.ui.show.gradflow = true;
  start_requested_ = true;
  return ActionResult::Done;
}

// The numbers shown, exactly (doubles), and what the tab said instead of them.
void GradientFlowFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  nlohmann::ordered_json g;
  g["drawn"] = drawn_frame_ == app.ui.frame_index;
  g["message"] = input_ ? "" : why_;
  g["async"] = async_;
  g["computing"] = running_.has_value();
  g["current"] = current();
  g["error"] = error_;
  if (shown_ && error_.empty()) {
    g["tokens"] = shown_->batch.tokens;
    g["targets"] = shown_->batch.targets;
    g["loss"] = flow_.loss;
    g["saliency"] = flow_.saliency();
    auto stream = [](const StreamFlow& f) {
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (Eigen::Index l = 0; l < f.token_norms.rows(); ++l) {
        std::vector<double> r;
        for (Eigen::Index t = 0; t < f.token_norms.cols(); ++t) r.push_back(f.token_norms(l, t));
        rows.push_back(r);
      }
      return nlohmann::ordered_json{{"token_norms", rows}, {"layer_norms", f.layer_norms}};
    };
    g["x"] = stream(flow_.x);
    if (!flow_.z.empty()) g["z"] = stream(flow_.z);
    nlohmann::ordered_json heads = nlohmann::ordered_json::array();
    for (const HeadGradNorms& h : flow_.heads)
      heads.push_back({{"label", h.label}, {"layer", h.layer}, {"q", h.q}, {"k", h.k}, {"v", h.v}});
    g["heads"] = heads;
  }
  j["gradient_flow"] = g;
}

}  // namespace

std::unique_ptr<Feature> make_gradient_flow_feature() { return std::make_unique<GradientFlowFeature>(); }

}  // namespace sf
