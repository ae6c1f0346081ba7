#!/usr/bin/python3
"""vocab_gguf.py - GGUF tokenizer-metadata helpers for tests/integration/test_vocab_llamacpp.sh.

  spm-model REF.gguf OUTDIR   rebuild a SentencePiece tokenizer.model (protobuf written by hand) from
                              the tokens/scores/token_type of a vocab GGUF that llama.cpp's converter
                              made from a real tokenizer.model (models/ggml-vocab-llama-spm.gguf), so
                              our SPM path can be checked against llama.cpp's output for that model.
  compare A.gguf B.gguf KEY.. exit 1 unless every KEY has the same type and value in both files.
  compare-prefix A.gguf B.gguf N KEY..   same for the first N elements of array KEYs.
  dump A.gguf                 print tokenizer.* keys (arrays summarised).
No gguf-py needed: a ~50-line reader is enough for KV data.
"""
import json
import os
import struct
import sys

SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read_kv(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"GGUF":
        raise SystemExit(f"{path}: not a GGUF file")
    off = 8
    n_t, n_kv = struct.unpack_from("<QQ", data, off)
    off += 16

    def string(o):
        (n,) = struct.unpack_from("<Q", data, o)
        return data[o + 8:o + 8 + n], o + 8 + n

    def value(t, o):
        if t == 8:
            return string(o)
        if t == 9:
            et, n = struct.unpack_from("<IQ", data, o)
            o += 12
            out = []
            for _ in range(n):
                v, o = value(et, o)
                out.append(v)
            return (et, out), o
        fmt = SCALAR[t]
        return struct.unpack_from(fmt, data, o)[0], o + struct.calcsize(fmt)

    kv = {}
    for _ in range(n_kv):
        k, off = string(off)
        (t,) = struct.unpack_from("<I", data, off)
        off += 4
        v, off = value(t, off)
        kv[k.decode()] = (t, v)
    return kv


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def spm_model(ref, outdir):
    kv = read_kv(ref)
    toks = kv["tokenizer.ggml.tokens"][1][1]
    scores = kv["tokenizer.ggml.scores"][1][1]
    types = kv["tokenizer.ggml.token_type"][1][1]
    out = bytearray()
    for t, s, ty in zip(toks, scores, types):
        piece = field(1, 2, varint(len(t)) + t) + field(2, 5, struct.pack("<f", s))
        if ty != 1:
            piece += field(3, 0, varint(ty))
        out += field(1, 2, varint(len(piece)) + piece)
    # a trainer_spec and normalizer_spec like real models carry (skipped / add_dummy_prefix read)
    out += field(2, 2, varint(4) + field(3, 0, varint(1)) + field(4, 0, varint(32000 & 0x7F)))
    norm = field(1, 2, varint(8) + b"identity") + field(3, 0, varint(1))
    out += field(3, 2, varint(len(norm)) + norm)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "tokenizer.model"), "wb") as f:
        f.write(out)
    cfg = {"architectures": ["LlamaForCausalLM"], "vocab_size": len(toks)}
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(cfg, f)
    tc = {}
    for key, name in (("tokenizer.ggml.add_bos_token", "add_bos_token"), ("tokenizer.ggml.add_eos_token", "add_eos_token")):
        if key in kv:
            tc[name] = bool(kv[key][1])
    for key, name in (("tokenizer.ggml.bos_token_id", "bos_token_id"), ("tokenizer.ggml.eos_token_id", "eos_token_id"),
                      ("tokenizer.ggml.unknown_token_id", "unk_token_id")):
        if key in kv:
            cfg[name] = kv[key][1]
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(outdir, "tokenizer_config.json"), "w") as f:
        json.dump(tc, f)


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "spm-model" and len(sys.argv) == 4:
        spm_model(sys.argv[2], sys.argv[3])
    elif cmd == "compare" and len(sys.argv) >= 5:
        a, b = read_kv(sys.argv[2]), read_kv(sys.argv[3])
        bad = 0
        for k in sys.argv[4:]:
            if k not in a or k not in b:
                print(f"  {k}: missing in {'first' if k not in a else 'second'} file")
                bad += 1
            elif a[k] != b[k]:
                va, vb = a[k][1], b[k][1]
                if isinstance(va, tuple) and isinstance(vb, tuple):
                    d = [i for i in range(min(len(va[1]), len(vb[1]))) if va[1][i] != vb[1][i]]
                    print(f"  {k}: {len(va[1])} vs {len(vb[1])} elements, {len(d)} differ, first {d[:5]}")
                else:
                    print(f"  {k}: {a[k]!r} vs {b[k]!r}")
                bad += 1
        sys.exit(1 if bad else 0)
    elif cmd == "compare-prefix" and len(sys.argv) >= 6:
        a, b, n = read_kv(sys.argv[2]), read_kv(sys.argv[3]), int(sys.argv[4])
        bad = 0
        for k in sys.argv[5:]:
            va, vb = a.get(k), b.get(k)
            if not va or not vb or va[0] != vb[0] or len(va[1][1]) < n or len(vb[1][1]) < n \
                    or va[1][0] != vb[1][0] or va[1][1][:n] != vb[1][1][:n]:
                print(f"  {k}: first {n} elements differ (or key missing)")
                bad += 1
        sys.exit(1 if bad else 0)
    elif cmd == "dump" and len(sys.argv) == 3:
        for k, (t, v) in read_kv(sys.argv[2]).items():
            if isinstance(v, tuple):
                print(k, f"arr[{v[0]}]", len(v[1]))
            else:
                print(k, t, v[:80] if isinstance(v, bytes) else v)
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
