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
  InferenceOptions o;
  o.l_gen = count_;
  o.tau = settings.tau;
  o.trim_context = settings.trim_context;
  o.kv_cache = settings.kv_cache;
  o.stop_at_eos = settings.stop_at_eos;
  o.seed = settings.seed + prefix_.size();
  return o;
}

void Generation::finish(const InferenceOptions& used, InferenceResult r) {
  result_ = std::move(r);
  generated_ = prefix_;
  generated_.insert(generated_.end(), result_.y.begin(), result_.y.end());
  traced_kv_cache_ = used.kv_cache;
}

}  // namespace sf
