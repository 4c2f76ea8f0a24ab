#include "cli/common.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <ostream>
#include <sstream>

#include "core/arch/vit.hpp"
#include "core/model/error.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf::cli {

namespace {

// Pads UTF-8 text with spaces to `width` characters (not bytes).
std::string pad(const std::string& s, size_t width) {
  const size_t n = utf8_length(s);
  return n >= width ? s : s + std::string(width - n, ' ');
}

}  // namespace

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

OpenedModel load_model(const std::string& path) { return open_model(path); }

bool is_vision_model(const ModelConfig& c) { return c.arch == VitArchitecture().name(); }

OpenedModel load_text_model(const std::string& path, const std::string& command) {
  OpenedModel m = open_model(path);
  if (is_vision_model(m.checkpoint.model.config))
    throw UsageError(path + " is a vision transformer (arch \"vit\"): its input is an 8×8 image of " +
                     std::to_string(kImagePixels) + " pixel intensities, not text or token ids, so " + command +
                     " cannot run it; classify images with: stepformer-cli classify --model " + path);
  return m;
}

std::string output_size_text(const ModelConfig& c) {
  if (!is_vision_model(c)) return "N_V=" + std::to_string(c.N_V());
  const int n = vit_classes(c);
  return "classes=" + std::to_string(n) + (n > 0 ? " (" + c.vocab.front() + " … " + c.vocab.back() + ")" : "");
}

std::string config_summary(const ModelConfig& c) {
  std::ostringstream s;
  s << c.arch;
  for (const std::string& key : architecture(c).config_keys()) s << " " << key << "=" << *config_int(c, key);
  s << " H=" << c.H << " d_e=" << c.d_e << " d_attn=" << c.d_attn << " d_mid=" << c.d_mid << " d_mlp=" << c.d_mlp
    << " ℓ_max=" << c.l_max << " " << output_size_text(c) << " ε=" << c.eps;
  const std::string v = variant_summary(c);
  if (!v.empty()) s << " variants: " << v;
  return s.str();
}

std::string algorithm_name(int alg) {
  const PseudoAlgorithm* a = pseudocode(alg);
  return "Algorithm " + algorithm_label(alg) + (a ? ", " + a->name : "") + (not_in_paper(alg) ? " (not in the paper)" : "");
}

std::string algorithm_title(int alg) {
  const PseudoAlgorithm* a = pseudocode(alg);
  return algorithm_name(alg) + (a && !a->signature.empty() ? ": " + a->signature : "");
}

std::string paper_line(int alg, const std::string& prefix) {
  if (const PseudoAlgorithm* a = pseudocode(alg))
    for (const PseudoLine& l : a->lines)
      if (l.text.rfind(prefix, 0) == 0) return l.text;
  return "";
}

std::string thousands(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

// 1-based ids from a comma-separated list; a malformed list is a usage error.
Tokens parse_id_option(const Args& args, const std::string& option, const Tokenizer& tok) {
  try {
    return tok.parse_ids(args.get(option));
  } catch (const Error& e) {
    throw UsageError("--" + option + ": " + e.what());
  }
}

void check_length(const Tokens& x, const ModelConfig& c, const std::string& what) {
  if (static_cast<int>(x.size()) > c.l_max)
    throw Error(what + " " + std::to_string(x.size()) + " tokens, but this model's ℓ_max is " +
                std::to_string(c.l_max) + ": shorten it by " + std::to_string(x.size() - c.l_max));
}

}  // namespace

namespace {

// A sequence given either as text (--TEXT_OPTION, encoded [bos_token, characters…] plus eos_token
// when `with_eos`) or as ids (--IDS_OPTION, nothing added), at most ℓ_max tokens. `name` is "x" or "z".
Tokens sequence_option(const Args& args, const std::string& text_option, const std::string& ids_option,
                       const ModelConfig& c, const Tokenizer& tok, bool with_eos, const std::string& name) {
  args.require_one_of({text_option, ids_option});
  if (args.has(ids_option)) {
    const Tokens ids = parse_id_option(args, ids_option, tok);
    check_length(ids, c, "--" + ids_option + " has");
    return ids;
  }
  const Tokens seq = tok.encode_sequence(args.get(text_option), with_eos);
  check_length(seq, c,
               "--" + text_option + " makes " + name + " = [bos_token, characters…" + (with_eos ? ", eos_token" : "") +
                   "] of");
  return seq;
}

}  // namespace

Tokens input_tokens(const Args& args, const ModelConfig& c, const Tokenizer& tok, bool with_eos) {
  return sequence_option(args, "prompt", "tokens", c, tok, with_eos, "x");
}

bool prompt_with_eos(const Architecture& a) { return a.output() == OutputKind::FillIn; }

Tokens context_tokens(const Args& args, const ModelConfig& c, const Tokenizer& tok) {
  const bool given = args.has("context") || args.has("context-tokens");
  if (!architecture(c).has_context()) {
    if (given)
      throw UsageError(std::string(args.has("context") ? "--context" : "--context-tokens") +
                       " is for a model that reads a context z (an encoder-decoder, Algorithm 8); this model (" +
                       architecture(c).title() + ") reads x alone");
    return {};
  }
  if (!given)
    throw UsageError("this encoder-decoder model needs a context z: give --context TEXT or --context-tokens IDS");
  return sequence_option(args, "context", "context-tokens", c, tok, true, "z");
}

void refuse_option(const Args& args, const std::string& option, const std::string& why) {
  if (args.has(option)) throw UsageError("--" + option + " is not for this model: " + why);
}

std::string architecture_with_output(OutputKind kind) {
  for (const Architecture* a : all_architectures())
    if (a->output() == kind) return a->name();
  return "";
}

std::string show_token(const Tokenizer& tok, int id) {
  const std::string s = tok.label(id);
  const bool special = id == tok.bos_token() || id == tok.eos_token() || id == tok.mask_token() || id == tok.pad_token();
  if (id < 1 || id > tok.N_V() || special) return s;
  std::string quoted = "'";
  quoted += s;
  quoted += "'";
  return quoted;
}

std::string id_list(const Tokens& x, const char* separator) {
  std::string s;
  for (size_t i = 0; i < x.size(); ++i) {
    if (i) s += separator;
    s += std::to_string(x[i]);
  }
  return s;
}

std::string shape_text(const Value& v) {
  const std::string dims =
      v.m.cols() == 1 && v.kind != ValueKind::Mask ? std::to_string(v.m.rows())
                                                    : std::to_string(v.m.rows()) + "×" + std::to_string(v.m.cols());
  return (v.kind == ValueKind::Mask ? "{0,1}^{" : "ℝ^{") + dims + "}";
}

std::string value_text(const Value& v) {
  switch (v.kind) {
    case ValueKind::Scalar: {
      std::ostringstream s;
      s << v.name << " = " << v.m(0, 0);
      return s.str();
    }
    case ValueKind::Tokens: return v.name + " = [" + id_list(v.tokens) + "]";
    case ValueKind::Matrix:
    case ValueKind::Mask: break;
  }
  return v.name + " ∈ " + shape_text(v);
}

void print_tokens(std::ostream& os, const Tokens& x, const Tokenizer& tok) {
  const bool file_ids = !x.empty() && tok.file_id(x[0]) != x[0];  // the ecosystem's 0-based files
  os << "x = [" << id_list(x) << "]  (ℓ = " << x.size() << ", 1-based ids"
     << (file_ids ? "; the model's files number them from 0: file id = id − 1" : "") << ")\n";
  os << "     t    id  " << (file_ids ? "file id  " : "") << "token\n";
  for (size_t t = 0; t < x.size(); ++t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "  %4zu  %4d  ", t + 1, x[t]);
    os << buf;
    if (file_ids) {
      std::snprintf(buf, sizeof buf, "%7d  ", tok.file_id(x[t]));
      os << buf;
    }
    os << show_token(tok, x[t]) << "\n";
  }
}

std::vector<std::pair<int, float>> top_entries(const Eigen::Ref<const VecF>& p, int k) {
  const int n = static_cast<int>(p.size());
  k = std::clamp(k, 0, n);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return p(a) > p(b) || (p(a) == p(b) && a < b); });
  std::vector<std::pair<int, float>> top;
  for (int r = 0; r < k; ++r) top.emplace_back(order[r] + 1, p(order[r]));
  return top;
}

void print_predictions(std::ostream& os, const MatF& P, const Tokens& x, const Tokenizer& tok, OutputKind kind,
                       int k) {
  const bool fill = kind == OutputKind::FillIn;
  k = std::min(k, static_cast<int>(P.rows()));
  os << "P ∈ ℝ^{" << P.rows() << "×" << P.cols() << "}: ";
  if (fill)
    os << "column t is P[:, t] for x[t] itself (the model reads all of x); * marks the positions holding "
          "mask_token. The top "
       << k << " tokens per position, and what P gave x[t]\n";
  else
    os << "column t is P̂(x[t+1] | x[1:t]" << (kind == OutputKind::Translation ? ", z" : "") << "); the top " << k
       << " next tokens per position, and what P gave the actual x[t+1]\n";
  os << "     t  " << pad("x[t]", 8);
  for (int r = 1; r <= k; ++r) os << pad(std::string("#").append(std::to_string(r)), 16);
  os << (fill ? "x[t]" : "x[t+1]") << "\n";
  for (Eigen::Index t = 0; t < P.cols(); ++t) {
    const bool masked = fill && x[t] == tok.mask_token();
    char buf[16];
    std::snprintf(buf, sizeof buf, " %c%4d  ", masked ? '*' : ' ', static_cast<int>(t) + 1);
    os << buf << pad(show_token(tok, x[t]), 8);
    for (const auto& [id, p] : top_entries(P.col(t), k)) os << pad(show_token(tok, id) + " " + fixed(p, 4), 16);
    const Eigen::Index target = fill ? t : t + 1;  // the position column t predicts
    if (masked)
      os << "(to fill)";
    else if (target < static_cast<Eigen::Index>(x.size()))
      os << show_token(tok, x[target]) << " " << fixed(P(x[target] - 1, t), 4);
    else
      os << "(next)";
    os << "\n";
  }
}

}  // namespace sf::cli
