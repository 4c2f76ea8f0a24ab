// The traced calls of Algorithm 4 (Attention), grouped by the line of the transformer that made
// them: Algorithm 10 line 6, Algorithm 9 line 5, Algorithm 8 lines 5 (encoder self-attention),
// 14 (decoder self-attention) and 16 (cross-attention). No architecture name is tested: the
// group is the (algorithm, line) of the frame that called MHAttention. Headless (tests use it).
#pragma once
#include "core/model/config.hpp"
#include <string>
#include <vector>

#include "core/trace/trace.hpp"

namespace sf {

// One traced call of Algorithm 4 and the values its lines bound.
struct HeadCall {
  size_t enter = 0;  // its Enter event
  Indices idx;
  int caller_alg = 0, caller_line = 0;     // the transformer line whose MHAttention made it (0: none)
  size_t line4 = 0, line5 = 0, line6 = 0;  // its line events (0: not found)
  const Value* mask = nullptr;             // Enter: Mask
  const Value* S = nullptr;                // line 4: S = KᵀQ
  const Value* S_masked = nullptr;         // line 5: S with −∞
  const Value* A = nullptr;                // line 6: softmax(S/√d_attn)
  // Not in the paper (position "relative", T5; issue 25): line 6's sub-step binds the head's relative
  // bias B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)], a Toeplitz matrix (nullptr without it).
  const Value* B = nullptr;
  size_t B_event = 0;
  // Its adjoint frame in a traced backward (a training step's update line, issue 24; not in the
  // paper): the last ∇A and ∇S that frame bound (∇S after the adjoint of line 5: masked cells 0).
  size_t back_enter = SIZE_MAX;
  const Value* dA = nullptr;
  const Value* dS = nullptr;
  size_t dA_event = 0, dS_event = 0;
};

// A group of calls made by one transformer line (e.g. Algorithm 8 line 16).
struct AttentionGroup {
  int alg = 0, line = 0;
  std::string title;  // "Encoder self-attention (Algorithm 8 line 5)", …
  std::string mask_text;  // how the mask is built there: "Mask ≡ 1", "Mask[t_z, t_x] = [t_z ≤ t_x]"
};

// Every Algorithm 4 call of the forward pass in `t`, in trace order, each with its adjoint frame
// when the trace has one.
std::vector<HeadCall> head_calls(const Trace& t);
// The distinct (caller_alg, caller_line) groups of `calls`, in order of first appearance.
// `c` says how a causal mask was built: the paper's, or the prefix-LM variant.
std::vector<AttentionGroup> attention_groups(const std::vector<HeadCall>& calls, const ModelConfig& c);
// The call of group (alg, line) for layer l, head h at generation step i (0: none); nullptr when none.
const HeadCall* find_head_call(const std::vector<HeadCall>& calls, int alg, int line, int l, int h, int i);
// The value named `name` bound by event e; nullptr when none.
const Value* event_value(const Event& e, const std::string& name);

}  // namespace sf
