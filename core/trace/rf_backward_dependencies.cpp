// Dependencies on hover for Algorithm 4-R's adjoint lines 12 … 5 (random-feature attention; a variant,
// NOT IN THE PAPER: core/backprop/adjoint_rf_attention.cpp binds them, core/gradients/rf_backward.hpp
// computes them). Each gradient cell reads the gradients the line before it (in reverse order) bound;
// the running sums S_φ(t_x), s_φ(t_x) are recomputed by the backward, not bound, so the rule names them.
#include "core/trace/dependency_rules.hpp"

namespace sf::dependency_rules {

namespace {

namespace L = lines::random_feature_attention;

bool line12(Rule& R) {  // ∇a, ∇b, ∇g from ∇Ṽ, Ṽ[:, t_x] = a / b̂
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  if (n == "∇a") return R.add_grad("∇Ṽ", cell_of(r, c)), R.ok(R.cell() + " = ∇Ṽ[" + I(r) + ", " + I(c) + "] / b̂[" + I(c) + "]"), true;
  if (n == "∇b" || n == "∇g") {
    R.add_grad("∇Ṽ", col_of(c));
    const std::string q = "−∇Ṽ[:, " + I(c) + "] · Ṽ[:, " + I(c) + "] / b̂[" + I(c) + "]";
    return R.ok(n == "∇b" ? R.cell() + " = " + q + " (0 where the guard divided by ε g)"
                          : R.cell() + " = ε (" + q + ") where the guard divided by ε g, else 0"),
           true;
  }
  return false;
}

bool line11(Rule& R) {  // ∇φ(Q)[:, t_x] = S_φ(t_x) ∇a[:, t_x] + s_φ(t_x) ∇b[t_x]
  if (R.v.name != "∇φ(Q)") return false;
  R.add_grad("∇a", col_of(R.c));
  R.add_grad("∇b", cell_of(0, R.c));
  return R.ok(R.cell() + " = S_φ[" + I(R.r) + ", :] · ∇a[:, " + I(R.c) + "] + s_φ[" + I(R.r) + "] ∇b[" + I(R.c) +
              "], the sums as they stood at query " + I(R.c)),
         true;
}

bool line10(Rule& R) {  // the suffix sums (sub-step), then each key's ∇V, ∇φ(K), ∇κ
  const std::string& n = R.v.name;
  const int r = R.r, c = R.c;
  const std::string queries = "the queries t_x that see key ";
  if (n == "∇S_φ") {
    R.add_grad("∇a", row_of(c));
    return R.ok(R.cell() + " = Σ_{t_x} φ(Q)[" + I(r) + ", t_x] ∇a[" + I(c) + ", t_x] over " + queries + "1"), true;
  }
  if (n == "∇s_φ") {
    R.add_grad("∇b", all_of());
    return R.ok(R.cell() + " = Σ_{t_x} φ(Q)[" + I(r) + ", t_x] ∇b[t_x] over " + queries + I(c)), true;
  }
  if (n == "∇g" && R.e.kind == EventKind::SubStep) {
    R.add_grad("∇g", all_of());
    return R.ok(R.cell() + " = Σ_{t_x} ∇g[t_x] over " + queries + I(c)), true;
  }
  if (n == "∇V") {
    R.add_grad("∇S_φ", col_of(r));
    return R.ok(R.cell() + " = κ[" + I(c) + "] (∇S_φ at key " + I(c) + ")[:, " + I(r) + "] · φ(K)[:, " + I(c) + "]"), true;
  }
  if (n == "∇φ(K)" || n == "∇κ") {
    R.add_grad("∇S_φ", n == "∇κ" ? all_of() : row_of(r));
    R.add_grad("∇s_φ", n == "∇κ" ? col_of(c) : cell_of(r, c));
    if (n == "∇κ") R.add_grad("∇g", cell_of(0, c));
    return R.ok(n == "∇κ" ? R.cell() + " = φ(K)[:, " + I(c) + "] · (∇S_φ V[:, " + I(c) + "] + ∇s_φ[:, " + I(c) + "]) + ∇g[" + I(c) + "]"
                          : R.cell() + " = κ[" + I(c) + "] ((∇S_φ V[:, " + I(c) + "])[" + I(r) + "] + ∇s_φ[" + I(r) + ", " + I(c) + "])"),
           true;
  }
  return false;
}

// Lines 7, 6, 5: ∇K through κ, ∇K and ∇Q through φ (rows 2i−1, 2i of a column are cos and sin of ⟨w_i, ·⟩).
bool lines7_to_5(Rule& R) {
  const int line = R.e.line, r = R.r, c = R.c;
  if (line == L::kappa.line && R.v.name == "∇K") {
    R.add_grad("∇κ", cell_of(0, c));
    return R.ok(R.cell() + " = ∇κ[" + I(c) + "] κ[" + I(c) + "] K[" + I(r) + ", " + I(c) + "] / σ²: line 7's path"), true;
  }
  const bool keys = line == L::phi_K.line && R.v.name == "∇K", queries = line == L::phi_Q.line && R.v.name == "∇Q";
  if (!keys && !queries) return false;
  const std::string P = keys ? "φ(K)" : "φ(Q)";
  R.add_grad("∇" + P, col_of(c));
  if (keys) R.add_grad("∇K", cell_of(r, c));  // line 7's
  return R.ok(R.cell() + " = Σ_i w_i[" + I(r) + "] (cos · ∇sin − sin · ∇cos of ⟨w_i, ·⟩) over ∇" + P + "[:, " + I(c) + "]" +
              (keys ? " + line 7's ∇K[" + I(r) + ", " + I(c) + "]" : "")),
         true;
}

}  // namespace

bool rf_attention_adjoint(Rule& R) {
  switch (R.e.line) {
    case L::V_col.line: return line12(R);
    case L::num.line: return line11(R);
    case L::add.line: return line10(R);
    default: return lines7_to_5(R);
  }
}

}  // namespace sf::dependency_rules
