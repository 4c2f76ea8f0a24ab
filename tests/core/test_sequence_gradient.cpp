// The gradient of one sequence that stepformer-cli backward writes (core/gradients/sequence_gradient.hpp):
// it is training's batched gradient, unchanged by keeping the residual stream's gradients, with the
// paper's summed loss; the kept ∂loss/∂X entering layer 1 is what line 2's W_e and W_p gather; the
// batches of one (next-token and masked) and their refusals; the float64 .npy writer. The values
// themselves are checked against torch autograd by tests/reference/test_backward_command.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>

#include "core/gradients/grad_edtransformer.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/gradients/grad_vit.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/io/fileio.hpp"
#include "core/io/npy.hpp"
#include "test_ed_support.hpp"
#include "test_vit_support.hpp"

namespace test_sequence_gradient {

using namespace sf;
using namespace sf::test;

namespace {

const std::vector<std::string> kVocab = {"a", "b", "c", "d"};  // N_V = 7: mask 5, bos 6, eos 7

ModelConfig gpt_config() {
  ModelConfig c;
  c.L = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 3;
  c.d_mlp = 8;
  c.l_max = 8;
  c.vocab = kVocab;
  return c;
}

// The models: θ spread as N(0, 0.5²) (γ around 1), rounded to float (SpreadModel).
constexpr double kSpread = 0.5;

// loss and ∇θ by the architecture's batched gradient in double, as training computes them (with
// loss_weight 1 and nothing kept).
template <class G, class W>
std::pair<double, std::vector<double>> training_gradient(const Model& m, const Batch& b, W (*bind)(const ParamTable&,
                                                                                                   const double*)) {
  const std::vector<double> theta(m.theta.begin(), m.theta.end());
  G g(m.table);
  const double loss = g.loss_and_gradient(m.config, bind(m.table, theta.data()), b, 1.0);
  return {loss, std::vector<double>(g.grad.begin(), g.grad.end())};
}

void expect_training_gradient(const SequenceGradient& s, const std::pair<double, std::vector<double>>& want) {
  EXPECT_EQ(s.loss, want.first);
  EXPECT_EQ(s.grad, want.second);  // bitwise: the same code ran, keeping the stream adds no arithmetic
}

}  // namespace

TEST(SequenceGradient, IsTrainingsGradientOfTheSummedLossForEveryArchitecture) {
  const Model gpt = SpreadModel(gpt_config(), 1, kSpread).model();
  const Batch x = next_token_batch({}, {6, 1, 3, 2, 1, 7});
  const SequenceGradient g = sequence_gradient(gpt, x);
  expect_training_gradient(g, training_gradient<GptGradient<double>>(gpt, x, &bind_gpt<const double>));
  ASSERT_EQ(g.stream.X.size(), 3u);  // L + 1
  EXPECT_TRUE(g.stream.Z.empty());
  for (const MatD& dX : g.stream.X) {
    EXPECT_EQ(dX.rows(), 8) << "d_e";
    EXPECT_EQ(dX.cols(), 6) << "ℓ";
  }

  const Model bert = SpreadModel(bert_test_config(1, 2, 8, 4, 3, 8, 6, 8, kVocab), 2, kSpread).model();
  const Batch xt = masked_batch({6, 1, 3, 2, 7}, {2, 4}, 5);
  const SequenceGradient b = sequence_gradient(bert, xt);
  expect_training_gradient(b, training_gradient<BertGradient<double>>(bert, xt, &bind_bert<const double>));
  EXPECT_EQ(b.stream.X.size(), 2u);

  const Model ed = SpreadModel(ed_test_config(2, 1, 2, 8, 4, 3, 8, 8, kVocab), 3, kSpread).model();
  const Batch zx = next_token_batch({6, 4, 3, 7}, {6, 3, 4, 2, 7});
  const SequenceGradient e = sequence_gradient(ed, zx);
  expect_training_gradient(e, training_gradient<EdGradient<double>>(ed, zx, &bind_ed<const double>));
  ASSERT_EQ(e.stream.X.size(), 2u);  // L_dec + 1
  ASSERT_EQ(e.stream.Z.size(), 3u);  // L_enc + 1
  for (const MatD& dZ : e.stream.Z) EXPECT_EQ(dZ.cols(), 4) << "ℓ_z";
  // The encoder learns only through the cross-attention: its stream's gradient is not zero.
  EXPECT_GT(e.stream.Z.back().norm(), 0);
}

// Line 2, e_t ← W_e[:, x[t]] + W_p[:, t], is the last adjoint: ∇W_p[:, t] is ∂loss/∂X[:, t] entering
// layer 1, and ∇W_e[:, v] sums it over the positions holding v (token 1 appears twice).
TEST(SequenceGradient, TheStreamEnteringLayerOneIsWhatTheEmbeddingGathers) {
  const Model m = SpreadModel(gpt_config(), 4, kSpread).model();
  const Tokens x = {6, 1, 3, 2, 1, 7};
  const SequenceGradient g = sequence_gradient(m, next_token_batch({}, x));
  const MatD& dX = g.stream.X.front();  // (d_e, ℓ)
  const ParamEntry& W_e = m.table.at("W_e");
  const ParamEntry& W_p = m.table.at("W_p");
  const Eigen::Map<const MatD> dW_e(g.grad.data() + W_e.offset, W_e.rows, W_e.cols);
  const Eigen::Map<const MatD> dW_p(g.grad.data() + W_p.offset, W_p.rows, W_p.cols);
  const int l = static_cast<int>(x.size());
  EXPECT_EQ(dW_p.leftCols(l), dX);
  EXPECT_TRUE(dW_p.rightCols(m.config.l_max - l).isZero(0)) << "positions past ℓ get no gradient";
  MatD want = MatD::Zero(W_e.rows, W_e.cols);
  for (int t = 0; t < l; ++t) want.col(x[t] - 1) += dX.col(t);
  // Sums of the same two columns, possibly in another order: within one rounding of their size.
  EXPECT_LE((dW_e - want).cwiseAbs().maxCoeff(), 2 * std::numeric_limits<double>::epsilon() * dX.cwiseAbs().maxCoeff());
  EXPECT_TRUE(want.col(3).isZero(0)) << "token 4 is not in x";
}

// The vision transformer (not in the paper): a batch of one image whose only target is the class token's
// column; training's gradient bit for bit, and ∇W_p[:, t] is ∂loss/∂X[:, t] entering layer 1, as for GPT.
TEST(SequenceGradient, AVisionTransformersImageIsTrainingsGradientWithItsStream) {
  const Model vit = SpreadModel(vit_test_config(4), 5, kSpread).model();
  const Batch b = sf::image_batch(random_image(7), 4);  // class 3 has id 4
  ASSERT_EQ(b.targets.size(), static_cast<size_t>(kImagePixels));
  EXPECT_EQ(b.targets[0], 4);
  EXPECT_EQ(std::count(b.targets.begin(), b.targets.end(), 0), kImagePixels - 1) << "one target: the class token's";
  const SequenceGradient g = sequence_gradient(vit, b);
  expect_training_gradient(g, training_gradient<VitGradient<double>>(vit, b, &bind_vit<const double>));
  ASSERT_EQ(g.stream.X.size(), 3u);  // L + 1
  const MatD& dX = g.stream.X.front();  // (d_e, ℓ_x)
  ASSERT_EQ(dX.cols(), 5) << "the class token and 4 patches";
  const ParamEntry& W_p = vit.table.at("W_p");
  const Eigen::Map<const MatD> dW_p(g.grad.data() + W_p.offset, W_p.rows, W_p.cols);
  EXPECT_EQ(dW_p.leftCols(5), dX);
  EXPECT_GT(dX.norm(), 0);
  EXPECT_NE(error_of([&] { sequence_gradient(vit, next_token_batch({}, {1, 2, 3})); }).find("64 pixels"),
            std::string::npos)
      << "a batch of tokens is not an image";
}

TEST(SequenceGradient, BatchesOfOneSequence) {
  const Batch g = next_token_batch({}, {6, 1, 3, 7});
  EXPECT_EQ(g.targets, (std::vector<int>{1, 3, 7, 0}));  // position t predicts x[t+1]
  EXPECT_EQ(g.l_z, 0);
  const Batch e = next_token_batch({6, 2, 7}, {6, 1, 7});
  EXPECT_EQ(e.z_tokens, (Tokens{6, 2, 7}));
  EXPECT_EQ(e.z_lengths, (std::vector<int>{3}));

  const Batch b = masked_batch({6, 1, 3, 2, 7}, {4, 2}, 5);
  EXPECT_EQ(b.tokens, (Tokens{6, 5, 3, 5, 7}));          // x̃: mask_token at t = 2 and 4
  EXPECT_EQ(b.targets, (std::vector<int>{0, 1, 0, 2, 0}));  // the original x[t] there
  EXPECT_NE(error_of([] { masked_batch({6, 1, 7}, {4}, 5); }).find("outside x's positions 1 … 3"), std::string::npos);
  EXPECT_NE(error_of([] { masked_batch({6, 1, 7}, {0}, 5); }).find("outside"), std::string::npos);
  EXPECT_NE(error_of([] { masked_batch({6, 1, 7}, {2, 2}, 5); }).find("given twice"), std::string::npos);
}

// The header numpy reads (shape () for a scalar, (n,) for a vector) and the doubles as they are.
TEST(Npy, Float64ArraysOfAnyShape) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sf-npy-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto header_and_data = [&](const std::string& name, const std::vector<int64_t>& shape,
                                   const std::vector<double>& data) {
    const std::string path = (dir / name).string();
    write_npy(path, shape, data);
    const std::string s = read_file(path, 1 << 20);
    EXPECT_EQ((s.size() - data.size() * 8) % 64, 0u) << "the data starts at a multiple of 64";
    EXPECT_EQ(s.compare(s.size() - data.size() * 8, std::string::npos,
                        std::string(reinterpret_cast<const char*>(data.data()), data.size() * 8)),
              0);
    return s;
  };
  EXPECT_NE(header_and_data("s.npy", {}, {0.1}).find("'descr': '<f8', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
  EXPECT_NE(header_and_data("v.npy", {3}, {1, 2, 3}).find("'shape': (3,), }"), std::string::npos);
  EXPECT_NE(header_and_data("t.npy", {2, 1, 3}, {1, 2, 3, 4, 5, 6}).find("'shape': (2, 1, 3), }"), std::string::npos);
  write_npy((dir / "m.npy").string(), {2, 3}, {1, 2, 3, 4, 5, 6});  // C order: rows first
  EXPECT_EQ(read_npy((dir / "m.npy").string()), (MatF(2, 3) << 1, 2, 3, 4, 5, 6).finished());
  EXPECT_NE(error_of([&] { write_npy((dir / "bad.npy").string(), {2, 2}, {1, 2, 3}); }).find("do not fill the shape"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace test_sequence_gradient
