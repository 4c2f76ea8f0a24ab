#!/usr/bin/python3
"""An independent BERT WordPiece tokenizer, the oracle for Stepformer's (core/tokenizers/wordpiece.cpp).

Written from Hugging Face transformers' BasicTokenizer + WordpieceTokenizer (tokenization_bert.py)
with Python's unicodedata: clean the text, split off CJK characters, whitespace-split, lowercase and
strip accents (NFD, drop Mn), split on punctuation, then greedy longest-match-first WordPiece with
"##" continuations; words over 100 characters are [UNK]. The special tokens written in the text
([PAD] [UNK] [CLS] [SEP] [MASK]) are cut out first, as transformers' added-tokens trie does.
(Recent transformers versions also NFC-compose before the whitespace split; the corpus's cased run
has no decomposed characters, so that makes no difference here.)

Writes tests/data/tokenizers/wordpiece_expected.json: for each text of wordpiece_corpus.json its
ids (0-based, as vocab.txt numbers them, line number − 1), uncased and cased.
Run: /usr/bin/python3 tests/oracle/wordpiece_oracle.py
"""
import json
import os
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "tokenizers")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokenize(text, lower):
    cleaned = []
    for ch in text:
        if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
            continue
        cleaned.append(" " if is_whitespace(ch) else ch)
    text = "".join(" " + ch + " " if is_cjk(ord(ch)) else ch for ch in cleaned)
    words = []
    for token in text.split():
        if lower:
            token = token.lower()
            token = "".join(c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn")
        current = ""
        for ch in token:
            if is_punctuation(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return " ".join(words).split()


def wordpiece(word, vocab):
    if len(word) > 100:
        return [vocab["[UNK]"]]
    out, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = ("##" if start > 0 else "") + word[start:end]
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return [vocab["[UNK]"]]
        out.append(vocab[found])
        start = end
    return out


def split_specials(text):
    parts, plain, i = [], 0, 0
    while i < len(text):
        hit = next((s for s in SPECIALS if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        parts.append((text[plain:i], False))
        parts.append((hit, True))
        i += len(hit)
        plain = i
    parts.append((text[plain:], False))
    return parts


def encode(text, vocab, lower):
    ids = []
    for part, special in split_specials(text):
        if special:
            ids.append(vocab[part])
        else:
            for w in basic_tokenize(part, lower):
                ids.extend(wordpiece(w, vocab))
    return ids


def main():
    vocab = {}
    with open(os.path.join(DATA, "bert", "vocab.txt"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab[line.rstrip("\n")] = i  # the last of repeated lines wins, as transformers' load_vocab
    with open(os.path.join(DATA, "wordpiece_corpus.json"), encoding="utf-8") as f:
        texts = json.load(f)
    cases = [{"text": t, "uncased": encode(t, vocab, True), "cased": encode(t, vocab, False)} for t in texts]
    out = {"generator": "tests/oracle/wordpiece_oracle.py", "vocab": "bert/vocab.txt", "cases": cases}
    with open(os.path.join(DATA, "wordpiece_expected.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", len(cases), "cases")


if __name__ == "__main__":
    main()
