#!/usr/bin/env python3
"""pretok_groups.py - which pre-tokenizer names llama.cpp treats identically, read from its source.

  pretok_groups.py LLAMA_CPP_TREE ROWS.tsv      (ROWS: "name<TAB>sunny flags" per line)

llama.cpp's BPE vocab loader (src/llama-vocab.cpp) maps tokenizer.ggml.pre to a pre-tokenizer type
and flags in one if / else-if chain; names listed in the same branch (`tokenizer_pre == "a" ||
tokenizer_pre == "b" ...`) get the same type and flags, and nothing after the chain looks at the
name, so llama.cpp tokenizes a vocabulary identically under any of them. Prints "name<TAB>rep" for
each row: rep is the first row of its branch (the one llama.cpp must run); a name is its own rep
when it is SPM-style in sunny (not a BPE name there), is in no branch or in more than one, or occurs
in any other string literal of llama-vocab.cpp (e.g. the jina-v2 names that also set token
attributes): then nothing is assumed about it and llama.cpp runs it too. If any source file other
than llama-vocab.cpp (and the key table / the GGUF saver) reads the pre key, every name is its own
rep.
"""
import glob
import os
import re
import sys

tree, rows_path = sys.argv[1], sys.argv[2]
vocab = open(os.path.join(tree, "src", "llama-vocab.cpp"), encoding="utf-8").read()
lits = re.findall(r'"((?:[^"\\\n]|\\.)*)"', vocab)
readers = set()
for p in glob.glob(os.path.join(tree, "src", "*.cpp")) + glob.glob(os.path.join(tree, "src", "*.h")):
    if re.search(r"LLM_KV_TOKENIZER_PRE\b|get_tokenizer_pre|tokenizer\.ggml\.pre", open(p, encoding="utf-8", errors="replace").read()):
        readers.add(os.path.basename(p))
only_vocab = readers <= {"llama-vocab.cpp", "llama-vocab.h", "llama-arch.cpp", "llama-arch.h", "llama-model-saver.cpp"}
branches = re.findall(r'if\s*\(\s*((?:tokenizer_pre\s*==\s*"[^"]+"\s*(?:\|\|\s*)?)+)\)\s*\{', vocab)
if len(branches) < 40:
    sys.exit(f"pretok_groups: only {len(branches)} pre-type branches found in llama-vocab.cpp (its layout changed?)")
where = {}
for i, b in enumerate(branches):
    for n in re.findall(r'"([^"]+)"', b):
        where.setdefault(n, []).append(i)
rep = {}
for line in open(rows_path, encoding="utf-8"):
    if not line.strip():
        continue
    name, flags = (line.rstrip("\n").split("\t") + [""])[:2]
    b = where.get(name, [])
    # the name's own chain occurrence is its only appearance in any literal
    alone = only_vocab and len(b) == 1 and sum(name in l for l in lits) == 1
    key = ("branch", b[0]) if alone and "SPM_STYLE" not in flags else ("own", name)
    rep.setdefault(key, name)
    print(f"{name}\t{rep[key]}")
