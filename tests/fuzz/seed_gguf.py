#!/usr/bin/env python3
"""seed_gguf.py - writes the seed corpus of fuzz_gguf (tests/fuzz/corpus/gguf/): three small GGUFs
whose tokenizers load (BPE byte-level with merges, SPM with byte tokens and scores, RWKV), so the
fuzzer starts inside the vocab build and the encoders. Run once; the files are committed."""
import os
import struct
import sys


def s(x):
    b = x.encode()
    return struct.pack('<Q', len(b)) + b


def kv(k, t, payload):
    return s(k) + struct.pack('<I', t) + payload


def arr(k, t, items):
    return kv(k, 9, struct.pack('<IQ', t, len(items)) + b''.join(items))


def gguf(kvs, tensors=()):
    out = b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kvs)) + b''.join(kvs)
    off, data = 0, b''
    for name, ne, raw in tensors:
        out += s(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', n) for n in ne) + struct.pack('<IQ', 0, off)
        pad = (-len(raw)) % 32
        data += raw + b'\0' * pad
        off += len(raw) + pad
    return out + b'\0' * ((-len(out)) % 32) + data


def main(d):
    os.makedirs(d, exist_ok=True)
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    words = ['Ġthe', 'Ġworld', 'He', 'llo', 'Ġw', 'or', 'ld', '12', 'Ġwor', '<s>', '</s>', '<|im_start|>']
    toks = [chr(c) for c in cs] + words
    merges = ['Ġ w', 'o r', 'l d', 'H e', 'l l', 'll o', 'He llo', 'Ġw or', 'Ġwor ld', '1 2']
    bpe = gguf([kv('general.architecture', 8, s('llama')), kv('tokenizer.ggml.model', 8, s('gpt2')),
                kv('tokenizer.ggml.pre', 8, s('llama-bpe')), arr('tokenizer.ggml.tokens', 8, [s(t) for t in toks]),
                arr('tokenizer.ggml.token_type', 5, [struct.pack('<i', 3 if i >= len(toks) - 3 else 1) for i in range(len(toks))]),
                arr('tokenizer.ggml.merges', 8, [s(m) for m in merges]),
                kv('tokenizer.ggml.bos_token_id', 4, struct.pack('<I', len(toks) - 3)),
                kv('tokenizer.ggml.eos_token_id', 4, struct.pack('<I', len(toks) - 2)),
                kv('tokenizer.ggml.add_bos_token', 7, b'\1')],
               [('token_embd.weight', [4, 2], struct.pack('<8f', *range(8)))])
    spm_toks = ['<unk>', '<s>', '</s>'] + ['<0x%02X>' % i for i in range(256)] + \
        ['▁', '▁the', '▁world', 'H', 'e', 'l', 'o', '▁He', 'llo', 'r', 'd', 'w']
    types = [2, 3, 3] + [6] * 256 + [1] * (len(spm_toks) - 259)
    spm = gguf([kv('general.architecture', 8, s('llama')), kv('tokenizer.ggml.model', 8, s('llama')),
                arr('tokenizer.ggml.tokens', 8, [s(t) for t in spm_toks]),
                arr('tokenizer.ggml.scores', 6, [struct.pack('<f', 0.0 if i < 259 else -float(i - 259)) for i in range(len(spm_toks))]),
                arr('tokenizer.ggml.token_type', 5, [struct.pack('<i', t) for t in types]),
                kv('tokenizer.ggml.bos_token_id', 4, struct.pack('<I', 1)),
                kv('tokenizer.ggml.eos_token_id', 4, struct.pack('<I', 2))])
    rw_toks = ['<s>'] + [chr(i) for i in range(32, 127)] + ['the', 'world', 'He', 'llo']
    rwkv = gguf([kv('general.architecture', 8, s('rwkv7')), kv('tokenizer.ggml.model', 8, s('rwkv')),
                 arr('tokenizer.ggml.tokens', 8, [s(t) for t in rw_toks]),
                 arr('tokenizer.ggml.token_type', 5, [struct.pack('<i', 3 if i == 0 else 1) for i in range(len(rw_toks))])])
    for name, b in (('bpe', bpe), ('spm', spm), ('rwkv', rwkv)):
        with open(os.path.join(d, name + '.gguf'), 'wb') as f:
            f.write(b)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus', 'gguf'))
