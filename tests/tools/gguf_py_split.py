#!/usr/bin/python3
"""gguf_py_split.py - the reference shards for sunny-convert --split-max-tensors / --split-max-size.

  gguf_py_split.py LLAMA_CPP_DIR IN.gguf OUT.gguf (--split-max-tensors N | --split-max-size BYTES)

Writes every KV and tensor of IN (in file order) through llama.cpp's own gguf-py GGUFWriter, created
with the split options convert_hf_to_gguf.py passes it: OUT-00001-of-0000K.gguf ... with gguf-py's
shard rule, names and split.* keys (or OUT itself when nothing needs splitting). Prints the paths.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(sys.argv[1], "gguf-py"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf  # noqa: E402
from gguf_fast import reader  # noqa: E402  (gguf-py's GGUFReader, fast on big vocabularies)

r = reader(gguf, sys.argv[2])
mt = int(sys.argv[5]) if sys.argv[4] == "--split-max-tensors" else 0
ms = int(sys.argv[5]) if sys.argv[4] == "--split-max-size" else 0
w = gguf.GGUFWriter(Path(sys.argv[3]), r.fields["general.architecture"].contents(), split_max_tensors=mt,
                    split_max_size=ms)
for k, f in r.fields.items():
    if k.startswith("GGUF.") or k == "general.architecture":
        continue
    t = f.types[0]
    if t == gguf.GGUFValueType.ARRAY:
        w.add_key_value(k, f.contents(), t, sub_type=f.types[-1])
    else:
        w.add_key_value(k, f.contents(), t)
for t in r.tensors:
    w.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
for p in w.format_shard_names(Path(sys.argv[3])):
    print(p)
