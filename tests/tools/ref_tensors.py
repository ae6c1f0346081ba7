#!/usr/bin/env python3
"""ref_tensors.py - check that the tensor bytes sunny-convert wrote equal llama.cpp's converter's.

  ref_tensors.py GGUF_PY_DIR HF_DIR OUR.gguf OUTTYPE [OUR2.gguf OUTTYPE2 ...]   (f32 f16 bf16 q8_0)
  ref_tensors.py GGUF_PY_DIR --same A.gguf B.gguf           (byte-compare every tensor of two GGUFs)

The reference is llama.cpp's own Python package gguf-py (quants.quantize = the code its
convert_hf_to_gguf.py runs), loaded from the llama.cpp tree that node-llama-cpp ships. The HF->GGUF
name map, the Q/K permutation and the type rules are re-derived here from the reference notes,
independently of sunny's C code. Prints one line per mismatch and a summary; exit 1 on mismatch.
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import gguf  # noqa: E402
from gguf import GGMLQuantizationType as T  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_fast import reader  # noqa: E402  (gguf-py's GGUFReader, fast on big vocabularies)

LAYER_MAP = {
    "input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias", "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight", "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight", "mlp.down_proj.weight": "ffn_down.weight",
}
TOP_MAP = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
           "lm_head.weight": "output.weight"}


def load_safetensors(d):
    files = sorted(f for f in os.listdir(d) if f.endswith(".safetensors"))
    out = {}
    for fn in files:
        b = open(os.path.join(d, fn), "rb").read()
        n = struct.unpack("<Q", b[:8])[0]
        h = json.loads(b[8:8 + n])
        base = 8 + n
        for k, v in h.items():
            if k == "__metadata__":
                continue
            s, e = v["data_offsets"]
            dt = v["dtype"]
            if dt == "BF16":
                raw = np.frombuffer(b[base + s:base + e], dtype="<u2")
                arr = (raw.astype(np.uint32) << 16).view(np.float32)  # the converter upcasts bf16 to f32
            elif dt == "F16":
                arr = np.frombuffer(b[base + s:base + e], dtype="<f2")
            else:
                arr = np.frombuffer(b[base + s:base + e], dtype="<f4")
            out[k] = arr.reshape(v["shape"])
    return out


def permute(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def expected(hf_dir, outtype):
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    arch = cfg["architectures"][0]
    W = load_safetensors(hf_dir)
    res = {}
    for k, v in W.items():
        if k in TOP_MAP:
            name = TOP_MAP[k]
        else:
            p = k.split(".")
            name = f"blk.{p[2]}." + LAYER_MAP[".".join(p[3:])]
        if arch in ("LlamaForCausalLM", "MistralForCausalLM"):
            if k.endswith("q_proj.weight") or k.endswith("q_proj.bias"):
                v = permute(v, cfg["num_attention_heads"])
            if k.endswith("k_proj.weight") or k.endswith("k_proj.bias"):
                v = permute(v, cfg.get("num_key_value_heads", cfg["num_attention_heads"]))
        if v.dtype == np.float16 and outtype != "f16":
            v = v.astype(np.float32)
        n_dims = v.ndim
        if n_dims <= 1 or name.endswith("_norm.weight") or not name.endswith(".weight"):
            qt = T.F32
        else:
            qt = {"f32": T.F32, "f16": T.F16, "bf16": T.BF16, "q8_0": T.Q8_0}[outtype]
            if qt == T.Q8_0 and v.shape[-1] % 32:
                qt = T.F16
        if qt == T.F32:
            data = np.ascontiguousarray(v, dtype=np.float32)
        elif qt == T.F16:
            data = np.ascontiguousarray(v.astype(np.float16))
        else:
            data = gguf.quants.quantize(np.ascontiguousarray(v, dtype=np.float32), qt)
        res[name] = (int(qt), data.tobytes())
    if cfg.get("rope_scaling", {}) and cfg["rope_scaling"].get("rope_type") == "llama3":
        res["rope_freqs.weight"] = None  # generated; checked separately by the unit tests
    return res


def tensors_of(path):
    r = reader(gguf, path)
    return {t.name: (int(t.tensor_type), bytes(t.data.tobytes())) for t in r.tensors}


def main():
    if sys.argv[2] == "--same":
        a, b = tensors_of(sys.argv[3]), tensors_of(sys.argv[4])
        bad = 0
        for n in sorted(set(a) | set(b)):
            if n not in a or n not in b:
                print(f"MISSING {n} in {'first' if n not in a else 'second'}"); bad += 1
            elif a[n][0] != b[n][0]:
                print(f"TYPE {n}: {T(a[n][0]).name} vs {T(b[n][0]).name}"); bad += 1
            elif a[n][1] != b[n][1]:
                print(f"BYTES {n} ({T(a[n][0]).name}) differ"); bad += 1
        print(f"{len(a)} tensors compared, {bad} mismatches")
        return 1 if bad else 0
    hf, rest = sys.argv[2], sys.argv[3:]
    total_bad = 0
    for ours, outtype in zip(rest[0::2], rest[1::2]):
        exp, got = expected(hf, outtype), tensors_of(ours)
        bad = 0
        for n, e in sorted(exp.items()):
            if n not in got:
                print(f"MISSING {n}"); bad += 1; continue
            if e is None:
                continue
            if got[n][0] != e[0]:
                print(f"TYPE {n}: ours {T(got[n][0]).name}, llama.cpp {T(e[0]).name}"); bad += 1
            elif got[n][1] != e[1]:
                i = next(i for i in range(min(len(got[n][1]), len(e[1]))) if got[n][1][i] != e[1][i]) \
                    if len(got[n][1]) == len(e[1]) else -1
                print(f"BYTES {n} ({T(e[0]).name}): first difference at byte {i}"); bad += 1
        for n in sorted(set(got) - set(exp)):
            print(f"EXTRA {n}"); bad += 1
        print(f"{outtype}: {len(exp)} tensors compared, {bad} mismatches")
        total_bad += bad
    return 1 if total_bad else 0

if __name__ == "__main__":
    sys.exit(main())
