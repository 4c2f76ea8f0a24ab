#include "core/training/accuracy.hpp"

#include <algorithm>

#include "core/algorithms/fill_in.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/arch/architecture.hpp"
#include "core/arch/ed.hpp"
#include "core/parallel/parallel.hpp"
#include "core/training/datasets.hpp"

namespace sf {

int equals_token(const ModelConfig& c) {
  if (!missing_characters({"="}, c).empty()) return 0;
  const std::vector<Tokens> t = tokenize({"="}, c);
  return t.front().size() == 3 ? t.front()[1] : 0;
}

namespace {

// Algorithm 14 at τ = 0 with the KV cache, cut short at the first wrong token (the answer can no
// longer be exact): x = [bos_token, question…, "=", answer…, eos_token], the prompt is x up to "="
// (0-based index q), and the greedy continuation must be the rest of x.
bool gpt_exact(const Tokens& x, size_t q, const ModelConfig& c, const GptW<const float>& W) {
  GptKvCache cache;
  Tokens prompt(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(q) + 1);
  for (size_t t = q + 1; t < x.size(); ++t) {
    // L3–L4: p ← P[:, ℓ + i − 1], the last column of DTransformer(x | θ̂), from the cache
    const VecF p = dtransformer_cached(prompt, c, W, cache);  // (N_V)
    // L5 at τ = 0: y ← argmax p
    const int y = sample_argmax(p);
    if (y != x[t]) return false;
    // L6: x ← [x, y]
    prompt.push_back(y);
  }
  return true;
}

// Each token after "=" (eos_token excluded) masked alone and filled by argmax, one pass each.
bool bert_exact(const Tokens& x, size_t q, const Model& m) {
  for (size_t t = q + 1; t + 1 < x.size(); ++t) {
    Tokens masked = x;
    masked[t] = m.config.mask_token();
    if (fill_masks(masked, m, 0.0, 1, 0).filled[t] != x[t]) return false;
  }
  return true;
}

// Algorithm 15 at τ = 0 with the KV cache, cut short at the first wrong token.
bool ed_exact(const Example& ex, const ModelConfig& c, const EdW<const float>& W) {
  EdKvCache cache;
  // L1: x̂ ← [bos_token]
  Tokens x_hat = {c.bos_token()};
  for (size_t t = 1; t < ex.x.size(); ++t) {
    // L4–L5: p ← P[:, length(x̂)], the last column of EDTransformer(z, x̂ | θ̂), from the cache
    const VecF p = edtransformer_cached(ex.z, x_hat, c, W, cache);  // (N_V)
    // L6 at τ = 0: y ← argmax p
    const int y = sample_argmax(p);
    if (y != ex.x[t]) return false;
    // L7: x̂ ← [x̂, y]
    x_hat.push_back(y);
  }
  return true;  // the last token matched was eos_token, where the loop (L3) ends
}

}  // namespace

Accuracy greedy_accuracy(const Model& m, const std::vector<std::string>& val, size_t limit, int threads) {
  const ModelConfig& c = m.config;
  const Architecture& arch = architecture(c);
  const size_t n = limit > 0 ? std::min(limit, val.size()) : val.size();
  const std::vector<Example> data = arch.examples({val.begin(), val.begin() + static_cast<std::ptrdiff_t>(n)}, c);
  const bool context = arch.has_context(), fill_in = arch.output() == OutputKind::FillIn;
  const int eq = context ? 0 : equals_token(c);
  if (!context && eq == 0) return {};
  const EdW<const float> Wed = context ? ed_weights(m) : EdW<const float>{};
  const GptW<const float> W = context || fill_in ? GptW<const float>{} : m.weights();
  // Example i → 1 (exact), 0 (wrong) or −1 (no "=": not counted); the examples in 16 chunks of
  // fixed size, whatever the thread count, each written by one task.
  std::vector<int> score(data.size(), -1);
  constexpr int kChunks = 16;
  const size_t per = (data.size() + kChunks - 1) / kChunks;
  parallel_for_on(threads, kChunks, [&](int k) {
    for (size_t i = k * per; i < std::min(data.size(), (k + 1) * per); ++i) {
      const Example& ex = data[i];
      if (context) {
        score[i] = ed_exact(ex, c, Wed);
        continue;
      }
      const auto it = std::find(ex.x.begin(), ex.x.end(), eq);
      if (it == ex.x.end()) continue;
      const size_t q = static_cast<size_t>(it - ex.x.begin());
      score[i] = fill_in ? bert_exact(ex.x, q, m) : gpt_exact(ex.x, q, c, W);
    }
  });
  Accuracy a;
  for (int s : score) {
    a.correct += s > 0;
    a.total += s >= 0;
  }
  return a;
}

Accuracy screened_accuracy(const Model& m, const std::vector<std::string>& val, double until, int threads) {
  if (until > 0 && val.size() > kScreenExamples) {
    Accuracy screen = greedy_accuracy(m, val, kScreenExamples, threads);
    screen.screen = true;
    if (screen.total > 0 && screen.fraction() < until - kScreenMargin) return screen;
  }
  return greedy_accuracy(m, val, 0, threads);
}

std::string accuracy_verb(const ModelConfig& c, const std::string& task) {
  const Architecture& arch = architecture(c);
  if (arch.has_context()) return "translates";
  if (arch.output() == OutputKind::FillIn) return "fills in";
  for (const char* t : {"sort", "reverse", "add"})
    if (task.rfind(std::string(t) + ",", 0) == 0) return std::string(t) + "s";
  return "answers";
}

}  // namespace sf
