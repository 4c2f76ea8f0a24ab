#include "cli/common.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <ostream>
#include <sstream>

#include "core/checkpoint.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"

namespace sf::cli {

namespace {

// Pads UTF-8 text with spaces to `width` characters (not bytes).
std::string pad(const std::string& s, size_t width) {
  const size_t n = utf8_length(s);
  return n >= width ? s : s + std::string(width - n, ' ');
}

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

}  // namespace

Model load_model(const std::string& path) { return std::move(load_checkpoint(path).model); }

std::string config_summary(const ModelConfig& c) {
  std::ostringstream s;
  s << c.arch << " L=" << c.L << " H=" << c.H << " d_e=" << c.d_e << " d_attn=" << c.d_attn << " d_mid=" << c.d_mid
    << " d_mlp=" << c.d_mlp << " ℓ_max=" << c.l_max << " N_V=" << c.N_V() << " ε=" << c.eps
    << " W_p=" << to_string(c.position_init);
  return s.str();
}

std::string thousands(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

Tokens input_tokens(const Args& args, const ModelConfig& c, const CharTokenizer& tok) {
  args.require_one_of({"prompt", "tokens"});
  Tokens x;
  if (args.has("prompt")) {
    x = tok.encode_sequence(args.get("prompt"), false);  // [bos_token, characters…]
    if (static_cast<int>(x.size()) > c.l_max)
      throw Error("the prompt is " + std::to_string(x.size() - 1) + " characters, " + std::to_string(x.size()) +
                  " tokens with bos_token, but this model's ℓ_max is " + std::to_string(c.l_max) +
                  ": shorten it to at most " + std::to_string(c.l_max - 1) + " characters");
  } else {
    try {
      x = tok.parse_ids(args.get("tokens"));
    } catch (const Error& e) {
      throw UsageError(std::string("--tokens: ") + e.what());
    }
    if (static_cast<int>(x.size()) > c.l_max)
      throw Error("--tokens has " + std::to_string(x.size()) + " ids but this model's ℓ_max is " +
                  std::to_string(c.l_max));
  }
  return x;
}

std::string show_token(const CharTokenizer& tok, int id) {
  const std::string s = tok.label(id);
  if (id < 1 || id > tok.N_V() - 3) return s;
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

void print_tokens(std::ostream& os, const Tokens& x, const CharTokenizer& tok) {
  os << "x = [" << id_list(x) << "]  (ℓ = " << x.size() << ", 1-based ids)\n";
  os << "     t    id  token\n";
  for (size_t t = 0; t < x.size(); ++t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "  %4zu  %4d  ", t + 1, x[t]);
    os << buf << show_token(tok, x[t]) << "\n";
  }
}

void print_predictions(std::ostream& os, const MatF& P, const Tokens& x, const CharTokenizer& tok, int k) {
  const int N_V = static_cast<int>(P.rows());
  k = std::min(k, N_V);
  os << "P ∈ ℝ^{" << P.rows() << "×" << P.cols() << "}: column t is P̂(x[t+1] | x[1:t]); the top " << k
     << " next tokens per position, and what P gave the actual x[t+1]\n";
  os << "     t  " << pad("x[t]", 8);
  for (int r = 1; r <= k; ++r) os << pad(std::string("#").append(std::to_string(r)), 16);
  os << "x[t+1]\n";
  std::vector<int> order(N_V);
  for (Eigen::Index t = 0; t < P.cols(); ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) {
      return P(a, t) > P(b, t) || (P(a, t) == P(b, t) && a < b);
    });
    char buf[16];
    std::snprintf(buf, sizeof buf, "  %4d  ", static_cast<int>(t) + 1);
    os << buf << pad(show_token(tok, x[t]), 8);
    for (int r = 0; r < k; ++r) os << pad(show_token(tok, order[r] + 1) + " " + fixed(P(order[r], t), 4), 16);
    if (t + 1 < static_cast<Eigen::Index>(x.size()))
      os << show_token(tok, x[t + 1]) << " " << fixed(P(x[t + 1] - 1, t), 4);
    else
      os << "(next)";
    os << "\n";
  }
}

}  // namespace sf::cli
