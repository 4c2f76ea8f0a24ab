// stepformer-cli lens: the logit lens and the direct logit attribution of one position (interpretation
// tools, not in the paper; core/interpret/logit_lens.hpp, docs/interpretation.md).
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/interpret/logit_lens.hpp"
#include "core/model/error.hpp"

namespace sf::cli {

namespace {

void print_text(const LogitLens& lens, const LogitAttribution* a, const std::string& dla_error, const Tokenizer& tok) {
  std::cout << "logit lens (not in the paper): per layer l, the top token of P^l[:, t] and the probability P^l gives "
               "the model's final prediction at t\n";
  for (int l = lens.layers(); l >= 0; --l) {
    std::cout << (l == 0 ? "l = 0 (X^0)" : "l = " + std::to_string(l)) << ":";
    for (int t = 0; t < static_cast<int>(lens.x.size()); ++t) {
      const int top = top_token(lens.P[l], t), y = top_token(lens.P_model, t);
      std::cout << "  " << show_token(tok, top) << " " << fixed(lens.P[l](y - 1, t), 3);
    }
    std::cout << "\n";
  }
  if (!a) {
    std::cout << "\ndirect logit attribution: " << dla_error << "\n";
    return;
  }
  std::cout << "\ndirect logit attribution of " << show_token(tok, a->y) << " at t = " << a->t << ": logit "
            << fixed(a->logit, 4) << " = Σ parts " << fixed(a->sum(), 4) << "\n";
  for (const DlaPart& p : a->parts) std::cout << "  " << p.label << ": " << fixed(p.value, 4) << "\n";
}

void print_json(const LogitLens& lens, const LogitAttribution* a, const std::string& dla_error, const Tokenizer& tok) {
  nlohmann::ordered_json j;
  j["x"] = lens.x;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (int l = 0; l <= lens.layers(); ++l) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (int t = 0; t < static_cast<int>(lens.x.size()); ++t) {
      const int top = top_token(lens.P[l], t), y = top_token(lens.P_model, t);
      row.push_back({{"top", top}, {"top_label", tok.label(top)}, {"p_top", lens.P[l](top - 1, t)}, {"p_final", lens.P[l](y - 1, t)}});
    }
    layers.push_back(std::move(row));
  }
  j["lens"] = layers;
  if (a) {
    nlohmann::ordered_json parts = nlohmann::ordered_json::array();
    for (const DlaPart& p : a->parts) parts.push_back({{"label", p.label}, {"l", p.l}, {"h", p.h}, {"value", p.value}});
    j["dla"] = {{"t", a->t}, {"y", a->y}, {"logit", a->logit}, {"sum", a->sum()}, {"parts", parts}};
  } else {
    j["dla"] = {{"error", dla_error}};
  }
  std::cout << j.dump() << "\n";
}

int run_lens(const Args& args) {
  const OpenedModel opened = load_text_model(args.get("model"), "lens");
  const Model& model = opened.checkpoint.model;
  const Architecture& arch = architecture(model.config);
  const Tokenizer& tok = *opened.tokenizer;
  const Tokens z = context_tokens(args, model.config, tok);
  const Tokens x = input_tokens(args, model.config, tok, prompt_with_eos(arch));
  const int pos = static_cast<int>(args.get_int("position", static_cast<long long>(x.size()), 1, static_cast<long long>(x.size())));
  const LensRun run = logit_lens(model, z, x);
  std::optional<LogitAttribution> a;
  std::string dla_error;
  try {
    a = direct_logit_attribution(model, run.trace, pos, top_token(run.lens.P_model, pos - 1));
  } catch (const Error& e) {
    dla_error = e.what();
  }
  (args.has("json") ? print_json : print_text)(run.lens, a ? &*a : nullptr, dla_error, tok);
  return 0;
}

}  // namespace

Command lens_command() {
  CommandSpec s;
  s.name = "lens";
  s.summary = "The logit lens and direct logit attribution (interpretation tools, not in the paper).";
  s.synopsis = "--model MODEL --prompt TEXT [--context TEXT] [--position T] [--json]";
  s.description =
      "Not in the paper: runs the forward algorithm once, traced, and reads its residual stream X^l after every layer l "
      "(0: the embedding) through what the algorithm does after its layer loop, with the model's own final norm and "
      "W_u: P^l = softmax(W_u head(X^l) + b_u). Prints, per layer, each position's top token and the probability the "
      "lens gives the model's final prediction there. Then the direct logit attribution of the predicted token at "
      "position T: each head (through its slice of W_o), each attention's b_o, each MLP, the embedding, each norm's β "
      "(norms frozen at the run) and b_u, adding up to the logit (none for BERT, whose head is not linear). "
      "docs/interpretation.md.";
  s.options = {
      {"model", "MODEL", "The model to load (as for forward).", true},
      {"prompt", "TEXT", "The input x as text (as for forward).", true},
      {"context", "TEXT", "Encoder-decoder models only, and required there: the context z as text."},
      {"position", "T", "The position (1-based) whose predicted token is attributed; default the last."},
      {"json", "", "Print one JSON object: the lens grid and the attribution."},
  };
  s.examples = "  stepformer-cli lens --model assets/default.safetensors --prompt \"dcab=\"\n"
               "  stepformer-cli lens --model assets/ed.safetensors --context \"12 march 2024\" --prompt \"2024\" --json\n";
  return {s, run_lens};
}

}  // namespace sf::cli
