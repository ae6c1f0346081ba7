#!/usr/bin/env python3
"""rt_hf2gguf.py - a minimal HF fixture -> f32 GGUF writer for the runtime's own tests.

The runtime's parity tests need GGUFs that llama.cpp loads, before (and independently of) our
converter. This writes one the way llama.cpp's convert_hf_to_gguf.py lays it out for the fixture
families of tests/fixtures/gen_model.py: llama (llama3, mistral: Q/K rows permuted for llama's
normal RoPE; Llama-3 rope_freqs from rope_scaling), qwen2 (biases), qwen3 (q/k norms, key_length).
All tensors are F32; tests/tools/rt_quantize (C, using runtime/quants/ggml_types.h) makes the other types.
Tokenizer metadata comes from the fixture's tokenizer.json (gpt2 BPE for llama3/qwen, SPM for
mistral) - enough for llama.cpp to load the vocabulary; prompts are given as ids.

  /usr/bin/python3 tests/tools/rt_hf2gguf.py HF_DIR OUT.gguf
"""
import json
import math
import os
import struct
import sys

import numpy as np

GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STR, GGUF_ARR = 4, 5, 6, 7, 8, 9


def read_safetensors(d):
    out = {}
    files = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
    for fn in files:
        with open(os.path.join(d, fn), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            hdr = json.loads(f.read(n))
            base = 8 + n
            raw = np.memmap(os.path.join(d, fn), dtype=np.uint8, mode="r")
        for name, info in hdr.items():
            if name == "__metadata__":
                continue
            a, b = info["data_offsets"]
            buf = np.asarray(raw[base + a:base + b])
            dt = info["dtype"]
            if dt == "F32":
                arr = buf.view("<f4")
            elif dt == "F16":
                arr = buf.view("<f2").astype(np.float32)
            elif dt == "BF16":
                arr = (buf.view("<u2").astype(np.uint32) << 16).view(np.float32)
            else:
                raise SystemExit(f"{fn}: {name}: dtype {dt} not handled")
            out[name] = arr.reshape(info["shape"]).astype(np.float32)
    return out


class Writer:
    def __init__(self):
        self.kv = []
        self.tensors = []

    def _str(self, s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    def add(self, key, typ, val):
        body = self._str(key) + struct.pack("<I", typ)
        if typ == GGUF_U32:
            body += struct.pack("<I", val)
        elif typ == GGUF_I32:
            body += struct.pack("<i", val)
        elif typ == GGUF_F32:
            body += struct.pack("<f", val)
        elif typ == GGUF_BOOL:
            body += struct.pack("<B", 1 if val else 0)
        elif typ == GGUF_STR:
            body += self._str(val)
        else:
            raise ValueError(typ)
        self.kv.append(body)

    def add_arr(self, key, elem, vals):
        body = self._str(key) + struct.pack("<IIQ", GGUF_ARR, elem, len(vals))
        if elem == GGUF_STR:
            body += b"".join(self._str(v) for v in vals)
        elif elem == GGUF_F32:
            body += np.asarray(vals, dtype="<f4").tobytes()
        elif elem == GGUF_I32:
            body += np.asarray(vals, dtype="<i4").tobytes()
        else:
            raise ValueError(elem)
        self.kv.append(body)

    def tensor(self, name, arr):
        self.tensors.append((name, np.ascontiguousarray(arr, dtype="<f4")))

    def write(self, path):
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)))
            for b in self.kv:
                f.write(b)
            off = 0
            for name, a in self.tensors:
                ne = list(reversed(a.shape))
                f.write(self._str(name) + struct.pack("<I", len(ne)))
                f.write(struct.pack("<" + "Q" * len(ne), *ne))
                f.write(struct.pack("<IQ", 0, off))
                off += (a.nbytes + 31) // 32 * 32
            pad = (32 - f.tell() % 32) % 32
            f.write(b"\0" * pad)
            for _, a in self.tensors:
                f.write(a.tobytes())
                f.write(b"\0" * ((32 - a.nbytes % 32) % 32))
        os.replace(tmp, path)


def permute(w, n_head):
    # HF rotate_half layout -> GGUF llama layout (interleaved pairs), as convert_hf_to_gguf does
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_freqs(cfg, head_dim):
    rs = cfg["rope_scaling"]
    base = cfg.get("rope_theta", 10000.0)
    factor = rs.get("factor", 8.0)
    low, high = rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    low_wl, high_wl = old / low, old / high
    out = []
    for i in range(0, head_dim, 2):
        freq = 1.0 / (base ** (i / head_dim))
        wl = 2 * math.pi / freq
        if wl < high_wl:
            out.append(1.0)
        elif wl > low_wl:
            out.append(factor)
        else:
            smooth = (old / wl - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.asarray(out, dtype=np.float32)


def vocab(w, d, arch, n_vocab):
    tj = json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))
    tc = {}
    if os.path.exists(os.path.join(d, "tokenizer_config.json")):
        tc = json.load(open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8"))
    model = tj["model"]
    toks = [None] * n_vocab
    for t, i in model["vocab"].items():
        if i < n_vocab:
            toks[i] = t
    special = set()
    for a in tj.get("added_tokens", []):
        if a["id"] < n_vocab:
            toks[a["id"]] = a["content"]
            if a.get("special"):
                special.add(a["id"])
    spm = model.get("byte_fallback", False)
    types = []
    for i, t in enumerate(toks):
        if t is None:
            toks[i] = f"[PAD{i}]"
            types.append(5 if not spm else 1)
        elif i in special:
            types.append(3)
        elif spm and t.startswith("<0x") and len(t) == 6:
            types.append(6)
        elif spm and t == "<unk>":
            types.append(2)
        else:
            types.append(1)
    cfg = json.load(open(os.path.join(d, "config.json")))
    if spm:
        w.add("tokenizer.ggml.model", GGUF_STR, "llama")
        w.add_arr("tokenizer.ggml.tokens", GGUF_STR, toks)
        w.add_arr("tokenizer.ggml.scores", GGUF_F32, [-float(i) for i in range(n_vocab)])
        w.add_arr("tokenizer.ggml.token_type", GGUF_I32, types)
        w.add("tokenizer.ggml.bos_token_id", GGUF_U32, 1)
        w.add("tokenizer.ggml.eos_token_id", GGUF_U32, 2)
        w.add("tokenizer.ggml.unknown_token_id", GGUF_U32, 0)
        w.add("tokenizer.ggml.add_bos_token", GGUF_BOOL, True)
        w.add("tokenizer.ggml.add_eos_token", GGUF_BOOL, False)
    else:
        merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
        w.add("tokenizer.ggml.model", GGUF_STR, "gpt2")
        w.add("tokenizer.ggml.pre", GGUF_STR, "llama-bpe" if arch == "llama" else "qwen2")
        w.add_arr("tokenizer.ggml.tokens", GGUF_STR, toks)
        w.add_arr("tokenizer.ggml.token_type", GGUF_I32, types)
        w.add_arr("tokenizer.ggml.merges", GGUF_STR, merges)
        bos, eos = cfg.get("bos_token_id"), cfg.get("eos_token_id")
        if isinstance(eos, list):
            eos = eos[0]
        if bos is not None:
            w.add("tokenizer.ggml.bos_token_id", GGUF_U32, bos)
        if eos is not None:
            w.add("tokenizer.ggml.eos_token_id", GGUF_U32, eos)
        w.add("tokenizer.ggml.add_bos_token", GGUF_BOOL, arch == "llama")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    d, out = sys.argv[1], sys.argv[2]
    cfg = json.load(open(os.path.join(d, "config.json")))
    mt = cfg["model_type"]
    arch = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3"}[mt]
    H, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    nh, nkv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    hd = cfg.get("head_dim") or H // nh
    V = cfg["vocab_size"]
    t = read_safetensors(d)
    w = Writer()
    w.add("general.architecture", GGUF_STR, arch)
    w.add("general.name", GGUF_STR, os.path.basename(os.path.normpath(d)))
    w.add("general.file_type", GGUF_U32, 0)
    w.add(f"{arch}.context_length", GGUF_U32, cfg.get("max_position_embeddings", 4096))
    w.add(f"{arch}.embedding_length", GGUF_U32, H)
    w.add(f"{arch}.block_count", GGUF_U32, L)
    w.add(f"{arch}.feed_forward_length", GGUF_U32, cfg["intermediate_size"])
    w.add(f"{arch}.attention.head_count", GGUF_U32, nh)
    w.add(f"{arch}.attention.head_count_kv", GGUF_U32, nkv)
    w.add(f"{arch}.rope.freq_base", GGUF_F32, float(cfg.get("rope_theta", 10000.0)))
    w.add(f"{arch}.attention.layer_norm_rms_epsilon", GGUF_F32, float(cfg.get("rms_norm_eps", 1e-6)))
    if arch == "qwen3":
        w.add(f"{arch}.attention.key_length", GGUF_U32, hd)
        w.add(f"{arch}.attention.value_length", GGUF_U32, hd)
    if arch == "llama":
        w.add(f"{arch}.rope.dimension_count", GGUF_U32, hd)
        w.add(f"{arch}.vocab_size", GGUF_U32, V)
    vocab(w, d, arch, V)

    w.tensor("token_embd.weight", t["model.embed_tokens.weight"])
    if arch == "llama" and (cfg.get("rope_scaling") or {}).get("rope_type") == "llama3":
        w.tensor("rope_freqs.weight", llama3_rope_freqs(cfg, hd))
    for i in range(L):
        p = f"model.layers.{i}."
        q = t[p + "self_attn.q_proj.weight"]
        k = t[p + "self_attn.k_proj.weight"]
        if arch == "llama":
            q, k = permute(q, nh), permute(k, nkv)
        w.tensor(f"blk.{i}.attn_norm.weight", t[p + "input_layernorm.weight"])
        w.tensor(f"blk.{i}.attn_q.weight", q)
        w.tensor(f"blk.{i}.attn_k.weight", k)
        w.tensor(f"blk.{i}.attn_v.weight", t[p + "self_attn.v_proj.weight"])
        for b, n in (("q", "q"), ("k", "k"), ("v", "v")):
            if p + f"self_attn.{b}_proj.bias" in t:
                w.tensor(f"blk.{i}.attn_{n}.bias", t[p + f"self_attn.{b}_proj.bias"])
        if p + "self_attn.q_norm.weight" in t:
            w.tensor(f"blk.{i}.attn_q_norm.weight", t[p + "self_attn.q_norm.weight"])
            w.tensor(f"blk.{i}.attn_k_norm.weight", t[p + "self_attn.k_norm.weight"])
        w.tensor(f"blk.{i}.attn_output.weight", t[p + "self_attn.o_proj.weight"])
        w.tensor(f"blk.{i}.ffn_norm.weight", t[p + "post_attention_layernorm.weight"])
        w.tensor(f"blk.{i}.ffn_gate.weight", t[p + "mlp.gate_proj.weight"])
        w.tensor(f"blk.{i}.ffn_up.weight", t[p + "mlp.up_proj.weight"])
        w.tensor(f"blk.{i}.ffn_down.weight", t[p + "mlp.down_proj.weight"])
    w.tensor("output_norm.weight", t["model.norm.weight"])
    if "lm_head.weight" in t and not cfg.get("tie_word_embeddings", False):
        w.tensor("output.weight", t["lm_head.weight"])
    w.write(out)


if __name__ == "__main__":
    main()
