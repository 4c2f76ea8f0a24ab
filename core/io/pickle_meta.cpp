// The plain-data pickle machine behind read_meta_pkl (core/io/pickle_meta.hpp). Objects live in
// one arena and refer to each other by index, so that a memo reference cycle (a list appended to
// itself) is harmless; nothing is ever called, imported or looked up.
#include "core/io/pickle_meta.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/io/fileio.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/unicode.hpp"

namespace sf {

namespace {

enum class Kind : uint8_t { None, Bool, Int, Float, String, List, Tuple, Dict };

struct Object {
  Kind kind = Kind::None;
  int64_t number = 0;           // Int, Bool
  uint32_t begin = 0, size = 0; // String: its bytes in the file
  std::vector<uint32_t> items;  // List, Tuple: the items; Dict: key, value, key, value, …
};

bool container(Kind k) { return k == Kind::List || k == Kind::Tuple || k == Kind::Dict; }

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "a bool";
    case Kind::Int: return "an integer";
    case Kind::Float: return "a float";
    case Kind::String: return "a string";
    case Kind::List: return "a list";
    case Kind::Tuple: return "a tuple";
    case Kind::Dict: return "a dict";
  }
  return "?";
}

const char* kOnlyPlain = ": Stepformer reads only plain dicts, lists, strings and integers and never runs code in a pickle";

// The opcodes refused by name, with what they would do.
struct Refused {
  unsigned char code;
  const char* name;
  const char* does;
};
constexpr Refused kRefused[] = {
    {'c', "GLOBAL", "imports a name"},
    {0x93, "STACK_GLOBAL", "imports a name"},
    {'R', "REDUCE", "calls a function"},
    {'b', "BUILD", "sets an object's state"},
    {'i', "INST", "creates an object of a class"},
    {'o', "OBJ", "creates an object of a class"},
    {0x81, "NEWOBJ", "creates an object of a class"},
    {0x92, "NEWOBJ_EX", "creates an object of a class"},
    {'P', "PERSID", "refers to an object outside the pickle"},
    {'Q', "BINPERSID", "refers to an object outside the pickle"},
    {0x82, "EXT1", "imports a registered name"},
    {0x83, "EXT2", "imports a registered name"},
    {0x84, "EXT4", "imports a registered name"},
    {0x97, "NEXT_BUFFER", "reads an out-of-band buffer"},
    {0x98, "READONLY_BUFFER", "reads an out-of-band buffer"},
    {'B', "BINBYTES", "holds bytes"},
    {'C', "SHORT_BINBYTES", "holds bytes"},
    {0x8e, "BINBYTES8", "holds bytes"},
    {0x96, "BYTEARRAY8", "holds bytes"},
    {'T', "BINSTRING", "holds a Python 2 string"},
    {'U', "SHORT_BINSTRING", "holds a Python 2 string"},
    {0x8f, "EMPTY_SET", "builds a set"},
    {0x90, "ADDITEMS", "builds a set"},
    {0x91, "FROZENSET", "builds a set"},
    {'2', "DUP", "duplicates the top of the stack"},
    {0x8b, "LONG4", "holds an integer of up to 2³² bytes"},
};
// Protocol 0's text opcodes: never written by Python 3 at protocol 2 and above.
constexpr Refused kText[] = {
    {'I', "INT", ""}, {'L', "LONG", ""}, {'F', "FLOAT", ""}, {'S', "STRING", ""}, {'V', "UNICODE", ""},
    {'p', "PUT", ""}, {'g', "GET", ""}, {'l', "LIST", ""}, {'d', "DICT", ""},
};

class Machine {
 public:
  Machine(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  // Runs to STOP; the index of the object it returns.
  uint32_t run() {
    while (true) {
      if (at_ >= bytes_.size()) fail("ends at byte " + std::to_string(at_) + " without the STOP opcode: the file is truncated");
      op_at_ = at_;
      const unsigned char op = static_cast<unsigned char>(bytes_[at_++]);
      if (op == '.') break;
      step(op);
    }
    if (stack_.size() != 1 || !marks_.empty())
      fail("leaves " + std::to_string(stack_.size()) + " objects and " + std::to_string(marks_.size()) +
           " marks at STOP (one object and no mark in a pickle Python writes)");
    return stack_.back();
  }

  const Object& object(uint32_t i) const { return objects_[i]; }
  std::string_view text(const Object& o) const { return bytes_.substr(o.begin, o.size); }
  [[noreturn]] void fail(const std::string& what) const { throw Error(name_ + " " + what); }

 private:
  void step(unsigned char op) {
    switch (op) {
      case 0x80: take(1); return;  // PROTO n
      case 0x95: take(8); return;  // FRAME: a length hint; the opcodes inside are read one by one
      case '(': open_mark(); return;
      case '0': pop(); return;
      case '1': close_mark(); return;
      case '}': push_new(Kind::Dict); return;
      case ']': push_new(Kind::List); return;
      case ')': push_new(Kind::Tuple); return;
      case 't': tuple_of(close_mark()); return;
      case 0x85: case 0x86: case 0x87: tuple_of(pop_n(op - 0x84)); return;
      case 's': add_to(Kind::Dict, pop_n(2), "SETITEM"); return;
      case 'u': add_to(Kind::Dict, close_mark(), "SETITEMS"); return;
      case 'a': add_to(Kind::List, pop_n(1), "APPEND"); return;
      case 'e': add_to(Kind::List, close_mark(), "APPENDS"); return;
      case 'J': integer(static_cast<int32_t>(little(4))); return;
      case 'K': integer(static_cast<int64_t>(little(1))); return;
      case 'M': integer(static_cast<int64_t>(little(2))); return;
      case 0x8a: long1(); return;
      case 'N': push_new(Kind::None); return;
      case 0x88: case 0x89: push_new(Kind::Bool).number = op == 0x88; return;
      case 'G': take(8); push_new(Kind::Float); return;  // its value is never needed
      case 0x8c: string(little(1)); return;
      case 'X': string(little(4)); return;
      case 0x8d: string(little(8)); return;
      case 'q': put(little(1)); return;
      case 'r': put(little(4)); return;
      case 0x94: put(memo_.size()); return;
      case 'h': get(little(1)); return;
      case 'j': get(little(4)); return;
      default: refuse(op);
    }
  }

  [[noreturn]] void refuse(unsigned char op) const {
    for (const Refused& r : kRefused)
      if (r.code == op) fail("uses pickle opcode " + std::string(r.name) + " (" + r.does + ") at byte " + std::to_string(op_at_) + kOnlyPlain);
    for (const Refused& r : kText)
      if (r.code == op)
        fail("uses pickle opcode " + std::string(r.name) + " at byte " + std::to_string(op_at_) +
             ", protocol 0's text form, which Stepformer does not read: save it again at protocol 2 or higher "
             "(python3 -c \"import pickle; m = pickle.load(open('meta.pkl', 'rb')); pickle.dump(m, open('meta.pkl', 'wb'), protocol=4)\")");
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", op);
    fail("has byte " + std::string(hex) + " at byte " + std::to_string(op_at_) + ", which is no pickle opcode Stepformer reads" + kOnlyPlain);
  }

  // The next n bytes of the opcode's argument.
  std::string_view take(uint64_t n) {
    if (n > bytes_.size() - at_)
      fail("is truncated: the opcode at byte " + std::to_string(op_at_) + " needs " + std::to_string(n) +
           " bytes of argument but " + std::to_string(bytes_.size() - at_) + " remain");
    const std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  uint64_t little(int n) {
    const std::string_view s = take(n);
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[i]);
    return v;
  }

  Object& push_new(Kind k) {
    // A meta.pkl spends at least 2 bytes on each object (an id is K + 1 byte, a token 2 bytes or
    // more); a file of 1-byte objects (None, empty lists) is refused before it costs 48 bytes a byte.
    if (objects_.size() >= bytes_.size() / 2 + 16)
      fail("holds more objects than bytes / 2 (at byte " + std::to_string(op_at_) + "): it is not a meta.pkl");
    objects_.push_back(Object{k, 0, 0, 0, {}});
    push(static_cast<uint32_t>(objects_.size() - 1));
    return objects_.back();
  }
  void push(uint32_t i) {
    if (container(objects_[i].kind)) ++open_containers_;
    check_depth();
    stack_.push_back(i);
  }
  uint32_t pop() {
    if (stack_.size() <= floor()) fail("pops an empty stack at byte " + std::to_string(op_at_));
    const uint32_t i = stack_.back();
    stack_.pop_back();
    if (container(objects_[i].kind)) --open_containers_;
    return i;
  }
  // The objects above the last mark (none may be taken from below it).
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<uint32_t> pop_n(size_t n) {
    std::vector<uint32_t> out(n);
    for (size_t k = n; k-- > 0;) out[k] = pop();
    return out;
  }
  void open_mark() {
    marks_.push_back(stack_.size());
    check_depth();
  }
  std::vector<uint32_t> close_mark() {
    if (marks_.empty()) fail("uses a mark at byte " + std::to_string(op_at_) + " where none was set");
    std::vector<uint32_t> out;
    const size_t n = stack_.size() - marks_.back();
    marks_.pop_back();
    out = pop_n(n);
    return out;
  }
  void check_depth() const {
    if (open_containers_ + static_cast<int>(marks_.size()) > kMaxPickleDepth)
      fail("nests containers more than " + std::to_string(kMaxPickleDepth) + " deep (at byte " + std::to_string(op_at_) +
           "); meta.pkl is a dict of dicts");
  }

  void tuple_of(std::vector<uint32_t> items) { push_new(Kind::Tuple).items = std::move(items); }
  // SETITEM(S) or APPEND(S): the items into the object now on top of the stack.
  void add_to(Kind want, const std::vector<uint32_t>& items, const char* opcode) {
    if (want == Kind::Dict && items.size() % 2) fail(std::string("has an odd number of keys and values for ") + opcode);
    if (stack_.size() <= floor()) fail(std::string("has nothing to add to at ") + opcode + ", byte " + std::to_string(op_at_));
    Object& target = objects_[stack_.back()];
    if (target.kind != want)
      fail(std::string("adds to ") + kind_name(target.kind) + " with " + opcode + " at byte " + std::to_string(op_at_));
    target.items.insert(target.items.end(), items.begin(), items.end());
  }

  void integer(int64_t v) { push_new(Kind::Int).number = v; }
  void long1() {
    const uint64_t n = little(1);
    if (n > 8) fail("holds an integer of " + std::to_string(n) + " bytes at byte " + std::to_string(op_at_) + " (token ids fit in 8)");
    const std::string_view s = take(n);
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | static_cast<unsigned char>(s[i]);
    if (n > 0 && n < 8 && (static_cast<unsigned char>(s[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);  // two's complement
    integer(static_cast<int64_t>(v));
  }
  void string(uint64_t n) {
    const size_t begin = at_;
    if (n > bytes_.size() - at_)
      fail("declares a string of " + std::to_string(n) + " bytes at byte " + std::to_string(op_at_) + " but only " +
           std::to_string(bytes_.size() - at_) + " bytes remain: the file is truncated or damaged");
    const std::string s(take(n));
    for (size_t i = 0; i < s.size();) {
      char32_t cp = 0;
      i += utf8_next(s, i, cp);
      if (cp == kInvalidUtf8) fail("holds a string that is not valid UTF-8 at byte " + std::to_string(op_at_));
    }
    Object& o = push_new(Kind::String);
    o.begin = static_cast<uint32_t>(begin);
    o.size = static_cast<uint32_t>(n);
  }
  void put(uint64_t key) {
    if (stack_.size() <= floor()) fail("memoizes an empty stack at byte " + std::to_string(op_at_));
    memo_[key] = stack_.back();
  }
  void get(uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) fail("refers to memo entry " + std::to_string(key) + " at byte " + std::to_string(op_at_) + ", which was never stored");
    push(it->second);
  }

  std::string_view bytes_;
  std::string name_;
  size_t at_ = 0, op_at_ = 0;
  std::vector<Object> objects_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
  int open_containers_ = 0;
};

// The value under a string key of a dict, or nullptr.
const Object* lookup(const Machine& m, const Object& dict, std::string_view key) {
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Object& o = m.object(dict.items[k]);
    if (o.kind == Kind::String && m.text(o) == key) return &m.object(dict.items[k + 1]);
  }
  return nullptr;
}

// Copies out the tokens (id → token), at most `budget` bytes in all: a memo reference repeated
// cannot make more than the file holds.
class TokenSink {
 public:
  TokenSink(const Machine& m, size_t budget) : m_(m), budget_(budget) {}
  void add(const Object& id, const Object& token, const char* what) {
    if (id.kind != Kind::Int || token.kind != Kind::String)
      m_.fail(std::string("has an entry of ") + kind_name(id.kind) + " → " + kind_name(token.kind) + " in " + what +
              " (ids are integers, tokens strings)");
    if (token.size > budget_) m_.fail(std::string("refers to its strings more often than it holds them, in ") + what);
    budget_ -= token.size;
    if (!tokens_.emplace(id.number, std::string(m_.text(token))).second)
      m_.fail("gives id " + std::to_string(id.number) + " twice in " + what);
  }
  std::vector<std::string> list(const char* what) const {
    std::vector<std::string> out;
    for (const auto& [id, token] : tokens_) {
      if (id != static_cast<int64_t>(out.size()))
        m_.fail(std::string("has no token for id ") + std::to_string(out.size()) + " in " + what +
                " (ids must be 0, 1, 2, … each once)");
      out.push_back(token);
    }
    return out;
  }

 private:
  const Machine& m_;
  size_t budget_;
  std::map<int64_t, std::string> tokens_;
};

std::vector<std::string> vocabulary(const Machine& m, const Object& top, size_t file_size) {
  if (top.kind != Kind::Dict) m.fail(std::string("holds ") + kind_name(top.kind) + ", not nanoGPT's dict {'vocab_size', 'itos', 'stoi'}");
  TokenSink sink(m, file_size);
  const char* what = "itos";
  if (const Object* itos = lookup(m, top, "itos")) {
    if (itos->kind == Kind::List) {
      Object index{Kind::Int, 0, 0, 0, {}};
      for (uint32_t item : itos->items) {
        sink.add(index, m.object(item), "itos");
        ++index.number;
      }
    } else if (itos->kind == Kind::Dict) {
      for (size_t k = 0; k + 1 < itos->items.size(); k += 2) sink.add(m.object(itos->items[k]), m.object(itos->items[k + 1]), "itos");
    } else {
      m.fail(std::string("has ") + kind_name(itos->kind) + " as itos (a dict {0: 'a', …} or a list is expected)");
    }
  } else if (const Object* stoi = lookup(m, top, "stoi"); stoi && stoi->kind == Kind::Dict) {
    what = "stoi";
    for (size_t k = 0; k + 1 < stoi->items.size(); k += 2) sink.add(m.object(stoi->items[k + 1]), m.object(stoi->items[k]), "stoi");
  } else {
    m.fail("has neither 'itos' nor 'stoi': it is not nanoGPT's meta.pkl");
  }
  std::vector<std::string> tokens = sink.list(what);
  if (const Object* n = lookup(m, top, "vocab_size"); n && (n->kind != Kind::Int || n->number != static_cast<int64_t>(tokens.size())))
    m.fail("says vocab_size = " + (n->kind == Kind::Int ? std::to_string(n->number) : std::string(kind_name(n->kind))) +
           " but its " + what + " has " + std::to_string(tokens.size()) + " tokens");
  return tokens;
}

}  // namespace

std::vector<std::string> parse_meta_pkl(std::string_view bytes, const std::string& name) {
  if (bytes.size() > kMaxMetaPklBytes)
    throw Error(name + " is " + std::to_string(bytes.size()) + " bytes; a meta.pkl is at most " + std::to_string(kMaxMetaPklBytes) + " bytes");
  Machine m(bytes, name);
  const uint32_t top = m.run();
  return vocabulary(m, m.object(top), bytes.size());
}

std::vector<std::string> read_meta_pkl(const std::string& path) {
  return parse_meta_pkl(read_file(path, kMaxMetaPklBytes), path);
}

}  // namespace sf
