// Helpers shared by the commands: loading a model, turning --prompt/--tokens into x and
// --context/--context-tokens into z, naming the paper's algorithms, printing tokens, shapes and
// predictions. Nothing here tests a configuration's "arch": what differs between the
// architectures is asked of their Architecture (core/arch/architecture.hpp).
#pragma once
#include <iosfwd>
#include <string>

#include "cli/args.hpp"
#include "core/arch/architecture.hpp"
#include "core/io/model_files.hpp"
#include "core/model/config.hpp"
#include "core/model/params.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "core/trace/trace.hpp"
#include "core/model/types.hpp"

namespace sf::cli {

// Opens --model: a Stepformer checkpoint, a checkpoint from the ecosystem (Hugging Face GPT-2 or
// BERT, nanoGPT/minGPT) or a folder holding one, with its tokenizer (core/io/model_files.hpp).
// Throws sf::Error naming the file at fault and the fix.
OpenedModel load_model(const std::string& path);
// Whether the model is a vision transformer (arch "vit", not in the paper): its input x is an 8×8
// image, not token ids, and its P ranges over the classes, not over N_V tokens.
bool is_vision_model(const ModelConfig& c);
// load_model for a command that reads text or token ids (forward, fill, sample and its --draft,
// backward, lens, tokenize): a vision transformer is refused with one UsageError line naming `command`,
// saying that the model's input is an 8×8 image and pointing to stepformer-cli classify.
OpenedModel load_text_model(const std::string& path, const std::string& command);

// "gpt L=2 H=4 d_e=64 d_attn=16 d_mid=16 d_mlp=256 ℓ_max=64 N_V=64 ε=1e-05 W_p=learned": the
// architecture's own keys (Architecture::config_keys(): L; L, d_f; L_enc, L_dec), then the shared ones.
// A vision transformer shows its classes instead of N_V (output_size_text).
std::string config_summary(const ModelConfig& c);
// What P's rows range over: "N_V=64" (the tokens), or for a vision transformer "classes=10 (0 … 9)"
// (ModelConfig::N_V() would count three special tokens it never uses).
std::string output_size_text(const ModelConfig& c);

// "Algorithm 9, ETransformer" and "Algorithm 9, ETransformer: P ← ETransformer(x | θ)" (the
// paper's names, from core/pseudocode/).
std::string algorithm_name(int alg);
std::string algorithm_title(int alg);
// The text of the paper's line of algorithm `alg` that starts with `prefix` (e.g. "loss(θ) ="), or "".
std::string paper_line(int alg, const std::string& prefix);

// 104320 → "104,320"
std::string thousands(size_t n);
// fixed(0.01834, 4) → "0.0183"
std::string fixed(double x, int digits);

// The model input x from --prompt TEXT ([bos_token, characters…], and eos_token after them when
// `with_eos`; the written [MASK], [BOS], [EOS] are those tokens) or --tokens 3,1,4 (1-based ids,
// nothing added). Throws UsageError for a malformed --tokens list, sf::Error for a character or
// [WORD] outside the vocabulary or an x longer than ℓ_max.
Tokens input_tokens(const Args& args, const ModelConfig& c, const Tokenizer& tok, bool with_eos = false);
// Whether the architecture's --prompt gets eos_token: a model that reads whole sequences (fill-in,
// trained on [bos_token, characters…, eos_token]) sees both ends; one that continues x does not.
bool prompt_with_eos(const Architecture& a);

// The context z of a model whose architecture has one (Algorithm 8): --context TEXT as
// [bos_token, characters…, eos_token] (the form of the training pairs' z) or --context-tokens IDS.
// Empty for a model without a context. Throws UsageError when the context is missing or given to
// a model without one, or --context-tokens is malformed; sf::Error for text outside the vocabulary
// or a z longer than ℓ_max.
Tokens context_tokens(const Args& args, const ModelConfig& c, const Tokenizer& tok);

// A UsageError when `option` (without --) was given: "--OPTION is not for this model: WHY".
void refuse_option(const Args& args, const std::string& option, const std::string& why);

// The name of a known architecture that produces `kind` of output ("bert"), or "" (for messages).
std::string architecture_with_output(OutputKind kind);

// One token for people: 'h', ' ', '␣the' (quoted), or the special tokens as the tokenizer labels
// them: <bos>, <eos>, <mask>, <|endoftext|>, [CLS] … (unquoted).
std::string show_token(const Tokenizer& tok, int id);

// "[63, 8, 5]"
std::string id_list(const Tokens& x, const char* separator = ", ");

// "ℝ^{16×7}", "ℝ^{64}" (a column vector), "{0,1}^{7×7}" for a mask.
std::string shape_text(const Value& v);
// "S ∈ ℝ^{7×7}", "ℓ = 7", "x = [63, 8]".
std::string value_text(const Value& v);

// The tokens with their positions, ids and labels, one row per position; for a tokenizer whose
// files number tokens from 0 (GPT-2, BERT), also the files' id (paper id − 1).
void print_tokens(std::ostream& os, const Tokens& x, const Tokenizer& tok);

// For each position t, the top-k entries of P[:, t] and the probability P gave the actual token.
// Continuation / Translation: P[:, t] predicts x[t+1] (given z for Translation). FillIn: P[:, t] is
// the model's distribution for x[t] itself, and the positions holding mask_token are marked.
void print_predictions(std::ostream& os, const MatF& P, const Tokens& x, const Tokenizer& tok,
                       OutputKind kind = OutputKind::Continuation, int k = 3);

// The top k (id, probability) of a column, most likely first (ties: the lower id).
std::vector<std::pair<int, float>> top_entries(const Eigen::Ref<const VecF>& p, int k);

}  // namespace sf::cli
