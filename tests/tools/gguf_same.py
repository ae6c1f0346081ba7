#!/usr/bin/env python3
"""gguf_same.py - is our GGUF the reference's? Keys (type and value) and tensors (order, name, type,
shape, bytes), with llama.cpp's own gguf-py reader.

  gguf_same.py GGUF_PY_DIR REF.gguf OURS.gguf [--skip-prefix P ...]

Keys starting with a --skip-prefix (e.g. tokenizer. when the reference was written without a
vocabulary) are not compared; every other key of either file must be in both and equal. Prints one
line per difference; exit 1 if there is any.
"""
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import gguf  # noqa: E402

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from gguf_fast import reader  # noqa: E402  (gguf-py's GGUFReader, fast on big vocabularies)


def kvs(r, skip):
    out = {}
    for f in r.fields.values():
        if f.name.startswith("GGUF.") or any(f.name.startswith(p) for p in skip):
            continue
        out[f.name] = (tuple(int(t) for t in f.types), b"".join(bytes(f.parts[i]) for i in f.data))
    return out


def main():
    ref_p, our_p = sys.argv[2], sys.argv[3]
    skip = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--skip-prefix"]
    ref, our = reader(gguf, ref_p), reader(gguf, our_p)
    bad = 0
    rk, ok = kvs(ref, skip), kvs(our, skip)
    for k in sorted(set(rk) | set(ok)):
        if k not in rk or k not in ok:
            print(f"key {k}: only in {'reference' if k in rk else 'ours'}")
            bad += 1
        elif rk[k] != ok[k]:
            print(f"key {k}: reference {rk[k]} != ours {ok[k]}")
            bad += 1
    order_r = [k for k in rk]
    order_o = [k for k in ok]
    if order_r != order_o and not bad:
        print(f"key order differs:\n  reference {order_r}\n  ours      {order_o}")
        bad += 1
    rt = [(t.name, int(t.tensor_type), tuple(int(x) for x in t.shape)) for t in ref.tensors]
    ot = [(t.name, int(t.tensor_type), tuple(int(x) for x in t.shape)) for t in our.tensors]
    if rt != ot:
        for a, b in zip(rt, ot):
            if a != b:
                print(f"tensor info: reference {a} != ours {b}")
                bad += 1
        if len(rt) != len(ot):
            print(f"tensor count: reference {len(rt)} != ours {len(ot)}")
            bad += 1
    else:
        for a, b in zip(ref.tensors, our.tensors):
            if a.data.tobytes() != b.data.tobytes():
                x, y = np.asarray(a.data).view(np.uint8), np.asarray(b.data).view(np.uint8)
                print(f"tensor {a.name}: {int((x != y).sum())} of {x.size} bytes differ")
                bad += 1
    print(f"{our_p}: {len(ok)} keys, {len(ot)} tensors compared with {ref_p}: {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
