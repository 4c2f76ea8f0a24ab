#!/usr/bin/env python3
"""Writes assets/lessons/flash-default.safetensors, lesson 12's model: assets/default.safetensors with
"attention": "flash", "block_r": 3, "block_c": 3 in its config (Algorithm 4-F over 3 x 3 blocks) and the
same tensors, byte for byte. Only the header's JSON changes; it is padded with spaces to a multiple of 8
bytes, as safetensors allows. Run from the repository root: python3 scripts/make_flash_lesson_model.py"""
import json
import struct

SRC, DST = "assets/default.safetensors", "assets/lessons/flash-default.safetensors"

data = open(SRC, "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
meta = header["__metadata__"]
config = json.loads(meta["config"])
config.update({"attention": "flash", "block_r": 3, "block_c": 3})
meta["config"] = json.dumps(config, separators=(",", ":"), ensure_ascii=False)
meta["created_by"] = 'assets/default.safetensors with "attention": "flash", "block_r": 3, "block_c": 3 (the same θ)'
out = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
out += b" " * ((8 - len(out) % 8) % 8)
with open(DST, "wb") as f:
    f.write(struct.pack("<Q", len(out)) + out + data[8 + n:])
