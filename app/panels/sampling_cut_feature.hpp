// The --actions verbs and the --dump-state report of top-k / top-p (Sampling and Translation tabs)
// and of the paged KV cache (not in the paper; core/algorithms/sampling.hpp, paged_kv.hpp).
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {
// top-k:K, top-p:P (Sampling tab); translate-top-k:K, translate-top-p:P (Translation tab);
// kv-paged:on|off, kv-block:B. Dump key "sampling_cut".
std::unique_ptr<Feature> make_sampling_cut_feature();
}  // namespace sf
