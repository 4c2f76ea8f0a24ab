// Algorithm 14: y ← DInference(x, θ̂)
//   /* Prompting a trained model and using it for prediction. */
//   Input: trained transformer parameters θ̂. Input: x ∈ V*, a prompt.
//   Output: y ∈ V*, the transformer's continuation of the prompt.
//   Hyperparameters: ℓ_gen ∈ ℕ, τ ∈ (0, ∞)
// τ = 0 means argmax (q ∝ p^{1/τ} is undefined at 0; §7: "τ = 0 gives the most likely
// continuation"). DTransformer cannot take more than ℓ_max tokens; with trim_context the model
// sees only the last ℓ_max tokens of x (Carpenter's COMPLETE_TEXT), otherwise generation stops.
#include <algorithm>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/algorithms/paged_kv.hpp"
#include "core/model/error.hpp"
#include "core/algorithms/sample_step.hpp"

namespace sf {

InferenceResult dinference(const Tokens& x_in, const Model& model, const InferenceOptions& opt, Tracer* tr) {
  const ModelConfig& c = model.config;
  if (x_in.empty()) throw Error("the prompt is empty: DInference needs at least one token (e.g. bos_token)");
  if (!(opt.tau >= 0.0) || opt.tau > 1e6) throw Error("τ must be a number between 0 and 1e6");
  if (opt.l_gen < 0) throw Error("ℓ_gen must be ≥ 0");
  check_top_k_top_p(opt.cut);
  if (opt.kv_block_size != 0) check_kv_block_size(opt.kv_block_size);
  const bool paged_on = opt.kv_cache && opt.kv_block_size > 0;
  if (!opt.trim_context && static_cast<int>(x_in.size()) > c.l_max)
    throw Error("the prompt has " + std::to_string(x_in.size()) + " tokens but ℓ_max is " + std::to_string(c.l_max) +
                ": shorten it, or turn on context trimming");
  const GptW<const float> W = model.weights();
  TraceParameters params(tr, model.table, model.theta.data());
  Rng rng(opt.seed);
  Tokens x = x_in;
  InferenceResult out;
  GptKvCache cache;  // KV cache (not in the paper), used when opt.kv_cache
  PagedKvCache paged(opt.kv_block_size);  // its blocks (PagedAttention, not in the paper), when paged_on
  TraceFrame frame(tr, 14,
                   tr ? std::vector<Value>{ttokens("x", x), tscalar("ℓ_gen", opt.l_gen), tscalar("τ", opt.tau)}
                      : std::vector<Value>{});
  // L1: ℓ ← length(x)
  const int l = static_cast<int>(x.size());
  if (tr) tr->line(lines::d_inference::l, {tscalar("ℓ", l)});
  // L2: for i = 1, 2, …, ℓ_gen do
  for (int i = 1; i <= opt.l_gen; ++i) {
    TraceIndex ii(tr, &Indices::i, i);
    const int start = std::max(0, static_cast<int>(x.size()) - c.l_max);  // 0-based first token fed
    if (start > 0 && !opt.trim_context) {
      out.stopped = "stopped after " + std::to_string(i - 1) + " tokens: the sequence reached ℓ_max = " +
                    std::to_string(c.l_max) + " (turn on context trimming to go on)";
      break;
    }
    if (tr) tr->line(lines::d_inference::step, {tscalar("i", i)});
    // L3: P ← DTransformer(x | θ̂)   (with trimming: the last ℓ_max tokens of x)
    // L4: p ← P[:, ℓ + i − 1]   (the last column: the prediction for the next token)
    const Tokens input(x.begin() + start, x.end());
    TraceSequences labels(tr, input, input);  // this pass's P is over the x its DTransformer call saw
    InferenceStep step;
    step.context_start = start + 1;
    const std::string trimmed = start > 0 ? "Context trimmed to the last ℓ_max tokens (from position " +
                                                std::to_string(start + 1) + "), as Carpenter's COMPLETE_TEXT does."
                                          : "";
    if (opt.kv_cache) {  // not in the paper: only the new column, over the cached K, V
      run_cached_step(paged_on, paged, cache, step,
                      [&] { return dtransformer_cached(input, c, W, cache, &step.cache_rebuilt, opt.cached_attn); });
      if (tr) {
        std::vector<Value> values{
            with_note(tv("P[:, ℓ + i − 1]", step.p, Axis::Vocab),
                      "KV cache (not in the paper; encyclopedia article 004): only the new column is computed, over "
                      "the cached K, V of " +
                          std::to_string(input.size() - 1) + " columns" +
                          (step.cache_rebuilt ? "; the cache was rebuilt from the whole context (first step, "
                                                "trimmed context or a new prefix). " + trimmed
                                              : ".")),
            with_note(tv("K (cached)", cache.K.back().front(), Axis::Feature, Axis::TokenZ),
                      "Last layer, head 1: the keys of every column so far (ℓ_z = " + std::to_string(input.size()) +
                          ").")};
        if (paged_on) values.push_back(block_table_value(paged.table));
        tr->line(lines::d_inference::forward, std::move(values));
      }
    } else {
      const MatF P = dtransformer<float>(input, c, W, tr, opt.attn);  // (N_V, length(input))
      if (tr) tr->line(lines::d_inference::forward, {with_note(tv("P", P, Axis::Vocab, Axis::TokenX), trimmed)});
      step.p = P.col(P.cols() - 1);  // (N_V)
    }
    if (tr) tr->line(lines::d_inference::p, {tv("p", step.p, Axis::Vocab)});
    // L5: sample a token y from q ∝ p^{1/τ}
    //     (not in the paper: then top-k / top-p, traced as this line's sub-steps)
    sample_token(step, opt.tau, opt.cut, rng, tr, lines::d_inference::sample);
    // L6: x ← [x, y]
    x.push_back(step.y);
    if (tr) tr->line(lines::d_inference::append, {ttokens("x", x)});
    out.steps.push_back(step);
    if (opt.stop_at_eos && step.y == c.eos_token()) {
      out.stopped = "stopped at eos_token after " + std::to_string(i) + " tokens";
      break;
    }
  }
  // L8: return y = x[ℓ+1 : ℓ+ℓ_gen]
  out.y.assign(x.begin() + l, x.end());
  if (tr) {
    tr->trace().tokens_x = x;
    tr->line(lines::d_inference::result, {ttokens("y", out.y)});
  }
  return out;
}

}  // namespace sf
