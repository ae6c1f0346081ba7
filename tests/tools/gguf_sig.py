#!/usr/bin/env python3
"""gguf_sig.py - which GGUFs are the same model: prints "SHA256<TAB>FILE" per file, the hash of the
whole file with the value of general.file_type zeroed (the label llama-quantize writes for the
recipe asked for; neither engine computes with it). Two files with one signature hold the same
keys, tensor infos and tensor bytes, so a run on one is a run on the other.

  gguf_sig.py FILE.gguf...
"""
import hashlib
import mmap
import struct
import sys

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def file_type_offset(mv):
    """Offset of general.file_type's u32 value, or None; raises on a malformed header."""
    if bytes(mv[:4]) != b"GGUF":
        raise ValueError("not a GGUF")
    n_kv = struct.unpack_from("<Q", mv, 16)[0]
    o = 24

    def skip(t, o):
        if t == 8:
            return o + 8 + int.from_bytes(mv[o:o + 8], "little")
        if t == 9:
            at, n = struct.unpack_from("<IQ", mv, o)
            o += 12
            if at == 8:
                for _ in range(n):
                    o += 8 + int.from_bytes(mv[o:o + 8], "little")
                return o
            if at == 9:
                for _ in range(n):
                    o = skip(9, o)
                return o
            return o + SIZES[at] * n
        return o + SIZES[t]

    for _ in range(n_kv):
        klen = int.from_bytes(mv[o:o + 8], "little")
        key = bytes(mv[o + 8:o + 8 + klen])
        o += 8 + klen
        t = struct.unpack_from("<I", mv, o)[0]
        o += 4
        if key == b"general.file_type" and t == 4:
            return o
        o = skip(t, o)
    return None


for path in sys.argv[1:]:
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        mv = memoryview(mm)
        at = file_type_offset(mv)
        h = hashlib.sha256()
        if at is None:
            h.update(mv)
        else:
            h.update(mv[:at]); h.update(b"\0\0\0\0"); h.update(mv[at + 4:])
        mv.release()
        mm.close()
    print(f"{h.hexdigest()}\t{path}")
