#!/usr/bin/python3
"""sparse_big_source.py - an HF model folder whose weights lie past 4 GiB, as a sparse file.

  sparse_big_source.py SRC_DIR OUT_DIR safetensors|bin

Copies SRC_DIR's config and tokenizer files and rewrites its single model.safetensors into OUT_DIR
as model.safetensors or pytorch_model.bin (torch's zip layout, zip64) with one extra tensor first
in the data: model.layers.0.self_attn.rotary_emb.inv_freq, F32, 4.5 GiB, which llama.cpp's converter
(and sunny's) drop unread. Its bytes are a hole, so every real tensor starts past 4 GiB while the file
costs only the real tensors on disk. The .bin is written without torch: the pickle names torch's
classes through stand-in modules, as torch.save's pickle does, and the zip is assembled here
(stored entries aligned to 64 bytes, zip64 records for sizes and offsets past 4 GiB).
"""
import collections
import json
import os
import pickle
import shutil
import struct
import sys
import types
import zlib

BIG_NAME = "model.layers.0.self_attn.rotary_emb.inv_freq"
BIG_ELEMS = 1207959552  # F32: 4.5 GiB
ST_ELEM = {"F32": 4, "F16": 2, "BF16": 2}


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        base = 8 + n
        meta = hdr.pop("__metadata__", None)
        out = []
        for name, t in sorted(hdr.items(), key=lambda kv: kv[1]["data_offsets"][0]):
            a, b = t["data_offsets"]
            f.seek(base + a)
            out.append((name, t["dtype"], t["shape"], f.read(b - a)))
    return meta, out


def write_safetensors(path, meta, tensors):
    hdr, off = {}, 0
    if meta is not None:
        hdr["__metadata__"] = meta
    hdr[BIG_NAME] = {"dtype": "F32", "shape": [BIG_ELEMS], "data_offsets": [0, BIG_ELEMS * 4]}
    off = BIG_ELEMS * 4
    for name, dt, shape, data in tensors:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data)
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.seek(8 + len(h) + BIG_ELEMS * 4)  # the hole
        for _, _, _, data in tensors:
            f.write(data)


# ---- torch's pickle without torch: stand-in modules whose names pickle as torch's globals
def _stub(mod, name, obj):
    m = sys.modules.setdefault(mod, types.ModuleType(mod))
    obj.__module__, obj.__qualname__, obj.__name__ = mod, name, name
    setattr(m, name, obj)
    return obj


def _rebuild_tensor_v2(*a):
    raise RuntimeError("stand-in only")


_stub("torch._utils", "_rebuild_tensor_v2", _rebuild_tensor_v2)
STORAGE = {dt: _stub("torch", f"{n}Storage", type(f"{n}Storage", (), {}))
           for dt, n in (("F32", "Float"), ("F16", "Half"), ("BF16", "BFloat16"))}


class Storage:
    def __init__(self, key, dt, numel):
        self.key, self.dt, self.numel = key, dt, numel


class Tensor:
    def __init__(self, storage, shape):
        self.storage, self.shape = storage, shape

    def __reduce__(self):
        stride, s = [], 1
        for d in reversed(self.shape):
            stride.insert(0, s)
            s *= d
        return (_rebuild_tensor_v2, (self.storage, 0, tuple(self.shape), tuple(stride), False, collections.OrderedDict()))


class Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", STORAGE[obj.dt], obj.key, "cpu", obj.numel)
        return None


def crc32_zeros(n):
    """zlib crc32 of n zero bytes, by squaring the append-one-zero-bit operator (zlib's crc32_combine)."""
    def times(mat, vec):
        s, i = 0, 0
        while vec:
            if vec & 1:
                s ^= mat[i]
            vec >>= 1
            i += 1
        return s

    def square(mat):
        return [times(mat, mat[i]) for i in range(32)]
    odd = [0xEDB88320] + [1 << i for i in range(31)]  # one zero bit
    even = square(odd)      # two
    odd = square(even)      # four
    crc = 0xFFFFFFFF        # the pre-inverted register of crc32(0, ...)
    while n:
        even = square(odd)  # first pass: one zero byte
        if n & 1:
            crc = times(even, crc)
        n >>= 1
        if not n:
            break
        odd = square(even)
        if n & 1:
            crc = times(odd, crc)
        n >>= 1
    return crc ^ 0xFFFFFFFF


def write_torch_zip(path, tensors):
    prefix = "archive/"
    entries = []  # (name, bytes or None for the hole, size, crc)
    state = collections.OrderedDict()
    big = Storage("0", "F32", BIG_ELEMS)
    state[BIG_NAME] = Tensor(big, [BIG_ELEMS])
    for k, (name, dt, shape, data) in enumerate(tensors):
        state[name] = Tensor(Storage(str(k + 1), dt, len(data) // ST_ELEM[dt]), shape)
    import io
    buf = io.BytesIO()
    Pickler(buf, protocol=2).dump(state)
    entries.append(("data.pkl", buf.getvalue()))
    entries.append(("byteorder", b"little"))
    entries.append(("data/0", None))
    for k, (_, _, _, data) in enumerate(tensors):
        entries.append((f"data/{k + 1}", data))
    entries.append(("version", b"3\n"))
    central = []
    with open(path, "wb") as f:
        for name, data in entries:
            nm = (prefix + name).encode()
            size = BIG_ELEMS * 4 if data is None else len(data)
            crc = crc32_zeros(size) if data is None else zlib.crc32(data)
            lho = f.tell()
            z64 = size >= 0xFFFFFFFF
            extra = struct.pack("<HHQQ", 1, 16, size, size) if z64 else b""
            pad = -(lho + 30 + len(nm) + len(extra) + 4) % 64  # data 64-byte aligned, as torch.save
            extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad
            s32 = 0xFFFFFFFF if z64 else size
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc, s32, s32, len(nm), len(extra)))
            f.write(nm + extra)
            if data is None:
                f.seek(size, os.SEEK_CUR)
            else:
                f.write(data)
            central.append((nm, crc, size, lho))
        cd = f.tell()
        for nm, crc, size, lho in central:
            z = b""
            s32 = size
            if size >= 0xFFFFFFFF:
                z += struct.pack("<QQ", size, size)
                s32 = 0xFFFFFFFF
            o32 = lho
            if lho >= 0xFFFFFFFF:
                z += struct.pack("<Q", lho)
                o32 = 0xFFFFFFFF
            extra = struct.pack("<HH", 1, len(z)) + z if z else b""
            f.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, crc, s32, s32, len(nm),
                                len(extra), 0, 0, 0, 0, o32))
            f.write(nm + extra)
        cd_size = f.tell() - cd
        e64 = f.tell()
        n = len(central)
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, e64, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, min(cd_size, 0xFFFFFFFF), 0xFFFFFFFF, 0))


def main():
    src, out, fmt = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    for fn in os.listdir(src):
        if fn.endswith((".json", ".model", ".txt", ".jinja")) and not fn.endswith(".index.json"):
            shutil.copy(os.path.join(src, fn), os.path.join(out, fn))
    meta, tensors = read_safetensors(os.path.join(src, "model.safetensors"))
    if fmt == "safetensors":
        write_safetensors(os.path.join(out, "model.safetensors"), meta, tensors)
    else:
        write_torch_zip(os.path.join(out, "pytorch_model.bin"), tensors)


if __name__ == "__main__":
    main()
