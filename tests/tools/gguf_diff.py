#!/usr/bin/python3
"""gguf_diff.py - two GGUF files must hold the same metadata and tensors (gguf-py reads both).

  gguf_diff.py A.gguf B.gguf [--ignore-key K ...] [--tensors-only]

Compares every KV (type and value; order is not compared) and every tensor by name (type, shape,
bytes). Prints each difference and exits 1 if there is any."""
import sys

args = sys.argv[1:]
lcpp = None
if "--gguf-py" in args:
    i = args.index("--gguf-py"); lcpp = args[i + 1]; del args[i:i + 2]
sys.path.insert(0, lcpp or "/work/llama.cpp/gguf-py")
import gguf  # noqa: E402
import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_fast import reader  # noqa: E402  (gguf-py's GGUFReader, fast on big vocabularies)

ignore, tensors_only = set(), False
a_path, b_path = args[0], args[1]
rest = args[2:]
while rest:
    o = rest.pop(0)
    if o == "--ignore-key": ignore.add(rest.pop(0))
    elif o == "--tensors-only": tensors_only = True
ra, rb = reader(gguf, a_path), reader(gguf, b_path)
bad = 0


def val(f):
    if f.types and f.types[0] == gguf.GGUFValueType.ARRAY:
        return (tuple(f.types), [bytes(f.parts[i]) for i in f.data])
    return (tuple(f.types), [bytes(f.parts[i]) for i in f.data])


if not tensors_only:
    ka = {k: f for k, f in ra.fields.items() if not k.startswith("GGUF.") and k not in ignore}
    kb = {k: f for k, f in rb.fields.items() if not k.startswith("GGUF.") and k not in ignore}
    for k in sorted(set(ka) | set(kb)):
        if k not in ka or k not in kb:
            print(f"key {k}: only in {'A' if k in ka else 'B'}"); bad += 1
        elif val(ka[k]) != val(kb[k]):
            print(f"key {k}: differs"); bad += 1
ta = {t.name: t for t in ra.tensors}
tb = {t.name: t for t in rb.tensors}
for n in sorted(set(ta) | set(tb)):
    if n not in ta or n not in tb:
        print(f"tensor {n}: only in {'A' if n in ta else 'B'}"); bad += 1; continue
    x, y = ta[n], tb[n]
    if x.tensor_type != y.tensor_type or list(x.shape) != list(y.shape):
        print(f"tensor {n}: {x.tensor_type.name}{list(x.shape)} vs {y.tensor_type.name}{list(y.shape)}"); bad += 1
    elif bytes(x.data.tobytes()) != bytes(y.data.tobytes()):
        print(f"tensor {n}: bytes differ"); bad += 1
print(f"{len(ta)} tensors, {bad} differences")
sys.exit(1 if bad else 0)
