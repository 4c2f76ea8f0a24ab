#include "core/gradients/gradient_flow.hpp"

#include <cmath>

namespace sf {

namespace {

// "layer2.attn." → "layer 2"; "enc.layer1.attn." → "encoder layer 1"; "dec.layer1.self_attn." →
// "decoder layer 1, self-attention"; "dec.layer1.cross_attn." → "decoder layer 1, cross-attention".
std::string block_label(const std::string& prefix, int layer) {
  std::string s = prefix.rfind("enc.", 0) == 0 ? "encoder layer " : prefix.rfind("dec.", 0) == 0 ? "decoder layer " : "layer ";
  s += std::to_string(layer);
  if (prefix.find("self_attn.") != std::string::npos) s += ", self-attention";
  if (prefix.find("cross_attn.") != std::string::npos) s += ", cross-attention";
  return s;
}

// ‖·‖_F of each of the entry's `count` matrices (one per head), stored one after another.
std::vector<double> per_head_norms(const ParamEntry& e, const std::vector<double>& grad) {
  std::vector<double> n(static_cast<size_t>(e.count));
  for (int h = 0; h < e.count; ++h) {
    const double* g = grad.data() + e.offset + static_cast<size_t>(h) * e.matrix_size();
    n[static_cast<size_t>(h)] = Eigen::Map<const Eigen::VectorXd>(g, static_cast<Eigen::Index>(e.matrix_size())).norm();
  }
  return n;
}

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// Row 1 of the stream's norms: entering layer 1 (empty for an empty stream).
std::vector<double> first_row(const StreamFlow& f) {
  std::vector<double> r;
  for (Eigen::Index t = 0; !f.empty() && t < f.token_norms.cols(); ++t) r.push_back(f.token_norms(0, t));
  return r;
}

}  // namespace

StreamFlow stream_flow(const std::vector<Mat<double>>& grads) {
  StreamFlow f;
  if (grads.empty()) return f;
  f.token_norms.resize(static_cast<Eigen::Index>(grads.size()), grads.front().cols());
  for (size_t l = 0; l < grads.size(); ++l) {
    f.token_norms.row(static_cast<Eigen::Index>(l)) = grads[l].colwise().norm();
    f.layer_norms.push_back(grads[l].norm());
  }
  return f;
}

std::vector<HeadGradNorms> head_gradient_norms(const ParamTable& table, const std::vector<double>& grad) {
  // add_mh_attention writes W_q, b_q, W_k, b_k, W_v, b_v, W_o, b_o under one prefix.
  std::vector<HeadGradNorms> out;
  for (const ParamEntry& e : table.entries()) {
    if (!ends_with(e.name, "W_q")) continue;
    HeadGradNorms b;
    b.prefix = e.name.substr(0, e.name.size() - 3);
    b.layer = e.layer;
    b.label = block_label(b.prefix, e.layer);
    b.q = per_head_norms(e, grad);
    b.k = per_head_norms(table.at(b.prefix + "W_k"), grad);
    b.v = per_head_norms(table.at(b.prefix + "W_v"), grad);
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<double> GradientFlow::saliency() const {
  return first_row(x);
}

std::vector<double> GradientFlow::saliency_z() const {
  return first_row(z);
}

GradientFlow gradient_flow(const Model& m, const Batch& batch) {
  const SequenceGradient g = sequence_gradient(m, batch);
  GradientFlow f;
  f.loss = g.loss;
  f.x = stream_flow(g.stream.X);
  f.z = stream_flow(g.stream.Z);
  f.heads = head_gradient_norms(m.table, g.grad);
  return f;
}

}  // namespace sf
