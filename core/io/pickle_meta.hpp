// nanoGPT's meta.pkl ({'vocab_size': N, 'itos': {0: 'a', …}, 'stoi': {'a': 0, …}}), read by a
// pickle machine that knows only the opcodes of plain data and never runs anything
// (docs/ecosystem.md, "meta.pkl"):
//   PROTO, FRAME, STOP, MARK, POP, POP_MARK; EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, TUPLE, TUPLE1–3,
//   SETITEM, SETITEMS, APPEND, APPENDS; BININT, BININT1, BININT2, LONG1 (≤ 8 bytes), NONE,
//   NEWTRUE, NEWFALSE, BINFLOAT; SHORT_BINUNICODE, BINUNICODE, BINUNICODE8 (valid UTF-8);
//   BINPUT, LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET.
// That is every opcode Python's pickle writes for such a dict at protocols 2–5 (and 1). Any other
// opcode is refused by name with what it would do: GLOBAL and STACK_GLOBAL import a name,
// REDUCE calls a function, BUILD sets an object's state, INST, OBJ, NEWOBJ create objects,
// PERSID refers to an outside object; protocol 0's text opcodes are refused with the command
// that re-saves the file.
//
// Bounded by the file: at most one object per 2 bytes of it (48 bytes each), items and memo
// entries at most one per opcode, strings views into the bytes until the vocabulary is copied out
// (at most the file's size in all), nesting at most kMaxPickleDepth: a hostile file costs at most
// a few tens of bytes per byte of it, and a file over kMaxMetaPklBytes is refused unread.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace sf {

// Containers open at once (on the stack or marked): meta.pkl needs 3.
constexpr int kMaxPickleDepth = 100;
// The largest meta.pkl read: nanoGPT's are under 1 KiB for characters, ~1 MiB for GPT-2's tokens.
constexpr size_t kMaxMetaPklBytes = size_t{64} << 20;

// The token list of meta.pkl: itos (a dict {0: tok, 1: tok, …} or a list), or stoi inverted when
// itos is absent; checked against vocab_size when present. Throws sf::Error naming the file, the
// opcode (and byte offset) or the entry at fault.
std::vector<std::string> parse_meta_pkl(std::string_view bytes, const std::string& name);
std::vector<std::string> read_meta_pkl(const std::string& path);

}  // namespace sf
