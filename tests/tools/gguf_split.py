#!/usr/bin/python3
"""gguf_split.py - split a GGUF into N shards the way llama.cpp's gguf-split does (tests only).

  gguf_split.py IN.gguf OUT_PREFIX N   -> OUT_PREFIX-00001-of-0000N.gguf ... (N files)

Layout of each shard (llama.cpp tools/gguf-split, split mode by tensor count): a complete GGUF v3 file.
The first shard carries every metadata KV of the input; every shard then gets split.no (u16, 0-based),
split.count (u16) and split.tensors.count (i32, the total tensor count). Tensors keep their order and
are dealt out in N consecutive runs; each shard's tensor data starts at an aligned offset after its
own header, with offsets relative to that start. Written to NAME.tmp and renamed.
"""
import os
import struct
import sys

ALIGN_KEY = "general.alignment"


def read_gguf(path):
    b = open(path, "rb").read()
    if b[:4] != b"GGUF":
        raise SystemExit(f"{path}: not a GGUF file (magic {b[:4]!r})")
    ver, nt, nkv = struct.unpack_from("<IQQ", b, 4)
    off = 24

    def rd_str(o):
        (n,) = struct.unpack_from("<Q", b, o)
        return b[o + 8:o + 8 + n].decode("utf-8"), o + 8 + n

    scalar = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def skip_val(t, o):
        if t in scalar:
            return o + scalar[t]
        if t == 8:
            return rd_str(o)[1]
        if t == 9:
            et, n = struct.unpack_from("<IQ", b, o)
            o += 12
            if et in scalar:
                return o + scalar[et] * n
            for _ in range(n):
                o = skip_val(et, o)
            return o
        raise SystemExit(f"{path}: bad KV type {t} at offset {o}")

    kvs = []  # (key, raw bytes of type+value)
    align = 32
    for _ in range(nkv):
        k, o = rd_str(off)
        (t,) = struct.unpack_from("<I", b, o)
        e = skip_val(t, o + 4)
        if k == ALIGN_KEY and t == 4:
            (align,) = struct.unpack_from("<I", b, o + 4)
        if not k.startswith("split."):
            kvs.append((k, b[o:e]))
        off = e
    tensors = []  # [name, info bytes after name (dims, type), offset]
    for _ in range(nt):
        name, o = rd_str(off)
        (nd,) = struct.unpack_from("<I", b, o)
        info_end = o + 4 + 8 * nd + 4
        (toff,) = struct.unpack_from("<Q", b, info_end)
        tensors.append([name, b[o:info_end], toff])
        off = info_end + 8
    data_start = (off + align - 1) // align * align
    ends = sorted(t[2] for t in tensors)[1:] + [len(b) - data_start]
    size_of = {}
    for t in tensors:
        nxt = min([e for e in ends if e > t[2]], default=len(b) - data_start)
        size_of[t[0]] = nxt - t[2]
    return ver, kvs, tensors, size_of, b, data_start, align


def s_bytes(s):
    e = s.encode("utf-8")
    return struct.pack("<Q", len(e)) + e


def write_shard(path, kvs, tensors, size_of, b, data_start, align):
    head = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
    for k, raw in kvs:
        head += s_bytes(k) + raw
    off = 0
    offs = []
    for name, info, _ in tensors:
        offs.append(off)
        head += s_bytes(name) + info + struct.pack("<Q", off)
        off += (size_of[name] + align - 1) // align * align
    head += b"\0" * ((-len(head)) % align)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        for (name, _, toff), o in zip(tensors, offs):
            n = size_of[name]
            f.write(b[data_start + toff:data_start + toff + n])
            f.write(b"\0" * ((-n) % align))
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ver, kvs, tensors, size_of, b, data_start, align = read_gguf(src)
    if n < 2 or n > len(tensors):
        raise SystemExit(f"cannot split {len(tensors)} tensors into {n} shards")
    per = (len(tensors) + n - 1) // n
    for i in range(n):
        part = tensors[i * per:(i + 1) * per]
        if not part:
            raise SystemExit(f"shard {i + 1} would have no tensors")
        split_kv = [("split.no", struct.pack("<IH", 2, i)), ("split.count", struct.pack("<IH", 2, n)),
                    ("split.tensors.count", struct.pack("<Ii", 5, len(tensors)))]
        write_shard(f"{prefix}-{i + 1:05d}-of-{n:05d}.gguf", (kvs if i == 0 else []) + split_kv, part, size_of,
                    b, data_start, align)


if __name__ == "__main__":
    main()
