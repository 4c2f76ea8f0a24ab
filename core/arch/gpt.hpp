// The paper's GPT (Algorithms 10, 13, 14) as an Architecture (core/arch/architecture.hpp).
#pragma once
#include "core/arch/architecture.hpp"

namespace sf {

class GptArchitecture : public Architecture {
 public:
  std::string name() const override { return "gpt"; }
  std::string title() const override { return "GPT: decoder-only transformer"; }
  int forward_algorithm() const override { return 10; }
  int training_algorithm() const override { return 13; }
  OutputKind output() const override { return OutputKind::Continuation; }
  std::vector<std::string> config_keys() const override;
  NormPosition paper_norm_position() const override { return NormPosition::Pre; }
  void build_table(const ModelConfig& c, ParamTable& table) const override;
  MatF forward(const Model& m, const Tokens& z, const Tokens& x, Tracer* tr, const MHAttentionFn<float>& attn,
               const Patches* patches) const override;
  std::vector<Example> examples(const std::vector<std::string>& lines, const ModelConfig& c) const override;
  void make_batch(const ModelConfig& c, const std::vector<Example>& data, const std::vector<size_t>& pick, int l,
                  int l_z, const TrainOptions& opt, Rng& rng, Batch& b) const override;
  std::unique_ptr<ModelGradient> gradient(const ParamTable& table) const override;
  std::unique_ptr<PaperTraining> paper_training(int N_data, int N_epochs) const override;
};

}  // namespace sf
