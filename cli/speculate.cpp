// stepformer-cli sample --draft MODEL --speculate K: Algorithm 14-S (speculative decoding, not in
// the paper; core/algorithms/speculative.hpp).
#include "cli/speculate.hpp"

#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/common.hpp"
#include "core/algorithms/speculative.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf::cli {

namespace {

// --json: the sample command's object, with the counts added.
void print_json(const Tokens& all, const Tokenizer& tok, const SpeculativeResult& r) {
  nlohmann::ordered_json j;
  j["tokens"] = all;
  j["text"] = tok.decode_text(all);
  j["stopped"] = r.stopped;
  j["rounds"] = r.rounds.size();
  j["proposed"] = r.proposed();
  j["accepted"] = r.accepted();
  j["target_passes"] = r.target_passes;
  j["plain_passes"] = r.plain_passes();
  j["draft_passes"] = r.draft_passes;
  std::cout << j.dump() << "\n";
}

void print_counts(const SpeculativeResult& r) {
  const int proposed = r.proposed();
  std::cout << "rounds: " << r.rounds.size() << "; proposals accepted: " << r.accepted() << " of " << proposed;
  if (proposed > 0)
    std::cout << " (" << std::fixed << std::setprecision(1) << 100.0 * r.accepted() / proposed << "%)"
              << std::defaultfloat;
  std::cout << "\ntarget passes: " << r.target_passes << " (plain Algorithm 14: " << r.plain_passes() << ", one per token; "
            << "saved: " << r.plain_passes() - r.target_passes << "); draft passes: " << r.draft_passes << "\n";
}

}  // namespace

int speculate(const Args& args, const Model& target, const Tokenizer& tok) {
  const char* why = "Algorithm 14-S feeds the whole x to both models and stops at the target's ℓ_max";
  for (const char* o : {"kv-cache", "kv-block", "no-trim", "stop-at-eos"}) refuse_option(args, o, why);
  for (const char* o : {"top-k", "top-p"})
    refuse_option(args, o, "Algorithm 14-S's acceptance rule min(1, p/q) is written for the plain distributions after τ");
  if (!args.has("draft")) throw UsageError("--speculate K needs --draft MODEL, the model that proposes the tokens");
  const OpenedModel opened = load_text_model(args.get("draft"), "sample --draft");
  const Model& draft = opened.checkpoint.model;
  check_draft_model(target, draft);
  SpeculativeOptions opt;
  opt.K = static_cast<int>(args.get_int("speculate", 4, 1, 64));
  opt.tau = args.get_double("tau", 1.0, 0.0, 1e6);
  opt.l_gen = static_cast<int>(args.get_int("gen", 16, 0, 1000000));
  opt.seed = args.get_u64("seed", 1);
  const Tokens x = input_tokens(args, target.config, tok);

  const SpeculativeResult r = speculative_decoding(x, target, draft, opt);
  if (args.has("json")) {
    Tokens all = x;
    all.insert(all.end(), r.y.begin(), r.y.end());
    print_json(all, tok, r);
    return 0;
  }
  std::cout << "model:  " << args.get("model") << " (" << config_summary(target.config) << ")\n";
  std::cout << "draft:  " << args.get("draft") << " (" << config_summary(draft.config) << ")\n";
  std::cout << algorithm_title(algs::speculative_decoding) << "\n";
  std::cout << "prompt:       \"" << tok.decode(x) << "\"  (x = [" << id_list(x) << "], ℓ = " << x.size() << ")\n";
  std::cout << "continuation: \"" << tok.decode(r.y) << "\"  (K = " << opt.K << ", τ = " << opt.tau
            << (opt.tau == 0 ? ", argmax" : "") << ", ℓ_gen = " << opt.l_gen << ", seed " << opt.seed << ")\n";
  std::cout << "y: " << id_list(r.y, ",") << "\n";
  print_counts(r);
  if (!r.stopped.empty()) std::cout << "note: " << r.stopped << "\n";
  return 0;
}

}  // namespace sf::cli
