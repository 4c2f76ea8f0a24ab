#include "core/training/pair_tasks.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"
#include "core/model/rng.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "core/tokenizers/utf8.hpp"

namespace sf {

namespace {

constexpr size_t kMaxPairsBytes = size_t{256} << 20;  // 256 MiB

std::string pair_line(const std::string& z, const std::string& x) { return z + "\t" + x; }

// The distinct characters of the lines, tabs excepted, in code-point order.
std::vector<std::string> characters(const std::vector<std::string>& lines) {
  std::set<std::string> chars;
  for (const std::string& line : lines)
    for (std::string& ch : utf8_split(line))
      if (ch != "\t") chars.insert(std::move(ch));
  return {chars.begin(), chars.end()};  // UTF-8 byte order is code-point order
}

// Validation first: up to val_size distinct lines, at most a quarter of the task's `space` of
// different lines (0: too many to count), with a bounded number of draws; then train_size lines,
// none of them a validation line (repeats among training lines are allowed, as in make_task).
void generate_pairs(Dataset& d, const TaskOptions& opt, size_t space, const std::function<std::string(Rng&)>& draw) {
  Rng rng(opt.seed);
  const size_t val_cap = space ? std::min<size_t>(opt.val_size, space / 4) : static_cast<size_t>(opt.val_size);
  std::unordered_set<std::string> held_out;
  for (long tries = 0; d.val.size() < val_cap && tries < 100L * (opt.val_size + 1); ++tries) {
    std::string line = draw(rng);
    if (held_out.insert(line).second) d.val.push_back(std::move(line));
  }
  d.train.reserve(opt.train_size);
  while (static_cast<int>(d.train.size()) < opt.train_size) {  // at least 3/4 of the draws are not held out
    std::string line = draw(rng);
    if (!held_out.count(line)) d.train.push_back(std::move(line));
  }
}

// A task whose pairs are the lines of `pool` (every pair it has), drawn uniformly.
void generate_from_pool(Dataset& d, const TaskOptions& opt, const std::vector<std::string>& pool) {
  d.vocab = characters(pool);
  generate_pairs(d, opt, pool.size(), [&pool](Rng& rng) { return pool[rng.below(pool.size())]; });
}

// 0–999 in English words, without "and" or hyphens: "three hundred twelve", "forty two", "zero".
std::string spell_number(int n) {
  static const char* kSmall[] = {"zero",    "one",     "two",       "three",    "four",     "five",    "six",
                                 "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
                                 "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
  static const char* kTens[] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
  std::string s;
  if (n >= 100) {
    s = std::string(kSmall[n / 100]) + " hundred";
    n %= 100;
    if (n == 0) return s;
    s += " ";
  }
  if (n < 20) return s + kSmall[n];
  s += kTens[n / 10];
  if (n % 10) s += std::string(" ") + kSmall[n % 10];
  return s;
}

bool leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int month, int year) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap_year(year) ? 29 : kDays[month - 1];
}

std::string two_digits(int n) {
  char s[16];
  std::snprintf(s, sizeof s, "%02d", n);
  return s;
}

bool fits(const std::string& z, const std::string& x, int max_chars) {
  return static_cast<int>(utf8_length(z)) <= max_chars && static_cast<int>(utf8_length(x)) <= max_chars;
}

// "the numbers task …" when no pair of the pool fits the model.
void require_pool(const std::string& task, const std::vector<std::string>& pool, int shortest, const TaskOptions& opt) {
  if (pool.empty())
    throw Error("the " + task + " task has no pair whose sides fit in " + std::to_string(opt.max_chars) +
                " characters: it needs ℓ_max ≥ " + std::to_string(shortest + 2) +
                " (with bos_token and eos_token); this model's ℓ_max is " + std::to_string(opt.max_chars + 2));
}

}  // namespace

bool split_pair(const std::string& line, std::string& z, std::string& x) {
  const size_t tab = line.find('\t');
  if (tab == std::string::npos) return false;
  z = line.substr(0, tab);
  x = line.substr(tab + 1);
  return true;
}

const std::vector<std::string>& pair_task_names() {
  static const std::vector<std::string> names{"reverse", "sort", "numbers", "dates"};
  return names;
}

Dataset make_pair_task(const std::string& name, const TaskOptions& opt) {
  if (opt.train_size < 1 || opt.val_size < 0) throw Error("a task needs at least one training pair");
  Dataset d;
  d.name = name + " (pairs), seed " + std::to_string(opt.seed);
  if (name == "reverse" || name == "sort") {
    if (opt.max_chars < 3)
      throw Error("the " + name + " task has sides of 3 to 8 letters, which need ℓ_max ≥ 5; this model's ℓ_max is " +
                  std::to_string(opt.max_chars + 2));
    const bool sort = name == "sort";
    const int longest = std::min(8, opt.max_chars);
    d.description = std::string("z: 3–") + std::to_string(longest) + " random letters; x: the same letters " +
                    (sort ? "sorted (\"dcab\" → \"abcd\")" : "reversed (\"abcd\" → \"dcba\")");
    d.vocab = characters({"abcdefghijklmnopqrstuvwxyz"});
    generate_pairs(d, opt, 0, [sort, longest](Rng& rng) {
      std::string z(3 + rng.below(static_cast<uint64_t>(longest - 2)), 'a');
      for (char& ch : z) ch = static_cast<char>('a' + rng.below(26));
      std::string x = z;
      if (sort)
        std::sort(x.begin(), x.end());
      else
        std::reverse(x.begin(), x.end());
      return pair_line(z, x);
    });
  } else if (name == "numbers") {
    d.description = "z: a number 0–999 spelled out in English; x: its digits (\"three hundred twelve\" → \"312\")";
    std::vector<std::string> pool;
    for (int n = 0; n <= 999; ++n)
      if (fits(spell_number(n), std::to_string(n), opt.max_chars)) pool.push_back(pair_line(spell_number(n), std::to_string(n)));
    require_pool(name, pool, 3, opt);  // "one" → "1"
    generate_from_pool(d, opt, pool);
  } else if (name == "dates") {
    static const char* kMonths[] = {"january", "february", "march",     "april",   "may",      "june",
                                    "july",    "august",   "september", "october", "november", "december"};
    d.description = "z: a date of 1950–2049 as \"12 march 2024\"; x: the same date as \"2024-03-12\"";
    std::vector<std::string> pool;
    for (int year = 1950; year <= 2049; ++year)
      for (int month = 1; month <= 12; ++month)
        for (int day = 1; day <= days_in_month(month, year); ++day) {
          const std::string z = std::to_string(day) + " " + kMonths[month - 1] + " " + std::to_string(year);
          const std::string x = std::to_string(year) + "-" + two_digits(month) + "-" + two_digits(day);
          if (fits(z, x, opt.max_chars)) pool.push_back(pair_line(z, x));
        }
    require_pool(name, pool, 10, opt);  // "1 may 1950" → "1950-05-01"
    generate_from_pool(d, opt, pool);
  } else {
    std::string known;
    for (const auto& n : pair_task_names()) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown pair task \"" + name + "\"; the tasks of pairs (z, x) are " + known);
  }
  return d;
}

Dataset pairs_dataset(const std::string& path, int max_chars) {
  Dataset d;
  d.name = "pairs " + path;
  d.description = "a line z<TAB>x of " + path + ", in file order";
  std::istringstream in(read_file(path, kMaxPairsBytes));
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ": line " + std::to_string(number);
    for (const std::string& ch : utf8_split(line))
      if (ch.size() == 1 && static_cast<unsigned char>(ch[0]) >= 0x80)
        throw Error(where + " is not valid UTF-8 (" + describe_char(ch) + ")");
    std::string z, x;
    if (!split_pair(line, z, x)) throw Error(where + " has no tab: each line must be z<TAB>x");
    for (const auto& [side, text] : {std::pair<const char*, const std::string*>{"the context z", &z}, {"x", &x}})
      if (static_cast<int>(utf8_length(*text)) > max_chars)
        throw Error(where + ": " + side + " has " + std::to_string(utf8_length(*text)) +
                    " characters; with bos_token and eos_token the model takes at most " + std::to_string(max_chars));
    d.train.push_back(std::move(line));
  }
  if (d.train.empty()) throw Error(path + " has no pairs (every line is empty)");
  d.vocab = characters(d.train);
  return d;
}

}  // namespace sf
