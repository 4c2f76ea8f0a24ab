// File › New model…: a window to build a fresh, seeded model of any architecture with any
// variant of docs/variants.md. The sizes, the variants (each labelled with the seed that
// describes it where it is not the paper's choice), the seed; live, the parameter count and
// the parameter table of the current choice; an impossible combination shown in red with
// validate()'s message and Create disabled. Create makes Model::initialised(c, seed) the
// session's model (the trace re-runs; the Training tab trains it); "Save as" writes it as a
// checkpoint. Scripted by --actions builder:open, builder:set:KEY=VALUE, builder:create,
// builder:save:PATH.
#pragma once
#include <cstdint>
#include <string>

#include "app/app.hpp"
#include "core/model/config.hpp"

namespace sf {

class ModelBuilder {
 public:
  void draw(App& app);
  // Starts from the session model's configuration (and seed 1).
  void open(App& app);
  // Sets one key as the JSON configuration names it ("position", "H_kv", "L", "vocab", …) or
  // "seed"; VALUE is written as in JSON but without quotes ("rope", "true", "10000", "l_max").
  // False with `error` for an unknown key or a value that is not one of the key's values
  // (a possible value that makes an impossible combination is accepted: validate() shows it).
  bool set(const std::string& key, const std::string& value, std::string& error);
  // Makes the model the session's; false with `error` (validate()'s message) when impossible.
  bool create(App& app, std::string& error);
  // Creates the model, then writes it as a checkpoint at `path`.
  bool save_as(App& app, const std::string& path, std::string& error);
  // "" when the configuration can be built, else why not (validate(), or the size limit).
  std::string why_not() const;

 private:
  void draw_sizes();
  void draw_variants();
  void draw_attention_kind();
  void draw_relative_bias();  // T5's relative_buckets and relative_max_distance (position "relative")
  void draw_window();         // the sliding window w (0: off)
  void draw_table(App& app, float height);  // the table of c_ in `height` pixels

  ModelConfig c_;
  uint64_t seed_ = 1;
  char vocab_[1024] = "";  // "" keeps the default vocabulary
  char save_path_[512] = "model.safetensors";
  std::string result_;     // the last Create / Save as outcome, shown under the buttons
  bool result_error_ = false;
};

}  // namespace sf
