// Algorithm 15: x̂ ← EDInference(z, θ̂)
//   /* Using a trained seq2seq model for prediction. */
//   Input: a seq2seq transformer and trained parameters θ̂. Input: z ∈ V*, input sequence.
//   Output: x̂ ∈ V*, output sequence.
//   Hyperparameters: τ ∈ (0, ∞)
// τ = 0 means argmax (q ∝ p^{1/τ} is undefined at 0). The paper's loop has no bound: x̂ is capped
// at ℓ_max tokens (bos_token included), the most EDTransformer can take, and the result says
// which way the loop ended. Not in the paper, optional: run the encoder once and reuse Z.
#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/algorithms/paged_kv.hpp"
#include "core/algorithms/sample_step.hpp"
#include "core/arch/ed.hpp"
#include "core/model/error.hpp"

namespace sf {

EdInferenceResult edinference(const Tokens& z, const Model& model, const EdInferenceOptions& opt, Tracer* tr) {
  const ModelConfig& c = model.config;
  if (!(opt.tau >= 0.0) || opt.tau > 1e6) throw Error("τ must be a number between 0 and 1e6");
  check_top_k_top_p(opt.cut);
  if (opt.kv_block_size != 0) check_kv_block_size(opt.kv_block_size);
  const bool paged_on = opt.kv_cache && opt.kv_block_size > 0;
  check_ed_tokens(z, {c.bos_token()}, c);
  const EdW<const float> W = ed_weights(model);
  TraceParameters params(tr, model.table, model.theta.data());
  Rng rng(opt.seed);
  EdInferenceResult out;
  Tokens& x_hat = out.x_hat;
  MatF Z;  // (d_e, ℓ_z) with reuse_encoding: the encoder's output of the first pass
  EdKvCache cache;  // KV cache (not in the paper), used when opt.kv_cache
  PagedKvCache paged(opt.kv_block_size);  // its decoder self-attention's blocks (PagedAttention), when paged_on
  TraceFrame frame(tr, 15,
                   tr ? std::vector<Value>{ttokens("z", z), tscalar("τ", opt.tau)} : std::vector<Value>{});
  // L1: x̂ ← [bos_token]
  x_hat = {c.bos_token()};
  if (tr) tr->line(lines::ed_inference::bos, {ttokens("x̂", x_hat)});
  // L2: y ← 0
  int y = 0;
  if (tr) tr->line(lines::ed_inference::y, {tscalar("y", y)});
  for (int i = 1;; ++i) {
    // L3: while y ≠ eos_token do   (and, not in the paper, while x̂ has room for one more token)
    const bool capped = static_cast<int>(x_hat.size()) >= c.l_max;
    if (y == c.eos_token() || capped) {
      out.stopped = y == c.eos_token() ? "eos_token"
                                       : "the ℓ_max cap: x̂ reached ℓ_max = " + std::to_string(c.l_max) +
                                             " tokens before eos_token was drawn (the paper's loop has no bound)";
      if (tr)
        tr->line(lines::ed_inference::loop, {with_note(tscalar("y", y), y == c.eos_token() ? "y = eos_token: the loop ends."
                                                                        : "Stopped by " + out.stopped + ".")});
      break;
    }
    TraceIndex ii(tr, &Indices::i, i);
    if (tr) tr->line(lines::ed_inference::loop, {tscalar("y", y)});
    TraceSequences labels(tr, x_hat, z);  // this pass's P is over the x̂ its EDTransformer call saw
    // L4: P ← EDTransformer(z, x̂ | θ̂)
    InferenceStep step;
    if (opt.kv_cache) {  // not in the paper: z encoded once, only x̂'s new column through the decoder
      run_cached_step(paged_on, paged, cache, step, [&] {
        return edtransformer_cached(z, x_hat, c, W, cache, &step.cache_rebuilt, opt.attn, opt.cached_attn);
      });
      if (tr) {
        std::vector<Value> values{
            with_note(tv("P[:, length(x̂)]", step.p, Axis::Vocab),
                      "KV cache (not in the paper; encyclopedia article 004): z was encoded once and only "
                      "x̂'s new column ran through the decoder, over the cached K, V of " +
                          std::to_string(x_hat.size() - 1) + " columns and Z's cached K, V" +
                          (step.cache_rebuilt ? " (the cache was built on this step)." : ".")),
            with_note(tv("K (cached)", cache.K.back().front(), Axis::Feature, Axis::TokenZ),
                      "Last decoder layer, head 1: the self-attention keys of every column so far "
                      "(ℓ = " + std::to_string(x_hat.size()) + ").")};
        if (paged_on)
          values.push_back(block_table_value(paged.table, "the decoder self-attention cache's",
                                             " The cross-attention's K, V of Z (ℓ_z = " + std::to_string(z.size()) +
                                                 " columns) are not paged: computed once, they never grow."));
        tr->line(lines::ed_inference::forward, std::move(values));
      }
    } else {
      const bool reuse = opt.reuse_encoding && i > 1;
      const MatF P = edtransformer_parts<float>(z, x_hat, c, W, tr, reuse ? &Z : nullptr,
                                                opt.reuse_encoding && i == 1 ? &Z : nullptr, opt.attn);  // (N_V, length(x̂))
      if (tr)
        tr->line(lines::ed_inference::forward, {with_note(tv("P", P, Axis::Vocab, Axis::TokenX),
                                   opt.reuse_encoding ? "Not in the paper: the encoder ran once (first pass) and Z is "
                                                        "reused; the paper re-encodes z at every step."
                                                      : "")});
      // L5: p ← P[:, length(x̂)]
      step.p = P.col(static_cast<Eigen::Index>(x_hat.size()) - 1);  // (N_V)
    }
    if (tr) tr->line(lines::ed_inference::p, {tv("p", step.p, Axis::Vocab)});
    // L6: sample a token y from q ∝ p^{1/τ}
    //     (not in the paper: then top-k / top-p, traced as this line's sub-steps)
    sample_token(step, opt.tau, opt.cut, rng, tr, lines::ed_inference::sample);
    y = step.y;
    // L7: x̂ ← [x̂, y]
    x_hat.push_back(y);
    if (tr) tr->line(lines::ed_inference::append, {ttokens("x̂", x_hat)});
    out.steps.push_back(std::move(step));
  }  // L8: end
  // L9: return x̂
  if (tr) {
    tr->trace().tokens_z = z;
    tr->trace().tokens_x = x_hat;
    tr->line(lines::ed_inference::result, {ttokens("x̂", x_hat)});
  }
  return out;
}

}  // namespace sf
