// --attention gpu for forward, fill and sample: the forward algorithms' MHAttention (every call:
// self, cross, KV-cached) as compute shaders on a headless GL context (gpu/forward_gpu.hpp), and the
// report the commands print: the device, one line per call, the dispatch table.
#pragma once
#include <iosfwd>
#include <memory>
#include <string>

#include "cli/args.hpp"
#include "core/algorithms/algorithms.hpp"

namespace sf::cli {

// --attention cpu|gpu and --gpu-form teaching|fused, checked before any file is read (UsageError):
// the values, --gpu-form without --attention gpu, and --trace with it (the hooks are untraced).
struct AttentionChoice {
  bool gpu = false;
  std::string form = "fused";
};
AttentionChoice attention_choice(const Args& args);

// The options' help texts, shared by the three commands.
Option attention_option();
Option gpu_form_option();

// The GPU attention of one command run. Throws sf::Error when there is none (no headless GL 4.3
// context, or a stepformer-cli built without it), saying why.
class CliGpu {
 public:
  explicit CliGpu(const std::string& form);
  ~CliGpu();
  CliGpu(const CliGpu&) = delete;
  CliGpu& operator=(const CliGpu&) = delete;

  // The hooks for Architecture::forward / fill_masks (attention) and the KV cache (cached_attention).
  MHAttentionFn<float> attention();
  CachedMHAttentionFn cached_attention();
  // The device and form, one line per MHAttention call so far (where it ran, max |Ṽ_gpu − Ṽ_cpu|),
  // then every dispatch with its GPU and CPU clock, and the totals.
  void report(std::ostream& os) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sf::cli
