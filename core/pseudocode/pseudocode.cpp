// The paper's pseudocode as data (see core/pseudocode.hpp). The text is exactly that of
// reference/algorithms.md, which transcribes Phuong & Hutter 2022 (arXiv:2207.09238);
// the margin notes of Algorithm 4 ([[Query ∈ …]]) keep the spacing they have there.
#include "core/pseudocode/pseudocode.hpp"

namespace sf {

const std::vector<PseudoAlgorithm>& pseudocode_all() {
  // {number, name, signature, {header…}, {{line number, text, indent}…}}
  static const std::vector<PseudoAlgorithm> table{
    {1,
     "Token embedding",
     "",
     {
         "Input: v ∈ V ≅ [N_V], a token ID.",
         "Output: e ∈ ℝ^{d_e}, the vector representation of the token.",
         "Parameters: W_e ∈ ℝ^{d_e×N_V}, the token embedding matrix.",
     },
     {
         {1, "return e = W_e[:, v]", 0},
     }},
    {2,
     "Positional embedding",
     "",
     {
         "Input: ℓ ∈ [ℓ_max], position of a token in the sequence.",
         "Output: e_p ∈ ℝ^{d_e}, the vector representation of the position.",
         "Parameters: W_p ∈ ℝ^{d_e×ℓ_max}, the positional embedding matrix.",
     },
     {
         {1, "return e_p = W_p[:, ℓ]", 0},
     }},
    {3,
     "Basic single-query attention",
     "",
     {
         "Input: e ∈ ℝ^{d_in}, vector representation of the current token.",
         "Input: e_t ∈ ℝ^{d_in}, vector representations of context tokens t ∈ [T].",
         "Output: ṽ ∈ ℝ^{d_out}, vector representation of the token and context combined.",
         "Parameters: W_q, W_k ∈ ℝ^{d_attn×d_in}, b_q, b_k ∈ ℝ^{d_attn}, the query and key linear projections.",
         "Parameters: W_v ∈ ℝ^{d_out×d_in}, b_v ∈ ℝ^{d_out}, the value linear projection.",
     },
     {
         {1, "q ← W_q e + b_q", 0},
         {2, "∀t: k_t ← W_k e_t + b_k", 0},
         {3, "∀t: v_t ← W_v e_t + b_v", 0},
         {4, "∀t: α_t = exp(qᵀk_t / √d_attn) / Σ_u exp(qᵀk_u / √d_attn)", 0},
         {5, "return ṽ = Σ_{t=1}^{T} α_t v_t", 0},
     }},
    {4,
     "Attention",
     "Ṽ ← Attention(X, Z | W_qkv, Mask)",
     {
         "/* Computes a single (masked) self- or cross-attention head. */",
         "Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, vector representations of primary and context sequence.",
         "Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, updated representations of tokens in X, folding in information from tokens in Z.",
         "Parameters: W_qkv consisting of W_q ∈ ℝ^{d_attn×d_x}, b_q ∈ ℝ^{d_attn}; W_k ∈ ℝ^{d_attn×d_z}, b_k ∈ ℝ^{d_attn}; W_v ∈ ℝ^{d_out×d_z}, b_v ∈ ℝ^{d_out}.",
         "Hyperparameters: Mask ∈ {0,1}^{ℓ_z×ℓ_x}, ↑(3)",
     },
     {
         {1, "Q ← W_q X + b_q 1ᵀ        [[Query ∈ ℝ^{d_attn×ℓ_x}]]", 0},
         {2, "K ← W_k Z + b_k 1ᵀ        [[Key ∈ ℝ^{d_attn×ℓ_z}]]", 0},
         {3, "V ← W_v Z + b_v 1ᵀ        [[Value ∈ ℝ^{d_out×ℓ_z}]]", 0},
         {4, "S ← Kᵀ Q                  [[Score ∈ ℝ^{ℓ_z×ℓ_x}]]", 0},
         {5, "∀t_z, t_x, if ¬Mask[t_z, t_x] then S[t_z, t_x] ← −∞", 0},
         {6, "return Ṽ = V · softmax(S / √d_attn)", 0},
     }},
    {5,
     "MHAttention",
     "Ṽ ← MHAttention(X, Z | W, Mask)",
     {
         "/* Computes multi-head (masked) self- or cross-attention layer. */",
         "Input: X ∈ ℝ^{d_x×ℓ_x}, Z ∈ ℝ^{d_z×ℓ_z}, vector representations of primary and context sequence.",
         "Output: Ṽ ∈ ℝ^{d_out×ℓ_x}, updated representations of tokens in X, folding in information from tokens in Z.",
         "Hyperparameters: H, number of attention heads. Mask ∈ {0,1}^{ℓ_z×ℓ_x}, ↑(3)",
         "Parameters: W as in eq. (4).",
     },
     {
         {1, "For h ∈ [H]:", 0},
         {2, "Y^h ← Attention(X, Z | W^h_qkv, Mask)", 1},
         {3, "Y ← [Y^1; Y^2; … ; Y^H]", 0},
         {4, "return Ṽ = W_o Y + b_o 1ᵀ", 0},
     }},
    {6,
     "layer_norm",
     "ê ← layer_norm(e | γ, β)",
     {
         "/* Normalizes layer activations e. */",
         "Input: e ∈ ℝ^{d_e}, neural network activations.",
         "Output: ê ∈ ℝ^{d_e}, normalized activations.",
         "Parameters: γ, β ∈ ℝ^{d_e}, element-wise scale and offset.",
     },
     {
         {1, "m ← Σ_{i=1}^{d_e} e[i] / d_e", 0},
         {2, "v ← Σ_{i=1}^{d_e} (e[i] − m)² / d_e", 0},
         {3, "return ê = (e − m)/√v ⊙ γ + β       (⊙ is element-wise multiplication)", 0},
     }},
    {7,
     "Unembedding",
     "",
     {
         "Input: e ∈ ℝ^{d_e}, a token encoding.",
         "Output: p ∈ Δ(V), a probability distribution over the vocabulary.",
         "Parameters: W_u ∈ ℝ^{N_V×d_e}, the unembedding matrix.",
     },
     {
         {1, "return p = softmax(W_u e)", 0},
     }},
    {8,
     "EDTransformer",
     "P ← EDTransformer(z, x | θ)",
     {
         "/* Encoder-decoder transformer forward pass */",
         "Input: z, x ∈ V*, two sequences of token IDs.",
         "Output: P ∈ (0,1)^{N_V×length(x)}, where the t-th column of P represents P̂_θ(x[t+1] | x[1:t], z).",
         "Hyperparameters: ℓ_max, L_enc, L_dec, H, d_e, d_mlp ∈ ℕ",
         "Parameters: W_e ∈ ℝ^{d_e×N_V}, W_p ∈ ℝ^{d_e×ℓ_max}; for l ∈ [L_enc]: W^enc_l (eq. 4),",
         "γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e}, W^l_mlp1 ∈ ℝ^{d_mlp×d_e}, b^l_mlp1 ∈ ℝ^{d_mlp}, W^l_mlp2 ∈ ℝ^{d_e×d_mlp}, b^l_mlp2 ∈ ℝ^{d_e};",
         "for l ∈ [L_dec]: W^dec_l, W^ed_l (eq. 4), γ³_l, β³_l, γ⁴_l, β⁴_l, γ⁵_l, β⁵_l ∈ ℝ^{d_e},",
         "W^l_mlp3 ∈ ℝ^{d_mlp×d_e}, b^l_mlp3 ∈ ℝ^{d_mlp}, W^l_mlp4 ∈ ℝ^{d_e×d_mlp}, b^l_mlp4 ∈ ℝ^{d_e}; W_u ∈ ℝ^{N_V×d_e}.",
     },
     {
         {0, "/* Encode the context sequence: */", 0},
         {1, "ℓ_z ← length(z)", 0},
         {2, "for t ∈ [ℓ_z]: e_t ← W_e[:, z[t]] + W_p[:, t]", 0},
         {3, "Z ← [e_1, e_2, … e_{ℓ_z}]", 0},
         {4, "for l = 1, 2, …, L_enc do", 0},
         {5, "Z ← Z + MHAttention(Z | W^enc_l, Mask ≡ 1)", 1},
         {6, "for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ¹_l, β¹_l)", 1},
         {7, "Z ← Z + W^l_mlp2 ReLU(W^l_mlp1 Z + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ", 1},
         {8, "for t ∈ [ℓ_z]: Z[:, t] ← layer_norm(Z[:, t] | γ²_l, β²_l)", 1},
         {9, "end", 0},
         {0, "/* Decode the primary sequence, conditioning on the context: */", 0},
         {10, "ℓ_x ← length(x)", 0},
         {11, "for t ∈ [ℓ_x]: e_t ← W_e[:, x[t]] + W_p[:, t]", 0},
         {12, "X ← [e_1, e_2, … e_{ℓ_x}]", 0},
         {13, "for i = 1, 2, …, L_dec do", 0},
         {14, "X ← X + MHAttention(X | W^dec_l, Mask[t, t′] ≡ [[t ≤ t′]])", 1},
         {15, "for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ³_l, β³_l)", 1},
         {16, "X ← X + MHAttention(X, Z | W^ed_l, Mask ≡ 1)", 1},
         {17, "for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁴_l, β⁴_l)", 1},
         {18, "X ← X + W^l_mlp4 ReLU(W^l_mlp3 X + b^l_mlp3 1ᵀ) + b^l_mlp4 1ᵀ", 1},
         {19, "for t ∈ [ℓ_x]: X[:, t] ← layer_norm(X[:, t] | γ⁵_l, β⁵_l)", 1},
         {20, "end", 0},
         {0, "/* Derive conditional probabilities and return: */", 0},
         {21, "return P = softmax(W_u X)", 0},
     }},
    {9,
     "ETransformer",
     "P ← ETransformer(x | θ)",
     {
         "/* BERT, an encoder-only transformer, forward pass */",
         "Input: x ∈ V*, a sequence of token IDs.",
         "Output: P ∈ (0,1)^{N_V×length(x)}, where each column of P is a distribution over the vocabulary.",
         "Hyperparameters: ℓ_max, L, H, d_e, d_mlp, d_f ∈ ℕ",
         "Parameters: W_e, W_p as above; for l ∈ [L]: W_l (eq. 4), γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e},",
         "W^l_mlp1, b^l_mlp1, W^l_mlp2, b^l_mlp2 as in Alg. 8; W_f ∈ ℝ^{d_f×d_e}, b_f ∈ ℝ^{d_f}, γ, β ∈ ℝ^{d_f},",
         "the final linear projection and layer-norm parameters; W_u ∈ ℝ^{N_V×d_e}.",
     },
     {
         {1, "ℓ ← length(x)", 0},
         {2, "for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]", 0},
         {3, "X ← [e_1, e_2, … e_ℓ]", 0},
         {4, "for l = 1, 2, …, L do", 0},
         {5, "X ← X + MHAttention(X | W_l, Mask ≡ 1)", 1},
         {6, "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)", 1},
         {7, "X ← X + W^l_mlp2 GELU(W^l_mlp1 X + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ", 1},
         {8, "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)", 1},
         {9, "end", 0},
         {10, "X ← GELU(W_f X + b_f 1ᵀ)", 0},
         {11, "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)", 0},
         {12, "return P = softmax(W_u X)", 0},
     }},
    {10,
     "DTransformer",
     "P ← DTransformer(x | θ)",
     {
         "/* GPT, a decoder-only transformer, forward pass */",
         "Input: x ∈ V*, a sequence of token IDs.",
         "Output: P ∈ (0,1)^{N_V×length(x)}, where the t-th column of P represents P̂_θ(x[t+1] | x[1:t]).",
         "Hyperparameters: ℓ_max, L, H, d_e, d_mlp ∈ ℕ",
         "Parameters: W_e, W_p; for l ∈ [L]: W_l (eq. 4), γ¹_l, β¹_l, γ²_l, β²_l ∈ ℝ^{d_e}, W^l_mlp1, b^l_mlp1,",
         "W^l_mlp2, b^l_mlp2; γ, β ∈ ℝ^{d_e}, final layer-norm parameters; W_u ∈ ℝ^{N_V×d_e}.",
     },
     {
         {1, "ℓ ← length(x)", 0},
         {2, "for t ∈ [ℓ]: e_t ← W_e[:, x[t]] + W_p[:, t]", 0},
         {3, "X ← [e_1, e_2, … e_ℓ]", 0},
         {4, "for l = 1, 2, …, L do", 0},
         {5, "for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ¹_l, β¹_l)", 1},
         {6, "X ← X + MHAttention(X̃ | W_l, Mask[t, t′] = [[t ≤ t′]])", 1},
         {7, "for t ∈ [ℓ]: X̃[:, t] ← layer_norm(X[:, t] | γ²_l, β²_l)", 1},
         {8, "X ← X + W^l_mlp2 GELU(W^l_mlp1 X̃ + b^l_mlp1 1ᵀ) + b^l_mlp2 1ᵀ", 1},
         {9, "end", 0},
         {10, "for t ∈ [ℓ]: X[:, t] ← layer_norm(X[:, t] | γ, β)", 0},
         {11, "return P = softmax(W_u X)", 0},
     }},
    {11,
     "EDTraining",
     "θ̂ ← EDTraining(z_{1:N_data}, x_{1:N_data}, θ)",
     {
         "/* Training a seq2seq model */",
         "Input: {(z_n, x_n)}_{n=1}^{N_data}, a dataset of sequence pairs. Input: θ, initial transformer parameters.",
         "Output: θ̂, the trained parameters. Hyperparameters: N_epochs ∈ ℕ, η ∈ (0, ∞)",
     },
     {
         {1, "for i = 1, 2, …, N_epochs do", 0},
         {2, "for n = 1, 2, …, N_data do", 1},
         {3, "ℓ ← length(x_n)", 2},
         {4, "P(θ) ← EDTransformer(z_n, x_n | θ)", 2},
         {5, "loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]", 2},
         {6, "θ ← θ − η · ∇loss(θ)", 2},
         {7, "end", 1},
         {8, "end", 0},
         {9, "return θ̂ = θ", 0},
     }},
    {12,
     "ETraining",
     "θ̂ ← ETraining(x_{1:N_data}, θ)",
     {
         "/* Training by masked language modelling */",
         "Input: {x_n}_{n=1}^{N_data}, a dataset of sequences. Input: θ, initial encoder-only transformer parameters.",
         "Output: θ̂, the trained parameters. Hyperparameters: N_epochs ∈ ℕ, η ∈ (0, ∞), p_mask ∈ (0, 1)",
     },
     {
         {1, "for i = 1, 2, …, N_epochs do", 0},
         {2, "for n = 1, 2, …, N_data do", 1},
         {3, "ℓ ← length(x_n)", 2},
         {4, "for t = 1, 2, …, ℓ do", 2},
         {5, "x̃_n[t] ← mask_token or x_n[t] randomly with probability p_mask or 1 − p_mask", 3},
         {6, "end", 2},
         {7, "T̃ ← {t ∈ [ℓ] : x̃_n[t] = mask_token}", 2},
         {8, "P(θ) ← ETransformer(x̃_n | θ)", 2},
         {9, "loss(θ) = −Σ_{t ∈ T̃} log P(θ)[x_n[t], t]", 2},
         {10, "θ ← θ − η · ∇loss(θ)", 2},
         {11, "end", 1},
         {12, "end", 0},
         {13, "return θ̂ = θ", 0},
     }},
    {13,
     "DTraining",
     "θ̂ ← DTraining(x_{1:N_data}, θ)",
     {
         "/* Training next token prediction */",
         "Input: {x_n}_{n=1}^{N_data}, a dataset of sequences. Input: θ, initial decoder-only transformer parameters.",
         "Output: θ̂, the trained parameters. Hyperparameters: N_epochs ∈ ℕ, η ∈ (0, ∞)",
     },
     {
         {1, "for i = 1, 2, …, N_epochs do", 0},
         {2, "for n = 1, 2, …, N_data do", 1},
         {3, "ℓ ← length(x_n)", 2},
         {4, "P(θ) ← DTransformer(x_n | θ)", 2},
         {5, "loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t]", 2},
         {6, "θ ← θ − η · ∇loss(θ)", 2},
         {7, "end", 1},
         {8, "end", 0},
         {9, "return θ̂ = θ", 0},
     }},
    {14,
     "DInference",
     "y ← DInference(x, θ̂)",
     {
         "/* Prompting a trained model and using it for prediction. */",
         "Input: trained transformer parameters θ̂. Input: x ∈ V*, a prompt.",
         "Output: y ∈ V*, the transformer's continuation of the prompt.",
         "Hyperparameters: ℓ_gen ∈ ℕ, τ ∈ (0, ∞)",
     },
     {
         {1, "ℓ ← length(x)", 0},
         {2, "for i = 1, 2, …, ℓ_gen do", 0},
         {3, "P ← DTransformer(x | θ̂)", 1},
         {4, "p ← P[:, ℓ + i − 1]", 1},
         {5, "sample a token y from q ∝ p^{1/τ}", 1},
         {6, "x ← [x, y]", 1},
         {7, "end", 0},
         {8, "return y = x[ℓ+1 : ℓ+ℓ_gen]", 0},
     }},
    {15,
     "EDInference",
     "x̂ ← EDInference(z, θ̂)",
     {
         "/* Using a trained seq2seq model for prediction. */",
         "Input: a seq2seq transformer and trained parameters θ̂. Input: z ∈ V*, input sequence.",
         "Output: x̂ ∈ V*, output sequence. Hyperparameters: τ ∈ (0, ∞)",
     },
     {
         {1, "x̂ ← [bos_token]", 0},
         {2, "y ← 0", 0},
         {3, "while y ≠ eos_token do", 0},
         {4, "P ← EDTransformer(z, x̂ | θ̂)", 1},
         {5, "p ← P[:, length(x̂)]", 1},
         {6, "sample a token y from q ∝ p^{1/τ}", 1},
         {7, "x̂ ← [x̂, y]", 1},
         {8, "end", 0},
         {9, "return x̂", 0},
     }},
  };
  return table;
}

const PseudoAlgorithm* pseudocode(int alg) {
  for (const auto& a : pseudocode_all())
    if (a.number == alg) return &a;
  for (const auto& a : extra_pseudocode())
    if (a.number == alg) return &a;
  return nullptr;
}

const PseudoLine* pseudocode_line(int alg, int line) {
  const PseudoAlgorithm* a = pseudocode(alg);
  if (!a || line <= 0) return nullptr;
  for (const auto& l : a->lines)
    if (l.number == line) return &l;
  return nullptr;
}

const char* loop_role(int alg, int line) {
  if (alg != 8) return "";
  if (line >= 4 && line <= 9) return "encoder";
  if (line >= 13 && line <= 20) return "decoder";
  return "";
}

}  // namespace sf
