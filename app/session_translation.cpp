#include "app/session_translation.hpp"

#include <algorithm>

namespace sf {

Tokens Translation::translated() const {
  const size_t n = std::min<size_t>(result_.x_hat.size(), static_cast<size_t>(shown_) + 1);
  return Tokens(result_.x_hat.begin(), result_.x_hat.begin() + static_cast<long>(n));
}

void Translation::clear() {
  result_ = {};
  shown_ = 0;
  key_.clear();
}

bool Translation::needs_run(const Tokens& z, size_t n_params, bool traced) {
  std::vector<double> key(z.begin(), z.end());
  key.insert(key.end(), {settings.tau, static_cast<double>(settings.seed), settings.reuse_encoding ? 1.0 : 0.0,
                         static_cast<double>(settings.cut.k), settings.cut.p,
                         static_cast<double>(n_params),
                         static_cast<double>(options().kv_block_size)});  // paging on or off, B: a new block table
  if (traced && key == key_) return false;
  key_ = std::move(key);
  shown_ = 0;
  return true;
}

EdInferenceOptions Translation::options() const {
  EdInferenceOptions o{.tau = settings.tau, .seed = settings.seed, .reuse_encoding = settings.reuse_encoding,
                       .kv_cache = settings.kv_cache};
  o.cut = settings.cut;
  o.kv_block_size = settings.kv_cache && settings.paged ? settings.kv_block_size : 0;
  return o;
}

void Translation::finish(const EdInferenceOptions& used, EdInferenceResult r) {
  result_ = std::move(r);
  traced_kv_cache_ = used.kv_cache;
}

int Translation::reveal(bool one) {
  const int n = static_cast<int>(result_.steps.size());
  shown_ = one ? std::min(shown_ + 1, n) : n;
  return shown_;
}

}  // namespace sf
