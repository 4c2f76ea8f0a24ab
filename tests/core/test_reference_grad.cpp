// The loss and every parameter gradient against PyTorch float64 autograd.
//
// The data, tests/data/grad_reference.json, is made by tests/reference/gen_grad_reference.py
// (same model and parameters as forward_reference.json). To regenerate it, from the repository
// root:  /usr/bin/python3 tests/reference/gen_grad_reference.py
// Case "single" is Algorithm 13's summed loss −Σ_{t=1}^{ℓ−1} log P[x[t+1], t] for one sequence;
// case "batch" the mean over the predicted tokens of three sequences of different lengths
// (padded into one batch here). Double must match to 1e-9, float to 1e-4 (relative, per tensor;
// derived in reference_json.hpp).
#include <gtest/gtest.h>

#include "core/gradients/grad.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"

namespace test_reference_grad {

using namespace sf;
using namespace sf::test;

namespace {

struct Case {
  ModelConfig config;
  std::vector<double> theta;  // float32 values
  Batch batch;
  double weight = 1;  // each loss term's weight: 1 (sum) or 1/#targets (mean)
  double loss = 0;
  std::vector<double> grad;  // in θ's layout
};

Case load_case(const std::string& name) {
  const json j = load_test_json("grad_reference.json");
  Case c;
  c.config = config_from_json(j.at("config").dump());
  const ParamTable table(c.config);
  c.theta = json_tensors(j.at("params"), table);
  const json& k = j.at("cases").at(name);
  c.batch = make_batch(k.at("sequences").get<std::vector<Tokens>>(), c.config.l_max, c.config.eos_token());
  c.weight = k.at("reduction") == "mean" ? 1.0 / c.batch.n_targets() : 1.0;
  c.loss = k.at("loss").get<double>();
  c.grad = json_tensors(k.at("grads"), table);
  return c;
}

template <class T>
void check(const std::string& name, double tol) {
  const Case c = load_case(name);
  const ParamTable table(c.config);
  std::vector<T> theta(c.theta.begin(), c.theta.end());  // exact: the values are float32
  GptGradient<T> g(table);
  const T loss =
      g.loss_and_gradient(c.config, bind_gpt<const T>(table, theta.data()), c.batch, static_cast<T>(c.weight));
  EXPECT_NEAR(loss, c.loss, tol * std::abs(c.loss)) << name;
  const double scale = Eigen::Map<const Vec<double>>(c.grad.data(), c.grad.size()).norm();
  for (const ParamEntry& e : table.entries()) {
    const Eigen::Map<const Vec<T>> got(g.grad.data() + e.offset, e.size());
    const Eigen::Map<const Vec<double>> want(c.grad.data() + e.offset, e.size());
    if (zero_by_softmax_shift(e.name)) {  // 0 in exact arithmetic: both are rounding noise
      EXPECT_LT(got.template cast<double>().norm(), tol * scale) << name << ": " << e.name;
      // PyTorch's double noise: sums of ≤ a few hundred terms, γ_1000 ≈ 1.1e-13 of their size, ×10 for
      // terms larger than the gradient they cancel to (grad_check.hpp's check_every_tensor).
      EXPECT_LT(want.norm(), 10 * double_gamma(1000) * scale) << name << ": " << e.name;
    } else {
      EXPECT_LT(relative_error(got.template cast<double>(), want), tol) << name << ": " << e.name;
    }
  }
}

TEST(ReferenceGrad, SingleSequenceSummedLossDouble) { check<double>("single", kRefDoubleGradient); }
TEST(ReferenceGrad, SingleSequenceSummedLossFloat) { check<float>("single", kRefFloatGradient); }
TEST(ReferenceGrad, PaddedBatchMeanLossDouble) { check<double>("batch", kRefDoubleGradient); }
TEST(ReferenceGrad, PaddedBatchMeanLossFloat) { check<float>("batch", kRefFloatGradient); }

TEST(ReferenceGrad, EveryParameterHasAReferenceGradient) {
  const json j = load_test_json("grad_reference.json");
  const ParamTable table(config_from_json(j.at("config").dump()));
  for (const char* name : {"single", "batch"}) {
    EXPECT_EQ(j.at("cases").at(name).at("grads").size(), table.entries().size()) << name;
    const Case c = load_case(name);
    const double scale = Eigen::Map<const Vec<double>>(c.grad.data(), c.grad.size()).norm();
    for (const ParamEntry& e : table.entries()) {  // none is 0 but b_k's (see grad_check.hpp)
      const Eigen::Map<const Vec<double>> g(c.grad.data() + e.offset, e.size());
      if (!zero_by_softmax_shift(e.name)) {
        EXPECT_GT(g.norm(), 1e-6 * scale) << name << ": " << e.name;  // 10⁶ times the noise above: a real gradient
      }
    }
  }
}

}  // namespace

}  // namespace test_reference_grad
