#include "cli/args.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "core/tokenizers/utf8.hpp"

namespace sf::cli {

namespace {

const Option* find_option(const CommandSpec& spec, const std::string& name) {
  for (const auto& o : spec.options)
    if (o.name == name) return &o;
  return nullptr;
}

// Word-wraps `text` to `width` columns, every line indented by `indent` spaces.
// Explicit newlines in the text start a new line.
std::string wrap(const std::string& text, size_t indent, size_t width) {
  std::ostringstream out;
  std::istringstream paragraphs(text);
  std::string paragraph;
  while (std::getline(paragraphs, paragraph)) {
    std::istringstream words(paragraph);
    std::string word, line;
    auto flush = [&] {
      out << std::string(indent, ' ') << line << '\n';
      line.clear();
    };
    while (words >> word) {
      if (!line.empty() && indent + utf8_length(line) + 1 + utf8_length(word) > width) flush();
      line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty() || paragraph.empty()) flush();
  }
  return out.str();
}

}  // namespace

const std::string& Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw UsageError("missing option --" + name);
  return it->second;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return has(name) ? get(name) : fallback;
}

long long Args::get_int(const std::string& name, long long fallback, long long lo, long long hi) const {
  return has(name) ? parse_int(get(name), "--" + name, lo, hi) : fallback;
}

uint64_t Args::get_u64(const std::string& name, uint64_t fallback) const {
  return has(name) ? parse_u64(get(name), "--" + name) : fallback;
}

double Args::get_double(const std::string& name, double fallback, double lo, double hi) const {
  return has(name) ? parse_double(get(name), "--" + name, lo, hi) : fallback;
}

void Args::require_one_of(const std::vector<std::string>& names) const {
  std::string list;
  int given = 0;
  for (const auto& n : names) {
    list += (list.empty() ? "--" : " or --") + n;
    given += has(n) ? 1 : 0;
  }
  if (given == 0) throw UsageError("missing option: give " + list);
  if (given > 1) throw UsageError("give only one of " + list);
}

Args parse_args(const CommandSpec& spec, const std::vector<std::string>& argv) {
  Args args;
  for (const auto& a : argv)  // help wins over any other mistake on the line
    if (a == "-h" || a == "--help") {
      args.help = true;
      return args;
    }
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a.size() == 2)
      throw UsageError("unexpected argument \"" + a + "\" (options start with --)");
    const size_t eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const Option* opt = find_option(spec, name);
    if (!opt) throw UsageError("unknown option --" + name + " for " + spec.name);
    if (args.has(name)) throw UsageError("option --" + name + " is given twice");
    if (opt->value.empty()) {  // a flag
      if (eq != std::string::npos) throw UsageError("option --" + name + " takes no value");
      args.values_[name] = "";
      continue;
    }
    if (eq != std::string::npos) {
      args.values_[name] = a.substr(eq + 1);
      continue;
    }
    if (i + 1 >= argv.size()) throw UsageError("option --" + name + " needs a value (" + opt->value + ")");
    const std::string& v = argv[i + 1];
    if (v.rfind("--", 0) == 0)
      throw UsageError("option --" + name + " needs a value (" + opt->value + "), not \"" + v + "\"; write --" + name +
                       "=VALUE for a value that starts with --");
    args.values_[name] = v;
    ++i;
  }
  for (const auto& o : spec.options)
    if (o.required && !args.has(o.name)) throw UsageError("missing option --" + o.name + " " + o.value);
  return args;
}

std::string usage_text(const CommandSpec& spec) {
  std::ostringstream out;
  out << "usage: stepformer-cli " << spec.name << (spec.synopsis.empty() ? "" : " ") << spec.synopsis << "\n\n";
  out << spec.summary << "\n";
  if (!spec.description.empty()) out << "\n" << wrap(spec.description, 0, 92);
  out << "\noptions:\n";
  for (const auto& o : spec.options) {
    std::string head = "  --" + o.name + (o.value.empty() ? "" : " " + o.value);
    out << head << "\n" << wrap(o.help + (o.required ? " (required)" : ""), 6, 92);
  }
  out << "  -h, --help\n" << wrap("Print this help and exit.", 6, 92);
  if (!spec.examples.empty()) out << "\nexamples:\n" << spec.examples;
  return out.str();
}

long long parse_int(const std::string& text, const std::string& what, long long lo, long long hi) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    throw UsageError(what + ": \"" + text + "\" is not a whole number");
  if (v < lo || v > hi)
    throw UsageError(what + ": " + text + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

uint64_t parse_u64(const std::string& text, const std::string& what) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    throw UsageError(what + ": \"" + text + "\" is not a whole number in [0, 2^64)");
  return v;
}

double parse_double(const std::string& text, const std::string& what, double lo, double hi) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v))
    throw UsageError(what + ": \"" + text + "\" is not a number");
  if (v < lo || v > hi) {
    std::ostringstream m;
    m << what << ": " << text << " is outside [" << lo << ", " << hi << "]";
    throw UsageError(m.str());
  }
  return v;
}

}  // namespace sf::cli
