#!/usr/bin/python3
"""rwkv_ref_tok.py - a reference RWKV world tokenizer, independent of sunny's C code.

  rwkv_ref_tok.py rwkv_vocab_v20230424.txt CORPUS > ids.jsonl

Reads the vocab file with Python's own ast.literal_eval (as RWKV's tokenizer and llama.cpp's
converter do), ids shifted by nothing (line ID = token id; id 0 is <s>), then tokenizes every
non-comment, non-empty corpus line, unescaped like tok_dump --corpus, by greedy longest match over UTF-8 bytes. One JSON id array per line."""
import ast
import json
import sys

vocab = {}
maxlen = 1
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.rstrip("\n").split(" ")
    tid, lit = int(parts[0]), ast.literal_eval(" ".join(parts[1:-1]))
    b = lit.encode("utf-8") if isinstance(lit, str) else lit
    vocab[b] = tid
    maxlen = max(maxlen, len(b))
# llama.cpp's trie holds every GGUF token: also <s> (id 0) and the [PADi] fillers up to 65536
vocab[b"<s>"] = 0
for i in range(len(vocab), 65536):
    vocab[f"[PAD{i}]".encode()] = i
maxlen = max(maxlen, 10)
for raw in open(sys.argv[2], encoding="utf-8"):
    s = raw.rstrip("\n")
    if s.startswith("#") or s == "":
        continue
    # tok_dump --corpus escapes: \n \t \r \\ \#
    out_s, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "ntr\\#":
            out_s.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "#": "#"}[s[i + 1]])
            i += 2
        else:
            out_s.append(s[i])
            i += 1
    s = "".join(out_s)
    b, i, out = s.encode("utf-8"), 0, []
    while i < len(b):
        for n in range(min(maxlen, len(b) - i), 0, -1):
            t = vocab.get(b[i:i + n])
            if t is not None:
                out.append(t)
                i += n
                break
        else:
            raise SystemExit(f"no token for byte {b[i]:#x}")
    print(json.dumps(out, separators=(",", ":")))
