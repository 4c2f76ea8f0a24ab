// Importing a checkpoint from the ecosystem onto the paper's parameter names (core/io/model_files.hpp,
// docs/ecosystem.md). A layout's planner (ecosystem_gpt2.cpp, ecosystem_bert.cpp) reads config.json,
// checks it against the file's tensors, and plans for every paper tensor (each head of it) the block
// of a file tensor it comes from, with a provenance string for people; all of this is checked
// against the file's names and shapes before anything is allocated. run() then fills θ.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/io/hf_config.hpp"
#include "core/io/safetensors.hpp"
#include "core/model/params.hpp"

namespace sf {

// [begin, end) along one axis of a file's tensor, 0-based as PyTorch indexes it ("a:b" in provenance).
struct Span {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

class TensorImport {
 public:
  explicit TensorImport(const SafetensorsFile& file) : file_(file) {}
  const SafetensorsFile& file() const { return file_; }

  ModelConfig config;              // the planner's; the caller adds the tokenizer's fields
  std::vector<std::string> notes;  // for people: what was ignored, defaulted or padded
  std::string vocab_tensor;        // the file's token embedding (one row per token), for messages

  // The tensor `name`, which must exist with `shape` (or extra leading 1s, shape_fits): else sf::Error naming it, the shape found and
  // `why` that shape is expected (e.g. "n_embd = 768 in config.json; Conv1D stores [in, out]").
  // Marks it used.
  const SafeTensor& need(const std::string& name, const std::vector<int64_t>& shape, const std::string& why);
  // Marks a tensor of the file as known but not a parameter (a buffer, a head the paper lacks).
  void ignore(const std::string& name) { used_.insert(name); }
  // Refuses a file holding tensors neither needed nor ignored (naming up to five): they belong to
  // a layout or size the planner does not know, e.g. more layers than config.json says.
  void refuse_unused(const std::string& layout) const;

  // The paper tensor `paper` (a vector or matrix of the table, count 1) ← the whole of `src`, or
  // its transpose.
  void whole(const std::string& paper, const SafeTensor& src, bool transposed);
  // The H heads of `paper` ← consecutive blocks of `src` from `offset` along `axis` (0: rows,
  // 1: columns; a 1-D src has rows only), each the head's matrix or (transposed) its transpose.
  void heads(const std::string& paper, const SafeTensor& src, int axis, int64_t offset, bool transposed);
  // The paper tensor stays 0 (θ starts at 0); `why` for people, e.g. "no bias in the checkpoint".
  void zero(const std::string& paper, const std::string& why);
  // A provenance line for a paper tensor that is not in the table (e.g. a tied W_u).
  void describe(const std::string& paper, const std::string& text) { provenance_[paper] = text; }
  // Paper tensor name → where its values come from.
  const std::map<std::string, std::string>& provenance() const { return provenance_; }

  // Allocates the model of `config` and fills θ as planned: every file tensor read is checked to be
  // finite, and every tensor of the table to have a source. Throws sf::Error.
  Model run() const;

 private:
  // Head `head` of `paper` ← the block of `src` at rows × cols, its transpose when `transposed`.
  struct Copy {
    std::string paper;
    int head = 0;
    const SafeTensor* src = nullptr;
    Span rows, cols;
    bool transposed = false;
  };
  // The entry of config's table (built when the first copy is planned: config is final by then).
  const ParamEntry& entry(const std::string& paper);
  void add_copy(const std::string& paper, int head, const SafeTensor& src, Span rows, Span cols, bool transposed);

  const SafetensorsFile& file_;
  std::set<std::string> used_;
  std::vector<Copy> copies_;
  std::map<std::string, std::string> provenance_;
  std::unique_ptr<ParamTable> table_;
  std::vector<std::unique_ptr<SafeTensor>> reshaped_;  // need()'s tensors stored with extra leading 1s
};

// The number of layers "PREFIX0.", "PREFIX1.", … among the file's tensor names (highest + 1; 0 when none).
int count_layers(const SafetensorsFile& file, const std::string& prefix);

// Whether two tensors hold the same shape and values (a tied lm_head saved as a copy of wte).
bool same_values(const SafetensorsFile& file, const SafeTensor& a, const SafeTensor& b);

// The planners of the ecosystem's layouts (ecosystem_gpt2.cpp, ecosystem_bert.cpp): config.json's
// hyperparameters checked against the file, the configuration, and every paper tensor's source.
// Hugging Face GPT-2 (Conv1D) and nanoGPT/minGPT (nn.Linear) share one planner: `conv1d` says which.
TensorImport plan_gpt2(const SafetensorsFile& file, const HfConfig& cfg, bool conv1d);
TensorImport plan_bert(const SafetensorsFile& file, const HfConfig& cfg);

}  // namespace sf
