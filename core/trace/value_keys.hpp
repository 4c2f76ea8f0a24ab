// The values' half of the trace vocabulary (core/trace/vocabulary.hpp names the lines): a key per
// bound value that more than one file names, carrying the symbol the trace binds it under and its
// axes. A producer binds with the key (tv, tparam below), a consumer finds the value with it
// (event_value, ValueKey::names), so that neither spells the symbol and the compiler finds both.
#pragma once
#include <optional>
#include <string>

#include "core/trace/trace.hpp"

namespace sf {

struct ValueKey {
  const char* symbol;  // Value::name as the trace binds it
  Axis rows = Axis::Feature, cols = Axis::Feature;
  bool names(const Value& v) const { return v.name == symbol; }
};

namespace keys {
// Algorithm 4 line 6: the attention weights softmax(S/√d_attn) ∈ (0,1)^{ℓ_z×ℓ_x}, a column per query.
inline constexpr ValueKey attention_weights{"softmax(S/√d_attn)", Axis::TokenZ, Axis::TokenX};
// The tied unembedding (a variant, GPT-2's): W_u ∈ ℝ^{N_V×d_e} is W_eᵀ, bound as a view of W_e.
inline constexpr ValueKey tied_unembedding{"W_u = W_eᵀ", Axis::Vocab, Axis::Feature};
// Algorithms 11–13's update line: ‖∇loss(θ)‖ of each tensor of the parameter table, a row each.
inline constexpr ValueKey tensor_grad_norms{"‖∇loss(θ)‖ per tensor"};
}  // namespace keys

// What Algorithms 11–13's update line θ ← θ − η · ∇loss(θ) binds for each tensor W of the parameter
// table (W named as in the table, e.g. "layers.1.attn.W_q"): ∇W, "W (before)" and "W (after)".
enum class UpdateValue { Gradient, Before, After };
struct UpdateValueKey {
  std::string tensor;  // the parameter table's name
  UpdateValue which = UpdateValue::Gradient;
};
inline std::string update_value_name(const std::string& tensor, UpdateValue which) {
  switch (which) {
    case UpdateValue::Gradient: return "∇" + tensor;
    case UpdateValue::Before: return tensor + " (before)";
    case UpdateValue::After: return tensor + " (after)";
  }
  return tensor;
}
// The tensor and kind an update value's name names; nullopt for any other name.
inline std::optional<UpdateValueKey> parse_update_value(const std::string& name) {
  const auto ends = [&](const std::string& tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  const std::string grad = "∇", before = " (before)", after = " (after)";
  if (name == keys::tensor_grad_norms.symbol) return std::nullopt;
  if (name.size() > grad.size() && name.rfind(grad, 0) == 0) return UpdateValueKey{name.substr(grad.size()), UpdateValue::Gradient};
  if (ends(before)) return UpdateValueKey{name.substr(0, name.size() - before.size()), UpdateValue::Before};
  if (ends(after)) return UpdateValueKey{name.substr(0, name.size() - after.size()), UpdateValue::After};
  return std::nullopt;
}

// The value event e binds under `key`, or nullptr.
inline const Value* event_value(const Event& e, const ValueKey& key) {
  for (const Value& v : e.values)
    if (key.names(v)) return &v;
  return nullptr;
}

// A copy of m bound under `key`, with its axes.
template <class Derived>
Value tv(const ValueKey& key, const Eigen::MatrixBase<Derived>& m) {
  return tv(key.symbol, m, key.rows, key.cols);
}
// A parameter tensor W (or Wᵀ with `transposed`) bound under `key`, as tparam binds it.
template <class T>
Value tparam(Tracer* tr, const ValueKey& key, const MapM<const T>& W, bool transposed = false) {
  return tparam<T>(tr, key.symbol, W, key.rows, key.cols, transposed);
}

}  // namespace sf
