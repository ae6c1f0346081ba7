#!/usr/bin/python3
"""gguf_edit.py - derive test GGUFs from a valid one (tests only; uses gguf_split.py's reader/writer).

  gguf_edit.py IN OUT --zero NAME   tensor NAME's data set to zeros (e.g. output_norm.weight: every
                                    logit becomes 0, greedy repeats token 0 forever - a repetitive model)
  gguf_edit.py IN OUT --drop NAME   tensor NAME left out: still a well-formed GGUF, but llama.cpp
                                    refuses to load it (missing tensor)
  gguf_edit.py IN OUT --scale NAME F  tensor NAME (F32 or F16) multiplied by F: the same model with one
                                    weight perturbed (e.g. a late layer's ffn_down by 1.02), so greedy
                                    output shares a prefix with the original's and then differs
  gguf_edit.py IN OUT --set-str KEY VALUE  KV KEY set to the string VALUE (e.g. general.architecture
                                    to a name llama.cpp does not know)
  gguf_edit.py IN OUT --del-kv KEY   KV KEY left out (e.g. tokenizer.chat_template)
  gguf_edit.py IN OUT --set-flags KEY 0,1,1,0  KV KEY set (or added) as an array of bools (e.g. a
                                    per-layer attention.sliding_window_pattern)
Written to OUT.tmp and renamed.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_split  # noqa: E402


def main():
    if len(sys.argv) == 6 and sys.argv[3] == "--set-str":
        ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(sys.argv[1])
        v = sys.argv[5].encode("utf-8")
        raw = struct.pack("<IQ", 8, len(v)) + v
        kvs = [(k, raw if k == sys.argv[4] else r) for k, r in kvs]
        gguf_split.write_shard(sys.argv[2], kvs, tensors, size_of, b, data_start, align)
        return
    if len(sys.argv) == 6 and sys.argv[3] == "--set-flags":
        ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(sys.argv[1])
        flags = [int(x) != 0 for x in sys.argv[5].split(",")]
        raw = struct.pack("<IIQ", 9, 7, len(flags)) + bytes(flags)  # ARRAY of BOOL
        kvs = [(k, r) for k, r in kvs if k != sys.argv[4]] + [(sys.argv[4], raw)]
        gguf_split.write_shard(sys.argv[2], kvs, tensors, size_of, b, data_start, align)
        return
    if len(sys.argv) == 5 and sys.argv[3] == "--del-kv":
        ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(sys.argv[1])
        if not any(k == sys.argv[4] for k, _ in kvs):
            raise SystemExit(f"{sys.argv[1]}: no KV {sys.argv[4]}")
        kvs = [(k, r) for k, r in kvs if k != sys.argv[4]]
        gguf_split.write_shard(sys.argv[2], kvs, tensors, size_of, b, data_start, align)
        return
    scale = len(sys.argv) == 6 and sys.argv[3] == "--scale"
    if not scale and (len(sys.argv) != 5 or sys.argv[3] not in ("--zero", "--drop")):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src, out, op, name = sys.argv[1:5]
    ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(src)
    if name not in size_of:
        raise SystemExit(f"{src}: no tensor {name}")
    if op == "--drop":
        tensors = [t for t in tensors if t[0] != name]
    elif scale:
        import numpy as np
        t = next(t for t in tensors if t[0] == name)
        (nd,) = struct.unpack_from("<I", t[1], 0)
        dims = struct.unpack_from(f"<{nd}Q", t[1], 4)
        (ty,) = struct.unpack_from("<I", t[1], 4 + 8 * nd)
        dt = {0: np.float32, 1: np.float16}.get(ty)
        if dt is None:
            raise SystemExit(f"{src}: tensor {name} has ggml type {ty}; --scale handles F32 and F16")
        n = int(np.prod(dims))
        off = data_start + t[2]
        x = np.frombuffer(b, dtype=dt, count=n, offset=off).astype(np.float32) * float(sys.argv[5])
        b = b[:off] + x.astype(dt).tobytes() + b[off + n * np.dtype(dt).itemsize:]
    else:
        t = next(t for t in tensors if t[0] == name)
        off = data_start + t[2]
        b = b[:off] + bytes(size_of[name]) + b[off + size_of[name]:]
    gguf_split.write_shard(out, kvs, tensors, size_of, b, data_start, align)


if __name__ == "__main__":
    main()
