// Algorithm 5's adjoint on a cross-attention (X ≠ Z, Algorithm 8 line 16: the encoder-decoder's
// ∇ goes into both the decoder's X and the encoder's Z), against the batched backward training uses
// (mh_cross_attention_backward), in double, with H_kv = H and H_kv = 1 (a key/value head shared).
#include <gtest/gtest.h>

#include "core/backprop/adjoints.hpp"
#include "grad_check.hpp"
#include "test_ed_support.hpp"

namespace test_backprop_cross_attention {

using namespace sf;
using namespace sf::test;

TEST(BackpropCrossAttention, AdjointSendsGradientIntoXAndZLikeTheBatchedBackward) {
  for (const int H_kv : {0, 1}) {
    SCOPED_TRACE(H_kv);
    ModelConfig c = ed_test_config(1, 1, 2, 6, 4, 3, 8, 8, {"a", "b", "c"});
    c.H_kv = H_kv;
    const SpreadModel sm(c, 4, 0.5);
    const MHAttentionW<const double> W = bind_ed<const double>(sm.table, sm.theta.data()).dec[0].cross_attn;
    std::vector<double> grads(sm.table.total(), 0.0), grads_b(sm.table.total(), 0.0);
    MHAttentionW<double> dW = bind_ed<double>(sm.table, grads.data()).dec[0].cross_attn;
    MHAttentionW<double> dW_b = bind_ed<double>(sm.table, grads_b.data()).dec[0].cross_attn;
    Rng rng(8);
    const int l_x = 3, l_z = 5;
    const MatD Xt = random_matrix(rng, 6, l_x), Z = random_matrix(rng, 6, l_z), dOut = random_matrix(rng, 6, l_x);
    MHCrossAttentionCache<double> cache;
    MatD out = MatD::Zero(6, l_x);
    mh_cross_attention_forward<double>(Xt, Z, W, 1, l_x, l_z, cache, out);
    // The batched backward
    MHCrossAttentionWorkspace<double> ws;
    MatD dXt_b(6, l_x), dZ_b(6, l_z);
    mh_cross_attention_backward<double>(dOut, Xt, Z, W, 1, l_x, l_z, cache, ws, dW_b, dXt_b, dZ_b);
    // The traced adjoint (listing by listing), into zeroed gradients
    const Mask ones = Mask::Ones(l_z, l_x);
    const MHAttentionForward<double> f = cross_attention_forward<double>(cache, W, Xt, Z, ones);
    MatD dXt = MatD::Zero(6, l_x), dZ = MatD::Zero(6, l_z);
    Trace trace;
    Tracer tracer(trace);
    adjoint_mh_attention<double>(f, W, dOut, dW, dXt, dZ, &tracer);
    // Two orders of the same sums of ≤ 6 terms, about 6 deep: kReorderedDouble (grad_check.hpp) bounds them.
    EXPECT_LT(relative_error(dXt, dXt_b), kReorderedDouble);
    EXPECT_LT(relative_error(dZ, dZ_b), kReorderedDouble);
    const Eigen::Map<const Vec<double>> a(grads.data(), grads.size()), b(grads_b.data(), grads_b.size());
    EXPECT_LT(relative_error(a, b), kReorderedDouble);
    EXPECT_GT(dZ.norm(), 0.0);
    // Its line 2 binds both ∇X and ∇Z (X ≠ Z), with the heads' partial sums
    bool x = false, z = false;
    for (const Event& e : trace.events)
      if (e.alg == 5 && e.line == 2 && e.pass == Pass::Backward)
        for (const Value& v : e.values) x = x || v.name == "∇X", z = z || v.name == "∇Z";
    EXPECT_TRUE(x && z);
  }
}

}  // namespace test_backprop_cross_attention
