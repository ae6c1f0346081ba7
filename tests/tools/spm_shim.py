"""spm_shim.py - a stand-in for the `sentencepiece` module where it is not installed.

SentencePieceProcessor reads the pieces, scores and types of a tokenizer.model protobuf: the same
fields the real library exposes through IdToPiece / GetScore / Is*. install() registers it as
`sentencepiece` so llama.cpp's converter code (_create_vocab_sentencepiece) runs unchanged.
"""
import struct
import sys
import types


def pb_pieces(data):
    def varint(o):
        return varint_in(data, o)
    out, o = [], 0
    while o < len(data):
        tag, o = varint(o)
        f, w = tag >> 3, tag & 7
        if w == 0:
            _, o = varint(o)
        elif w == 5:
            o += 4
        elif w == 1:
            o += 8
        elif w == 2:
            n, o = varint(o)
            if f == 1:
                sub, q, piece, score, typ = data[o:o + n], 0, b"", 0.0, 1
                while q < len(sub):
                    t2, q = varint_in(sub, q)
                    f2, w2 = t2 >> 3, t2 & 7
                    if f2 == 1:
                        m, q = varint_in(sub, q)
                        piece, q = sub[q:q + m], q + m
                    elif f2 == 2:
                        score, q = struct.unpack_from("<f", sub, q)[0], q + 4
                    elif f2 == 3:
                        typ, q = varint_in(sub, q)
                    elif w2 == 0:
                        _, q = varint_in(sub, q)
                    elif w2 == 2:
                        m, q = varint_in(sub, q)
                        q += m
                    elif w2 == 5:
                        q += 4
                    else:
                        q += 8
                out.append((piece.decode("utf-8"), score, typ))
            o += n
    return out


def varint_in(buf, o):
    r = s = 0
    while True:
        b = buf[o]
        o += 1
        r |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return r, o


class SentencePieceProcessor:
    def LoadFromFile(self, path):
        self.p = pb_pieces(open(path, "rb").read())

    def vocab_size(self):
        return len(self.p)

    def IdToPiece(self, i):
        return self.p[i][0]

    def GetScore(self, i):
        return self.p[i][1]

    def IsUnknown(self, i):
        return self.p[i][2] == 2

    def IsControl(self, i):
        return self.p[i][2] == 3

    def IsUnused(self, i):
        return self.p[i][2] == 5

    def IsByte(self, i):
        return self.p[i][2] == 6


def install():
    """Registers the shim as the `sentencepiece` module unless the real one imports."""
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        sp = types.ModuleType("sentencepiece")
        sp.SentencePieceProcessor = SentencePieceProcessor
        sys.modules["sentencepiece"] = sp
