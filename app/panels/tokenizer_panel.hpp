// The Tokenizer view (Inspector tab "Tokenizer"), the paper's §4 made visible.
//   - The prompt as the model's tokenizer cuts it: each piece with its paper id (1-based), the id
//     in the tokenizer's own files (GPT-2's and BERT's number from 0), the piece as the files
//     write it (GPT-2's "Ġ" for a leading space), and the special tokens the model has.
//   - "Train BPE" stepped through (BpeTrainer): a corpus, a target vocabulary size, Step (one
//     merge) and Run; each merge (the pair, how often it occurred, the new piece), the candidates
//     for the next one, the vocabulary growing, and the corpus re-tokenized, each piece coloured.
#pragma once
#include <memory>
#include <string>

#include "app/app.hpp"
#include "core/tokenizers/bpe.hpp"

namespace sf {

struct TokenizerPanel {
  void draw(App& app);
  // --actions tokenizer:TEXT, bpe-vocab:N, bpe-step:N, bpe-run (each restarts or steps the trainer).
  void set_corpus(const std::string& text);
  void set_target(int vocab);
  // Makes up to n merges; false with `error` when the corpus cannot be trained on.
  bool step(int n, std::string& error);
  bool run(std::string& error);
  const BpeTrainer* trainer() const { return trainer_.get(); }

 private:
  // The trainer for corpus_ and target_, made on first use; false with error_ when it cannot be.
  bool ensure();
  void draw_prompt_pieces(App& app);
  void draw_bpe(App& app);

  std::string corpus_ =
      "the cat sat on the mat. the cat ate the rat. then the rat ran, and the cat ran after the rat. "
      "a tokenizer learns the pieces that the text repeats: the, at, ran, rat.";
  int target_ = 40;
  std::unique_ptr<BpeTrainer> trainer_;
  std::string error_;
};

// "Merge 3: “a” + “b” → “ab” (the pair occurred 1 time)": the heading of a BPE merge.
std::string merge_heading(const BpeMerge& m);

// The app's Tokenizer tab (--dump-state reads its trainer).
const TokenizerPanel& tokenizer_panel(const App& app);

}  // namespace sf
