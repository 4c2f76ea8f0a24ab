#include "app/session_generation.hpp"

#include <algorithm>

namespace sf {

void Generation::clear() {
  prefix_.clear();
  generated_.clear();
  result_ = {};
}

void Generation::start(int n, bool append) {
  prefix_ = append ? generated_ : Tokens{};
  count_ = std::max(0, n);
}

Tokens Generation::input(const Tokens& prompt) const {
  Tokens x = prompt;
  x.insert(x.end(), prefix_.begin(), prefix_.end());
  return x;
}

InferenceOptions Generation::options() const {
  InferenceOptions o{.l_gen = count_,
          .tau = settings.tau,
          .seed = settings.seed + prefix_.size(),
          .trim_context = settings.trim_context,
          .stop_at_eos = settings.stop_at_eos,
          .kv_cache = settings.kv_cache};
  o.cut = settings.cut;
  o.kv_block_size = settings.paged ? settings.kv_block_size : 0;
  return o;
}

void Generation::finish(const InferenceOptions& used, InferenceResult r) {
  result_ = std::move(r);
  generated_ = prefix_;
  generated_.insert(generated_.end(), result_.y.begin(), result_.y.end());
  traced_kv_cache_ = used.kv_cache;
}

}  // namespace sf
