#include "gpu_test_support.hpp"

#include <cmath>
#include <new>

#include "gpu/headless_gl.hpp"

namespace sf::gpu::test {

namespace {

// Holds the shared GpuAttention; TearDown releases it while EGL and the driver are still
// loaded (a static's destructor may run after them at exit).
class GpuEnvironment : public ::testing::Environment {
 public:
  std::unique_ptr<GpuAttention> gpu;
  std::string why_not;
  bool no_egl = false;
  bool tried = false;
  void TearDown() override { gpu.reset(); }
};

GpuEnvironment* const environment =
    static_cast<GpuEnvironment*>(::testing::AddGlobalTestEnvironment(new GpuEnvironment));

}  // namespace

GpuAttention* shared_gpu(std::string& why_not, bool& no_egl) {
  GpuEnvironment& e = *environment;
  if (!e.tried) {
    e.tried = true;
    e.gpu = GpuAttention::create(e.why_not);
    if (!e.gpu) {
      std::string bare;
      e.no_egl = HeadlessGl::create(bare) == nullptr;
    }
  }
  why_not = e.why_not;
  no_egl = e.no_egl;
  return e.gpu.get();
}

MatF random_matrix(Rng& rng, int rows, int cols, double sigma) {
  MatF m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(sigma * rng.normal());
  return m;
}

LayerStore::LayerStore(Rng& rng, int H, int d_x, int d_z, int d_attn, int d_mid, int d_out) {
  for (int h = 0; h < H; ++h) {
    W_q.push_back(random_matrix(rng, d_attn, d_x, 1.0 / std::sqrt(d_x)));
    W_k.push_back(random_matrix(rng, d_attn, d_z, 1.0 / std::sqrt(d_z)));
    W_v.push_back(random_matrix(rng, d_mid, d_z, 1.0 / std::sqrt(d_z)));
    b_q.push_back(random_matrix(rng, d_attn, 1, 0.1));
    b_k.push_back(random_matrix(rng, d_attn, 1, 0.1));
    b_v.push_back(random_matrix(rng, d_mid, 1, 0.1));
  }
  W_o = random_matrix(rng, d_out, H * d_mid, 1.0 / std::sqrt(H * d_mid));
  b_o = random_matrix(rng, d_out, 1, 0.1);
}

AttentionHeadW<const float> LayerStore::head(int h) const {
  return {
      MapM<const float>(W_q[h].data(), W_q[h].rows(), W_q[h].cols()), MapV<const float>(b_q[h].data(), b_q[h].size()),
      MapM<const float>(W_k[h].data(), W_k[h].rows(), W_k[h].cols()), MapV<const float>(b_k[h].data(), b_k[h].size()),
      MapM<const float>(W_v[h].data(), W_v[h].rows(), W_v[h].cols()), MapV<const float>(b_v[h].data(), b_v[h].size())};
}

MHAttentionW<const float> LayerStore::view() const {
  MHAttentionW<const float> w;
  for (int h = 0; h < static_cast<int>(W_q.size()); ++h) w.heads.push_back(head(h));
  new (&w.W_o) MapM<const float>(W_o.data(), W_o.rows(), W_o.cols());
  new (&w.b_o) MapV<const float>(b_o.data(), b_o.size());
  return w;
}

double max_abs_diff(const MatF& a, const MatF& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return (a - b).cwiseAbs().maxCoeff();
}

}  // namespace sf::gpu::test
