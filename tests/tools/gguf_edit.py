#!/usr/bin/python3
"""gguf_edit.py - derive test GGUFs from a valid one (tests only; uses gguf_split.py's reader/writer).

  gguf_edit.py IN OUT --zero NAME   tensor NAME's data set to zeros (e.g. output_norm.weight: every
                                    logit becomes 0, greedy repeats token 0 forever - a repetitive model)
  gguf_edit.py IN OUT --drop NAME   tensor NAME left out: still a well-formed GGUF, but llama.cpp
                                    refuses to load it (missing tensor)
Written to OUT.tmp and renamed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_split  # noqa: E402


def main():
    if len(sys.argv) != 5 or sys.argv[3] not in ("--zero", "--drop"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src, out, op, name = sys.argv[1:]
    ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(src)
    if name not in size_of:
        raise SystemExit(f"{src}: no tensor {name}")
    if op == "--drop":
        tensors = [t for t in tensors if t[0] != name]
    else:
        t = next(t for t in tensors if t[0] == name)
        off = data_start + t[2]
        b = b[:off] + bytes(size_of[name]) + b[off + size_of[name]:]
    gguf_split.write_shard(out, kvs, tensors, size_of, b, data_start, align)


if __name__ == "__main__":
    main()
