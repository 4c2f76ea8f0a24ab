// Plain words for every line of Stepformer's backward listings (not in the paper), for the app's
// tooltips: explain_adjoint in core/pseudocode/backward_listings.hpp. Written for a learner who knows
// the forward line and asks what its adjoint does and why.
#include <map>
#include <utility>

#include "core/pseudocode/backward_listings.hpp"

namespace sf {

namespace {

// Texts several transformers' lines share.
constexpr const char* kUnembed =
    "Run the unembedding's adjoint (Algorithm 7) on every column: the gradient of the probabilities becomes the gradient "
    "of the last X, and W_u collects every column's share.";
constexpr const char* kFinalNorm =
    "Run the final layer norm's adjoint (Algorithm 6) on every column: ∇X of its output becomes ∇X of its input, and "
    "γ, β collect their gradients.";
constexpr const char* kLoop =
    "Go through the layers backwards, from the last to the first: the gradient flows the opposite way to the data, so "
    "the adjoint of the forward's loop runs it in reverse.";
constexpr const char* kStackNorm =
    "The stack's final norm (a pre-LN variant) ran last in the forward, so its adjoint (Algorithm 6, column by column) "
    "runs first, before the layers.";
constexpr const char* kPreNorm =
    "The norm read X and wrote X̃: its adjoint turns ∇X̃ into a gradient for X and ADDS it to ∇X, which already holds "
    "what the residual connection passed on. Two paths meet here.";
constexpr const char* kPostNorm =
    "The norm overwrote X with its normalised columns: its adjoint (Algorithm 6, column by column) turns ∇X of the "
    "output into ∇X of the input.";
constexpr const char* kPreAttention =
    "X ← X + MHAttention(X̃): the residual passes ∇X on untouched, and MHAttention's adjoint (Algorithm 5) turns ∇X "
    "into ∇X̃, the gradient of what the attention read, while its weights collect their gradients.";
constexpr const char* kPostAttention =
    "X ← X + MHAttention(X): the gradient reaches X twice, through the residual (∇X itself) and through the attention "
    "(MHAttention's adjoint, Algorithm 5); the two add up.";
constexpr const char* kMlp =
    "Backpropagate the two-layer MLP: first W_mlp2 and b_mlp2 get their gradients, then the activation's derivative "
    "gates the gradient column by column, then W_mlp1 and b_mlp1 get theirs and the gradient reaches the MLP's input. "
    "The residual passes ∇X on as well.";
constexpr const char* kCross =
    "The cross-attention read X (queries) and Z (keys and values): its adjoint sends gradient into both. The decoder's "
    "∇X goes on; ∇Z is saved up for the encoder, every decoder layer adding its share.";
constexpr const char* kBidirectional =
    " With no mask, every token's gradient spreads to every other token: this is how the masked positions' loss "
    "reaches the whole sequence.";
constexpr const char* kToEmbeddings = "X was the embeddings side by side: column t of ∇X is the gradient of e_t.";
constexpr const char* kEmbeddings =
    "Send each ∇e_t back to where e_t was read: column x[t] of W_e and column t of W_p (Algorithms 1 and 2's adjoints). "
    "A token that appears twice gets both gradients added in its column.";

// The residual sub-layers of the transformers: lines first and first + 1 are a sub-layer and its norm
// (post-LN, the paper's Algorithms 8 and 9) or the norm and its sub-layer (pre-LN, Algorithm 10).
enum class Kind { Attention, Cross, Mlp };
struct SubLayerLines {
  int alg, first;
  Kind kind;
};
constexpr SubLayerLines kSubLayers[] = {{10, 5, Kind::Attention}, {10, 7, Kind::Mlp},     {9, 5, Kind::Attention},
                                        {9, 7, Kind::Mlp},        {8, 5, Kind::Attention}, {8, 7, Kind::Mlp},
                                        {8, 14, Kind::Attention}, {8, 16, Kind::Cross},    {8, 18, Kind::Mlp}};

// The words for a line of a residual sub-layer, or nullptr when `line` is not one. Which of the two
// lines is the norm depends on the model's norm position, a variant.
const char* explain_sublayer(int alg, int line, bool pre) {
  for (const SubLayerLines& s : kSubLayers) {
    if (s.alg != alg || (line != s.first && line != s.first + 1)) continue;
    const bool norm = (line == s.first) == pre;
    if (norm) return pre ? kPreNorm : kPostNorm;
    switch (s.kind) {
      case Kind::Mlp: return kMlp;
      case Kind::Cross: return kCross;
      case Kind::Attention: {
        static const std::string post_bidirectional = std::string(kPostAttention) + kBidirectional;
        if (pre) return kPreAttention;
        return alg == 9 || (alg == 8 && line <= 9) ? post_bidirectional.c_str() : kPostAttention;
      }
    }
  }
  return nullptr;
}

}  // namespace

bool backward_listing_pre_ln(int alg, const ModelConfig& c) {
  // The listing of 8, 9 or 10 is written for the model's variants only when the model is of that
  // architecture (backward_pseudocode_for); else for the paper's, where only GPT is pre-LN.
  const char* arch = alg == 10 ? "gpt" : alg == 9 ? "bert" : "ed";
  return c.arch == arch ? c.norm_pos() == NormPosition::Pre : alg == 10;
}

const char* explain_adjoint(int alg, int line, const ModelConfig& c) {
  if (const char* s = explain_sublayer(alg, line, backward_listing_pre_ln(alg, c))) return s;
  return explain_adjoint(alg, line);
}

const char* explain_adjoint(int alg, int line) {
  static const std::map<std::pair<int, int>, const char*> text{
      // Algorithm 1
      {{1, 1}, "The token's vector was column v of W_e, so its gradient is added to that column; the rest of W_e gets "
               "nothing from this token. A token used twice collects both gradients."},
      // Algorithm 2
      {{2, 1}, "The position's vector was column ℓ of W_p, so its gradient is added to that column."},
      // Algorithm 4
      {{4, 6}, "Run line 6 backwards in three steps: the values V get the gradient weighted by how much each query "
               "attended to them (∇V); the attention weights get ∇A from the values; and the softmax's Jacobian turns ∇A "
               "into ∇S: each weight's gradient minus the weighted average of its column's, times the weight, over √d_attn."},
      {{4, 5}, "A masked score was set to −∞, a constant, so no gradient flows through it: ∇S is exactly 0 there. It is "
               "already 0, because the weight A of a masked pair is 0."},
      {{4, 4}, "S = KᵀQ: each score is a dot product of a key and a query, so the query's gradient is the keys weighted "
               "by the scores' gradients (∇Q = K∇S), and the other way round for the keys (∇K = Q∇Sᵀ)."},
      {{4, 3}, "V = W_v Z + b_v 1ᵀ is linear: W_v's gradient is ∇V times the inputs, b_v's is ∇V summed over the tokens, "
               "and the context Z gets W_vᵀ∇V."},
      {{4, 2}, "K = W_k Z + b_k 1ᵀ, the same way: W_k and b_k get their gradients and the context Z gets W_kᵀ∇K added "
               "to what it got through V."},
      {{4, 1}, "Q = W_q X + b_q 1ᵀ, the same way: W_q and b_q get their gradients, and X gets W_qᵀ∇Q. In "
               "self-attention X and Z are the same tokens, and the caller adds the two gradients."},
      // Algorithm 4-R (random-feature attention, a variant: rfa_listing.cpp)
      {{106, 12}, "Ṽ[:, t_x] was a divided by b̂: a's gradient is ∇Ṽ divided by b̂, and b̂'s is minus ∇Ṽ times the "
                  "quotient, over b̂. Where the guard divided by ε·g instead, that gradient goes to g, not b."},
      {{106, 11}, "a and b were products of the query's features with the running sums as they stood at t_x, so the "
                  "features get S_φ∇a + s_φ∇b. The sums are rebuilt in the same order as the forward's."},
      {{106, 10}, "The forward added key n to the running sums once, and every later query read it: so key n's gradient "
                  "collects the queries that saw it. Going through the keys from the last to the first, these are suffix "
                  "sums, again linear in ℓ: no ℓ_z×ℓ_x matrix. From them V, the key features and the weights κ get theirs."},
      {{106, 7}, "κ = exp(‖k‖²/2σ² − c): its derivative is κ itself times k/σ². This is the first of the two paths to "
                 "K; c is a constant shift that cancels in Ṽ, so it gets none."},
      {{106, 6}, "The key features were cos and sin of ⟨w_i, k⟩: the chain rule through them turns ∇Φ_K into a gradient "
                 "of K, added to line 7's. The w_i are fixed: they get nothing."},
      {{106, 5}, "The same for the queries: ∇Φ_Q through cos and sin of ⟨w_i, q⟩ gives ∇Q."},
      {{106, 3}, "V = W_v Z + b_v 1ᵀ is linear, as in Algorithm 4: W_v's gradient is ∇V times the inputs, b_v's is ∇V "
                 "summed over the tokens, and the context Z gets W_vᵀ∇V."},
      {{106, 2}, "K = W_k Z + b_k 1ᵀ, as in Algorithm 4: W_k and b_k get their gradients and Z gets W_kᵀ∇K added to what "
                 "it got through V."},
      {{106, 1}, "Q = W_q X + b_q 1ᵀ, as in Algorithm 4: W_q and b_q get their gradients, and X gets W_qᵀ∇Q. In "
                 "self-attention X and Z are the same tokens, and the caller adds the two gradients."},
      // Algorithm 5
      {{5, 4}, "Ṽ = W_o Y + b_o 1ᵀ is linear: W_o and b_o get their gradients, and Y, the heads stacked, gets W_oᵀ∇Ṽ."},
      {{5, 3}, "Y stacked the heads' outputs: cut ∇Y back into one block of rows per head."},
      {{5, 1}, "Visit the heads, last first (the order does not change the sums)."},
      {{5, 2}, "Run head h's Attention adjoint (Algorithm 4) on its ∇Y^h, and add what it sends to X and Z to the "
               "other heads'."},
      // Algorithm 6
      {{6, 3}, "Undo the scale and the shift: γ and β get their gradients, and the gradient of the normalised entries "
               "is split into a direct path to e and the paths through the mean m and the variance v."},
      {{6, 2}, "v was the mean squared distance from m: its gradient reaches every entry of e in proportion to that "
               "entry's distance from the mean."},
      {{6, 1}, "m was the mean of e: its gradient is shared equally by all d_e entries."},
      // Algorithm 7
      {{7, 1}, "Backpropagate the softmax over the vocabulary, then the product W_u e: with the loss's gradient the "
               "logits' gradient is simply p minus 1 at the right token. W_u and e then get theirs, as for any linear map."},
      // Algorithm 8
      {{8, 21}, kUnembed},
      {{8, 20}, kStackNorm},
      {{8, 13}, "Go through the decoder's layers backwards, from the last to the first: the gradient flows the "
                "opposite way to the data."},
      {{8, 12}, kToEmbeddings},
      {{8, 11}, kEmbeddings},
      {{8, 9}, "The encoder's output Z reached the decoder only through the cross-attentions: its gradient is the sum "
               "of what every decoder layer's line 16 sent back (pre-LN: then through the encoder's final norm)."},
      {{8, 4}, "Now the encoder, from the last layer to the first, with ∇Z collected from every cross-attention."},
      {{8, 3}, "Z was the context's embeddings side by side: column t of ∇Z is the gradient of e_t."},
      {{8, 2}, "Send each context token's gradient back to its columns of W_e and W_p: the same matrices the decoder's "
               "line 11 adds to."},
      // Algorithm 9
      {{9, 12}, "Run the unembedding's adjoint (Algorithm 7) on every column. Only the masked positions carry loss, so "
                "only their columns start with a non-zero gradient."},
      {{9, 11}, kFinalNorm},
      {{9, 10}, "Backpropagate the final projection: GELU's derivative gates the gradient, then W_f and b_f get theirs "
                "and X gets W_fᵀ times it."},
      {{9, 4}, kLoop},
      {{9, 3}, kToEmbeddings},
      {{9, 2}, kEmbeddings},
      // Algorithm 10
      {{10, 11}, kUnembed},
      {{10, 10}, kFinalNorm},
      {{10, 4}, kLoop},
      {{10, 3}, kToEmbeddings},
      {{10, 2}, kEmbeddings},
      // Algorithms 11, 12, 13: the loss lines
      {{11, 5}, "The loss is minus the log-probabilities of the right next tokens: its gradient is −1/P at each of "
                "those entries of P and 0 everywhere else."},
      {{11, 4}, "Run the encoder-decoder's backward pass (Algorithm 8's adjoint) from ∇P: this gives ∇loss(θ), the "
                "gradient line 6 steps against."},
      {{12, 9}, "The loss counts only the masked positions: ∇P is −1/P at the hidden token of each masked column and 0 "
                "everywhere else."},
      {{12, 8}, "Run BERT's backward pass (Algorithm 9's adjoint) from ∇P: this gives ∇loss(θ), the gradient line 10 "
                "steps against."},
      {{13, 5}, "The loss is minus the log-probabilities of the right next tokens: its gradient is −1/P at each of "
                "those entries of P and 0 everywhere else."},
      {{13, 4}, "Run GPT's backward pass (Algorithm 10's adjoint) from ∇P: this gives ∇loss(θ), the gradient line 6 "
                "steps against."},
  };
  if (const char* s = explain_sublayer(alg, line, alg == 10)) return s;
  auto it = text.find({alg, line});
  return it == text.end() ? "" : it->second;
}

}  // namespace sf
