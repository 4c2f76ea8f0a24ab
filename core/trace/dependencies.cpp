// Dependency tracing (dependencies.hpp): one rule per pseudocode line that binds a matrix, read
// off the paper's text. Each rule names the cells of earlier values that one cell reads.
#include "core/trace/dependencies.hpp"
#include "core/trace/value_keys.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "core/trace/dependency_rules.hpp"

namespace sf {

using namespace dependency_rules;

namespace {

// Algorithm 4's lines (and their sub-steps).
void attention_rules(Rule& R) {
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  const bool rope = R.v.note.find("RoPE") != std::string::npos;
  auto affine = [&](const char* W, const char* in, const char* b) {
    // RoPE (variant) mixes coordinates (2i−1, 2i): row r reads its partner row too.
    const int lo = rope ? r - r % 2 : r, rows = rope && lo + 1 < R.v.m.rows() ? 2 : 1;
    R.add(W, [=](const Value& s) { return std::vector<CellBlock>{{lo, 0, rows, static_cast<int>(s.m.cols())}}; });
    R.add(in, col_of(c));
    R.add(b, [=](const Value&) { return std::vector<CellBlock>{{lo, 0, rows, 1}}; });
    R.ok(R.cell() + " = " + W + "[" + I(r) + ", :] · " + in + "[:, " + I(c) + "] + " + b + "[" + I(r) + "]" +
         (rope ? " (then rotated with its RoPE partner row)" : ""));
  };
  const Value* mask = R.find("Mask");
  const bool masked = mask && mask->m(std::min<int>(r, mask->m.rows() - 1), std::min<int>(c, mask->m.cols() - 1)) == 0.0f;
  if (n == "Q" || n == "W_q X + b_q 1ᵀ") return affine("W_q", "X", "b_q");
  if (n == "K" || n == "W_k Z + b_k 1ᵀ") return affine("W_k", "Z", "b_k");
  if (n == "V") return affine("W_v", "Z", "b_v");
  if (n == "S" && R.e.ref() == lines::attention::S) {
    R.add("K", col_of(r));
    R.add("Q", col_of(c));
    return R.ok("S[" + I(r) + ", " + I(c) + "] = K[:, " + I(r) + "] · Q[:, " + I(c) + "]");
  }
  if ((n == "S" && R.e.ref() == lines::attention::mask) || n == "S/√d_attn") {
    if (masked) {
      R.add("Mask", cell_of(r, c));
      return R.ok("Mask[" + I(r) + ", " + I(c) + "] = 0, so " + R.cell() + " = −∞ whatever line 4 computed");
    }
    R.add("S", cell_of(r, c));
    R.add("Mask", cell_of(r, c));
    return R.ok(n == "S" ? "Mask[" + I(r) + ", " + I(c) + "] = 1: S[" + I(r) + ", " + I(c) + "] keeps line 4's value"
                         : R.cell() + " = S[" + I(r) + ", " + I(c) + "] / √d_attn");
  }
  if (n == keys::attention_weights.symbol && mask) {
    if (masked) {
      R.add("Mask", cell_of(r, c));
      return R.ok("Mask[" + I(r) + ", " + I(c) + "] = 0: the weight is exp(−∞) = 0");
    }
    R.add("S", rows_in_col(*mask, c));  // line 5's S
    return R.ok("column " + I(c) + " of softmax(S/√d_attn) is a softmax over S[t_z, " + I(c) +
                "] for the t_z with Mask[t_z, " + I(c) + "] = 1 (they share one denominator; b_k adds the same " +
                "q·b_k to each of them, which cancels)");
  }
  if (n == "Ṽ" && mask) {
    R.add_unmasked_cols("V", *mask, r);
    R.add(keys::attention_weights.symbol, rows_in_col(*mask, c));
    return R.ok("Ṽ[" + I(r) + ", " + I(c) + "] = Σ_{t_z: Mask[t_z, " + I(c) + "] = 1} V[" + I(r) +
                ", t_z] · softmax(S/√d_attn)[t_z, " + I(c) + "]");
  }
}

// Algorithm 3's lines.
void basic_attention_rules(Rule& R) {
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  if (n == "q") {
    R.add("W_q", row_of(r)), R.add("e", all_of()), R.add("b_q", cell_of(r, 0));
    return R.ok("q[" + I(r) + "] = W_q[" + I(r) + ", :] · e + b_q[" + I(r) + "]");
  }
  if (n == "k_t" || n == "v_t") {
    const std::string W = n == "k_t" ? "W_k" : "W_v", b = n == "k_t" ? "b_k" : "b_v";
    R.add(W, row_of(r)), R.add("e_t", col_of(c)), R.add(b, cell_of(r, 0));
    return R.ok(R.cell() + " = " + W + "[" + I(r) + ", :] · e_t[:, " + I(c) + "] + " + b + "[" + I(r) + "]");
  }
  if (n == "α_t") {
    R.add("q", all_of()), R.add("k_t", all_of());
    return R.ok("α_t = softmax over t of qᵀk_t/√d_attn: every α shares one denominator");
  }
  if (n == "ṽ") {
    R.add("v_t", row_of(r)), R.add("α_t", all_of());
    return R.ok("ṽ[" + I(r) + "] = Σ_t α_t v_t[" + I(r) + "]");
  }
}

// Algorithm 5's lines.
void mh_attention_rules(Rule& R) {
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  if (R.e.ref() == lines::mh_attention::Y_h && n.rfind("Y^", 0) == 0) {
    const Value* mask = R.find("Mask");
    if (!mask) return;
    R.add("X", col_of(c));
    R.add_unmasked_cols("Z", *mask);
    R.add("Mask", col_of(c));
    return R.ok(n + " = Attention(X, Z | W^h_qkv, Mask): column " + I(c) + " reads the query X[:, " + I(c) +
                "] and the keys and values Z[:, t_z] with Mask[t_z, " + I(c) + "] = 1");
  }
  if (n == "Y") {
    const Value* Y1 = R.find("Y^1");
    if (!Y1) return;
    const int d_mid = static_cast<int>(Y1->m.rows()), h = r / d_mid + 1;
    R.add("Y^" + std::to_string(h), cell_of(r % d_mid, c));
    return R.ok("Y = [Y^1; …; Y^H]: row " + I(r) + " is row " + I(r % d_mid) + " of Y^" + std::to_string(h));
  }
  if (n == "Ṽ") {
    R.add("W_o", row_of(r)), R.add("Y", col_of(c)), R.add("b_o", cell_of(r, 0));
    return R.ok("Ṽ[" + I(r) + ", " + I(c) + "] = W_o[" + I(r) + ", :] · Y[:, " + I(c) + "] + b_o[" + I(r) + "]");
  }
}

// Algorithm 6's lines (and RMSNorm's, without m and β).
void layer_norm_rules(Rule& R) {
  const std::string& n = R.v.name;
  const int r = R.r;
  if (n == "m") {
    R.add("e", all_of());
    return R.ok("m = Σ_i e[i] / d_e");
  }
  if (n == "v") {
    R.add("e", all_of()), R.add("m", all_of());
    return R.ok("v = Σ_i (e[i] − m)² / d_e");
  }
  if (n == "ê") {
    R.add("e", all_of()), R.add("m", all_of()), R.add("v", all_of()), R.add("γ", cell_of(r, 0)), R.add("β", cell_of(r, 0));
    return R.ok("ê[" + I(r) + "] = (e[" + I(r) + "] − m)/√(v + ε) · γ[" + I(r) + "] + β[" + I(r) +
                "], and m and v read all of e");
  }
}

// The forward algorithms' own lines (8, 9, 10): embedding, stacking, the residual sub-layers and
// their norms, the final projection and the unembedding.
void forward_rules(Rule& R) {
  const Trace& tr = R.tr;
  const Event& e = R.e;
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  if (n == "Mask") return R.ok("Mask is a hyperparameter (eq. 3): it is computed from no value");
  if (n == "e_t") {
    const std::string s = e.ref() == lines::ed_transformer::enc_embed ? "z" : "x";
    const Value* toks = R.find(s);
    if (!toks || c >= static_cast<int>(toks->tokens.size())) return;
    const int id = toks->tokens[c];
    R.add(s, token_at(c));
    R.add("W_e", cell_of(r, id - 1));
    const bool pos = R.add("W_p", cell_of(r, c));
    return R.ok("e_t[" + I(r) + ", " + I(c) + "] = W_e[" + I(r) + ", " + s + "[" + I(c) + "]]" +
                (pos ? " + W_p[" + I(r) + ", " + I(c) + "]" : "") + ", " + s + "[" + I(c) + "] = " + std::to_string(id));
  }
  if (n == "W_p") return R.ok("the sinusoid of §5: computed from positions only, from no value");
  if (n == "W_u") {  // the parameter, bound again at the unembedding line
    R.add("W_u", all_of());
    return R.ok("W_u, the parameter of θ, shown again at this line");
  }
  if (n == keys::tied_unembedding.symbol) {
    R.add("W_e", cell_of(c, r));
    return R.ok("tied: W_u[" + I(r) + ", " + I(c) + "] = W_e[" + I(c) + ", " + I(r) + "]");
  }
  if (n == "P") {
    R.add_any({"W_u", keys::tied_unembedding.symbol}, all_of());
    R.add("X", col_of(c));
    return R.ok("P[:, " + I(c) + "] = softmax(W_u X[:, " + I(c) + "]): every entry of the column shares one denominator");
  }
  if (n.rfind("W_u X", 0) == 0) {
    R.add_any({"W_u", keys::tied_unembedding.symbol}, row_of(r));
    R.add("X", col_of(c));
    R.add("b_u", cell_of(r, 0));
    return R.ok(R.cell() + " = W_u[" + I(r) + ", :] · X[:, " + I(c) + "]");
  }
  if (e.ref() == lines::e_transformer::final_gelu && ((n == "X" && e.kind == EventKind::Line) || n == "W_f X + b_f 1ᵀ")) {
    R.add("W_f", row_of(r)), R.add("X", col_of(c)), R.add("b_f", cell_of(r, 0));
    return R.ok(R.cell() + " = " + (n == "X" ? "GELU(" : "(") + "W_f[" + I(r) + ", :] · X[:, " + I(c) + "] + b_f[" +
                I(r) + "])");
  }
  if (e.kind == EventKind::SubStep) {  // the MLP's parts: W_a in + b_a 1ᵀ, then act(…) cell by cell
    if (n.rfind("W_mlp", 0) == 0 || n.rfind("W_gate", 0) == 0) {
      for (const char* in : {"X̃", "Z̃", "X", "Z"})
        if (n.find(std::string(" ") + in + " ") != std::string::npos) {
          R.add(in, col_of(c));
          return R.ok(R.cell() + " = W[" + I(r) + ", :] · " + in + "[:, " + I(c) + "] + b[" + I(r) + "] (column " +
                      I(c) + " only)");
        }
      return;
    }
    if (R.k > 0 && tr.events[R.k - 1].kind == EventKind::SubStep && tr.events[R.k - 1].line == e.line &&
        !tr.events[R.k - 1].values.empty() && n.find("(…)") != std::string::npos && n.find("⊙") == std::string::npos) {
      R.add(tr.events[R.k - 1].values.front().name, cell_of(r, c));
      return R.ok(R.cell() + " is the activation of the previous part's cell [" + I(r) + ", " + I(c) + "]");
    }
    return;
  }
  if (!is_token_matrix(n)) return;
  const std::string base = n == "X̃" ? "X" : n == "Z̃" ? "Z" : n;  // the residual stream this line reads
  const size_t prev = previous_line(tr, R.k);
  const bool after_stack = prev != SIZE_MAX && binds(tr.events[prev], "e_t");
  if (after_stack && (n == "X" || n == "Z")) {
    R.add("e_t", col_of(c));
    return R.ok(n + " = [e_1, …, e_ℓ]: " + n + "[:, " + I(c) + "] = e_" + I(c));
  }
  // The input of this line's sub-layer: X̃ when the line before bound it (pre-LN), else the stream.
  const std::string tilde = base == "X" ? "X̃" : "Z̃";
  const std::string in = prev != SIZE_MAX && binds(tr.events[prev], tilde) && n == base ? tilde : base;
  if (binds(e, "Mask")) {  // X ← X + MHAttention(in, C | W, Mask)
    const Value* mask = R.find("Mask");
    const bool cross = e.ref() == lines::ed_transformer::cross_attention;
    if (cross || in != n) R.add(n, col_of(c));  // the residual (self-attention on X itself: among the keys)
    if (cross) {
      if (in != n) R.add(in, col_of(c));
      R.add_unmasked_cols("Z", *mask);
    } else {
      R.add_unmasked_cols(in, *mask);
    }
    R.add("Mask", col_of(c));
    return R.ok(n + "[:, " + I(c) + "] ← " + n + "[:, " + I(c) + "] + MHAttention(" + in + (cross ? ", Z" : "") +
                " | W, Mask)[:, " + I(c) + "]: the query " + in + "[:, " + I(c) + "], keys and values " +
                (cross ? "Z" : in) + "[:, t′] with Mask[t′, " + I(c) + "] = 1");
  }
  const bool norm = R.k > 0 && tr.events[R.k - 1].depth > e.depth && tr.events[R.k - 1].alg == 6;
  if (norm) {  // for t ∈ [ℓ]: out[:, t] ← layer_norm(in[:, t] | γ, β)
    R.add(base, col_of(c));
    const bool final_norm = e.ref() == lines::d_transformer::final_norm || e.ref() == lines::e_transformer::final_norm;
    if (final_norm) R.add("γ", cell_of(r, 0)), R.add("β", cell_of(r, 0));  // the forward frame's own γ, β
    return R.ok(n + "[:, " + I(c) + "] = layer_norm(" + base + "[:, " + I(c) + "] | γ, β): column " + I(c) + " only");
  }
  if (R.k > 0 && tr.events[R.k - 1].kind == EventKind::SubStep) {  // X ← X + W_b act(W_a in + b_a 1ᵀ) + b_b 1ᵀ
    R.add(n, col_of(c));
    if (in != n) R.add(in, col_of(c));
    return R.ok(n + "[:, " + I(c) + "] ← " + n + "[:, " + I(c) + "] + MLP(" + in + "[:, " + I(c) + "]): column " +
                I(c) + " only");
  }
}

// The nested forward pass's P, returned to the caller's line (Algorithms 11–15).
bool nested_p(Rule& R, const std::string& what) {
  const size_t j = R.k - 1;
  if (R.k == 0 || R.tr.events[j].depth <= R.e.depth || !binds(R.tr.events[j], "P")) return false;
  const Value* P = nullptr;
  for (const Value& v : R.tr.events[j].values)
    if (v.name == "P") P = &v;
  CellSource s{"P", j, {{0, R.c, static_cast<int>(P->m.rows()), 1}}, ""};
  s.text = block_text("P", *P, s.blocks[0]) + " (Algorithm " + std::to_string(R.tr.events[j].alg) + " line " +
           std::to_string(R.tr.events[j].line) + ")";
  R.out.sources.push_back(std::move(s));
  R.ok("P ← " + what + ": column " + I(R.c) + " as the forward pass returned it");
  return true;
}

// Algorithms 11–15: training and inference lines.
void outer_rules(Rule& R) {
  const Event& e = R.e;
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  if (n == "P") {
    nested_p(R, e.alg >= 14 ? "the forward pass on x" : "the forward pass on x_n");
    return;
  }
  if (n == "−log P[x_n[t+1], t]") {
    const Value* x = R.find("x_n");
    if (!x || c + 1 >= static_cast<int>(x->tokens.size())) return;
    R.add("P", cell_of(x->tokens[c + 1] - 1, c));
    R.add("x_n", token_at(c + 1));
    return R.ok("−log P[x_n[" + I(c + 1) + "], " + I(c) + "] with x_n[" + I(c + 1) + "] = " +
                std::to_string(x->tokens[c + 1]));
  }
  if (n == "−log P[x_n[t], t]") {  // Algorithm 12: one column per t ∈ T̃
    const Value* x = R.find("x_n");
    const Value* T = R.find("T̃");
    if (!x || !T) return;
    int t = -1;
    for (int j = 0, seen = -1; j < T->m.cols(); ++j)
      if (T->m(0, j) != 0.0f && ++seen == c) t = j;
    if (t < 0) return;
    R.add("P", cell_of(x->tokens[t] - 1, t));
    R.add("x_n", token_at(t));
    R.add("T̃", cell_of(0, t));
    return R.ok("column " + I(c) + " is t = " + I(t) + " of T̃: −log P[x_n[" + I(t) + "], " + I(t) + "]");
  }
  if (n == "T̃") {
    R.add("x̃_n", token_at(c));
    return R.ok("T̃[" + I(c) + "] = [[x̃_n[" + I(c) + "] = mask_token]]");
  }
  if (n == "loss") {
    for (const char* t : {"−log P[x_n[t+1], t]", "−log P[x_n[t], t]"}) R.add(t, all_of());
    return R.ok("loss = the sum of the terms −log P");
  }
  if (const std::optional<UpdateValueKey> u = parse_update_value(n)) {
    const std::string& W = u->tensor;
    switch (u->which) {
      case UpdateValue::Before: return R.ok(n + " is θ as the update found it: computed from no value of this step");
      case UpdateValue::After:
        R.add(update_value_name(W, UpdateValue::Before), cell_of(r, c));
        R.add(update_value_name(W, UpdateValue::Gradient), cell_of(r, c)), R.add("η", all_of());
        return R.ok(R.cell() + " = " + W + "[" + I(r) + ", " + I(c) + "] − η · ∇" + W + "[" + I(r) + ", " + I(c) + "]");
      case UpdateValue::Gradient:
        R.add("loss", all_of());
        return R.ok(R.cell() + " = ∂loss/∂" + W + ", by reverse mode through the whole forward pass");
    }
  }
  if (n == keys::tensor_grad_norms.symbol) {
    int i = 0;
    for (const Value& v : e.values) {
      const std::optional<UpdateValueKey> u = parse_update_value(v.name);
      if (u && u->which == UpdateValue::Gradient && i++ == r) {
        R.add(v.name, all_of());
        return R.ok("row " + I(r) + " = ‖" + v.name + "‖");
      }
    }
    return;
  }
  if (n == "p") {
    const Value* P = R.find("P");
    if (!P) return;
    const int last = static_cast<int>(P->m.cols()) - 1;
    R.add("P", cell_of(r, last));
    return R.ok("p = P[:, " + I(last) + "], the last column: p[" + I(r) + "] = P[" + I(r) + ", " + I(last) + "]");
  }
  if (n == "q") {
    R.add("p", all_of()), R.add("τ", all_of());
    return R.ok("q ∝ p^{1/τ}: q[" + I(r) + "] reads p[" + I(r) + "] and the normaliser over all of p");
  }
}

}  // namespace

std::string CellDependencies::summary() const {
  if (!rule) return reason;
  if (sources.empty()) return reason;
  std::string s = "← ";
  for (size_t i = 0; i < sources.size(); ++i)
    s += (i == 0 ? "" : i + 1 == sources.size() ? " and " : ", ") + sources[i].text;
  return s;
}

std::string positions_text(const std::string& name, const std::vector<int>& p) {
  if (p.empty()) return "";
  bool contiguous = true;
  for (size_t i = 1; i < p.size(); ++i) contiguous = contiguous && p[i] == p[i - 1] + 1;
  if (contiguous) return name + "[" + std::to_string(p.front()) + (p.size() > 1 ? "…" + std::to_string(p.back()) : "") + "]";
  std::string s = name + "[";
  for (size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + std::to_string(p[i]);
  return s + "]";
}

CellDependencies cell_dependencies(const Trace& trace, size_t k, const std::string& value, int row, int col) {
  CellDependencies none;
  if (k >= trace.size()) return none.reason = "no such event", none;
  const Event& e = trace.events[k];
  const Value* v = nullptr;
  for (const Value& x : e.values)
    if (x.name == value) v = &x;
  if (!v) return none.reason = value + " is not bound by this step", none;
  const int rows = v->kind == ValueKind::Tokens ? 1 : static_cast<int>(v->m.rows());
  const int cols = v->kind == ValueKind::Tokens ? static_cast<int>(v->tokens.size()) : static_cast<int>(v->m.cols());
  if (row < 0 || col < 0 || row >= rows || col >= cols) return none.reason = "no such cell of " + value, none;
  Rule R{trace, k, e, *v, row, col, {}};
  if (e.pass == Pass::Backward) {
    backward_rules(R);
  } else switch (e.alg) {
    case 1:
      if (value == "e" && R.find("v")) {
        const int id = static_cast<int>(R.find("v")->m(0, 0));
        R.add("W_e", cell_of(row, id - 1));
        R.ok("e[" + I(row) + "] = W_e[" + I(row) + ", v], v = " + std::to_string(id));
      }
      break;
    case 2:
      if (value == "e_p" && R.find("ℓ")) {
        const int l = static_cast<int>(R.find("ℓ")->m(0, 0));
        R.add("W_p", cell_of(row, l - 1));
        R.ok("e_p[" + I(row) + "] = W_p[" + I(row) + ", ℓ], ℓ = " + std::to_string(l));
      }
      break;
    case 3: basic_attention_rules(R); break;
    case 4: attention_rules(R); break;
    case 5: mh_attention_rules(R); break;
    case 6: layer_norm_rules(R); break;
    case 7:
      if (value == "W_u e") {
        R.add("W_u", row_of(row)), R.add("e", all_of());
        R.ok("(W_u e)[" + I(row) + "] = W_u[" + I(row) + ", :] · e");
      } else if (value == "p") {
        R.add("W_u", all_of()), R.add("e", all_of());
        R.ok("p = softmax(W_u e): every p[v] shares one denominator");
      }
      break;
    case 8:
    case 9:
    case 10: forward_rules(R); break;
    default: outer_rules(R); break;
  }
  if (!R.out.rule) {
    R.out.sources.clear();
    R.out.reason = "no rule for " + value + " at Algorithm " + std::to_string(e.alg) + " line " + std::to_string(e.line);
    return R.out;
  }
  const TokenDependencies t = token_dependencies(trace, k, value, col);
  R.out.tokens = positions_text("z", t.z) + (t.z.empty() || t.x.empty() ? "" : " and ") + positions_text("x", t.x);
  return R.out;
}

TokenDependencies token_dependencies(const Trace& trace, size_t k, const std::string& value, int col) {
  TokenDependencies out;
  if (k >= trace.size()) return out;
  const Event& e = trace.events[k];
  if (e.kind != EventKind::Line || e.pass == Pass::Backward) return out;  // the forward pass's rules only
  if (value == "P" && e.alg >= 11 && k > 0 && trace.events[k - 1].depth > e.depth)  // the nested forward pass's P
    return token_dependencies(trace, k - 1, "P", col);
  const size_t f = trace.frame_start(k);
  const int a = trace.events[f].alg;
  if (a != 8 && a != 9 && a != 10) return out;
  std::map<std::string, std::set<int>> tracked{{value, {col}}};
  for (size_t j = k + 1; j-- > f;) {
    const Event& ej = trace.events[j];
    if (ej.depth != e.depth || ej.kind != EventKind::Line) continue;
    std::map<std::string, std::set<int>> found;
    for (auto it = tracked.begin(); it != tracked.end();) {
      if (!binds(ej, it->first)) {
        ++it;
        continue;
      }
      for (int c : it->second) {
        const CellDependencies d = [&] {
          Rule R{trace, j, ej, *std::find_if(ej.values.begin(), ej.values.end(), [&](const Value& v) { return v.name == it->first; }), 0, c, {}};
          forward_rules(R);
          return R.out;
        }();
        for (const CellSource& s : d.sources) {
          if (s.event < f) continue;
          const Value* sv = nullptr;
          for (const Value& v : trace.events[s.event].values)
            if (v.name == s.value) sv = &v;
          if (!sv || sv->kind == ValueKind::Mask) continue;
          if (sv->kind != ValueKind::Tokens && sv->cols != Axis::TokenX && sv->cols != Axis::TokenZ) continue;
          for (const CellBlock& b : s.blocks)
            for (int t = b.col0; t < b.col0 + b.cols; ++t) found[s.value].insert(t);
        }
      }
      it = tracked.erase(it);
    }
    for (auto& [name, cols] : found) tracked[name].insert(cols.begin(), cols.end());
  }
  for (const char* s : {"x", "z"})
    if (auto it = tracked.find(s); it != tracked.end())
      for (int t : it->second) (s[0] == 'x' ? out.x : out.z).push_back(t + 1);
  return out;
}

std::string gradient_of(const std::string& grad_name) {
  const std::string nabla = "∇";
  if (grad_name.size() <= nabla.size() || grad_name.compare(0, nabla.size(), nabla) != 0) return "";
  const std::string rest = grad_name.substr(nabla.size());
  return rest.substr(0, rest.find(" ("));  // a partial gradient's note: "∇Z (from line 3)"
}

size_t matching_forward_frame(const Trace& t, size_t k) {
  if (k >= t.size() || t.events[k].pass != Pass::Backward) return SIZE_MAX;
  const size_t b = t.frame_start(k);
  const Event& be = t.events[b];
  const LineRef caller = t.caller_ref(b);
  const LineRef want = caller.none() ? LineRef{} : LineRef{caller.alg, caller.line};
  // The forward pass ran before its backward: search back from it. The top-level frame's caller
  // differs (the training algorithm's forward line, its update line's adjoint): the latest frame
  // with the same algorithm and indices then.
  size_t latest = SIZE_MAX;
  for (size_t j = b; j-- > 0;) {
    const Event& e = t.events[j];
    if (e.kind != EventKind::Enter || e.pass != Pass::Forward || e.alg != be.alg || !(e.idx == be.idx)) continue;
    if (t.caller_ref(j) == want) return j;
    if (latest == SIZE_MAX) latest = j;
  }
  return latest;
}

std::optional<ForwardValue> forward_counterpart(const Trace& t, size_t k, const std::string& grad_name) {
  return forward_counterpart_in(t, k, grad_name, matching_forward_frame(t, k));
}

std::optional<ForwardValue> forward_counterpart_in(const Trace& t, size_t k, const std::string& grad_name, size_t f) {
  std::string name = gradient_of(grad_name);
  if (name == "A") name = keys::attention_weights.symbol;  // the listing's A is the forward's softmax(S/√d_attn)
  if (name.empty() || f >= t.size() || k >= t.size()) return std::nullopt;
  const Event& e = t.events[k];
  const int d = t.events[f].depth;
  // The forward line e is the adjoint of (the same loop indices first), and the frame's last line.
  size_t same_line = SIZE_MAX, exact = SIZE_MAX, last = f;
  for (size_t j = f + 1; j < t.size() && t.events[j].depth >= d; ++j) {
    const Event& x = t.events[j];
    if (x.depth != d) continue;
    if (x.kind == EventKind::Enter) break;  // the next frame of the same caller line
    if (x.kind != EventKind::Line) continue;
    last = j;
    if (e.line == 0 || x.line != e.line) continue;
    if (same_line == SIZE_MAX) same_line = j;
    if (x.idx == e.idx && exact == SIZE_MAX) exact = j;
  }
  std::optional<Found> found;
  if (e.line == 0) {  // the adjoint frame's input ∇N: N as the forward frame returned it
    found = lookup(t, last, name, true);
  } else {
    const size_t line = exact != SIZE_MAX ? exact : same_line;
    if (line == SIZE_MAX) return std::nullopt;
    found = lookup(t, line, name, false);
    if (!found) found = lookup(t, line, name, true);
  }
  if (!found) return std::nullopt;
  return ForwardValue{found->v, found->event};
}

}  // namespace sf
