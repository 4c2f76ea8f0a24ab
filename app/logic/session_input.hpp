// A prompt or a context as typed and as the model reads it (TokenInput, the Session holds two),
// and plain words for one the model cannot read: which characters are unknown and what the
// vocabulary is, so a learner who typed a capital letter knows what to type instead.
#pragma once
#include <string>
#include <vector>

#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// A character vocabulary in a few words: runs of three or more consecutive letters or digits
// collapsed ("lowercase a–z", "digits 0–9", "capitals A–Z", "d–h"), the space named, then other
// characters, then the ASCII symbols in one piece, e.g. "lowercase a–z, space, the symbols =". For a tokenizer with no character vocabulary (GPT-2, WordPiece, word
// or BPE pieces) its describe().
std::string vocabulary_summary(const Tokenizer& tok);

// "\"H\" at 1 and \"W\" at 7 are not in the vocabulary (lowercase a–z, =, space)": up to five
// characters are named (1-based piece positions), then how many more.
std::string unknown_input_message(const Tokenizer& tok, const std::vector<UnknownChar>& bad);

// The prompt a freshly opened model starts with: `preferred` ("hello=") when the model reads it
// (its characters in the vocabulary, within ℓ_max). Else, for a character vocabulary that lacks
// some of them (a model trained on a task's few characters), up to five of its letters and digits
// in reading order, then "=" where it has one (the tasks' separator), as many as ℓ_max allows. Other
// tokenizers keep `preferred`: their message says what to type (plain ids, for one).
std::string default_prompt(const Tokenizer& tok, int l_max, bool with_eos, const std::string& preferred);

// Text the model reads (the prompt x, or the context z of Algorithm 8's encoder) and its tokens.
// When the text cannot be encoded, `tokens` stay those of the last text that could be (stale):
// the trace shown is of them, and `error` says what to fix.
struct TokenInput {
  explicit TokenInput(const char* what = "prompt", bool with_eos = false) : what(what), with_eos(with_eos) {}
  const char* what;             // "prompt" or "context", as messages name it
  bool with_eos;                // [bos_token, pieces…, eos_token]; false: [bos_token, pieces…]
  std::string text;             // as typed
  Tokens tokens;                // of `text`, or of the last text that could be encoded (stale)
  std::string error;            // why `text` could not be encoded (or why its run failed)
  std::vector<UnknownChar> unknown;  // the characters of `text` not in the vocabulary
  bool stale = false;           // `text` cannot be encoded: `tokens` are of an earlier text

  // Encodes `text` with `tok`: true with `tokens` replaced and `error` empty; false (stale, the
  // tokens kept) when a character is not in the vocabulary or the tokens are more than l_max.
  bool encode(const Tokenizer& tok, int l_max);
};

}  // namespace sf
