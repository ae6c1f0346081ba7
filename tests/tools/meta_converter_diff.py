#!/usr/bin/python3
"""meta_converter_diff.py - every metadata key and value of sunny's GGUFs against llama.cpp's converter.

  meta_converter_diff.py LLAMA_CPP_DIR HF_DIR GGUF OUTTYPE [HF_DIR GGUF OUTTYPE ...]

For each HF folder it instantiates the model class llama.cpp's convert_hf_to_gguf.py would pick
(conversion.get_model_class(config.architectures[0]), constructed exactly as the converter does,
dry_run) and runs its own prepare_metadata(): Metadata.load from the model card and config,
set_gguf_parameters() of that architecture, general.file_type for the outtype, quantization
version. The KVs it queued are the reference; sunny's GGUF (read with gguf-py's GGUFReader) must hold
every one of them with the same type and value (floats as the f32 both store), and nothing else
outside tokenizer.* (the vocabulary keys are compared with llama.cpp's converter code by
test_vocab_llamacpp.sh) except the keys listed in EXTRA, each with the reason it differs.
Shims: `transformers` and `sentencepiece` are not installed here; apart from set_vocab (skipped: its
keys are the vocabulary tests' subject) neither is used on this path, so they are empty modules.
"""
import json
import logging
import os
import struct
import sys
import types
from pathlib import Path

LCPP = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(LCPP, "gguf-py"))
sys.path.insert(0, LCPP)
for name in ("transformers", "sentencepiece"):
    mod = types.ModuleType(name)
    mod.AutoConfig = mod.AutoTokenizer = mod.SentencePieceProcessor = object
    sys.modules[name] = mod
import torch  # noqa: E402  (old torch here lacks some dtypes base.py names at import time)
for _a in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16", "uint32", "uint64"):
    if not hasattr(torch, _a):
        setattr(torch, _a, torch.float16 if "float" in _a else torch.int16)
logging.disable(logging.WARNING)
import gguf  # noqa: E402
from conversion import get_model_class  # noqa: E402  (llama.cpp's converter: the reference)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_fast import reader  # noqa: E402  (gguf-py's GGUFReader, fast on big vocabularies)

FTYPE = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
         "bf16": gguf.LlamaFileType.MOSTLY_BF16, "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
         "q4_0": gguf.LlamaFileType.MOSTLY_Q4_0}
# keys sunny writes that this reference run cannot produce, and why
# keys sunny writes that this reference run does not, each with the value it must have:
#  * general.size_label: prepare_metadata derives it from the tensors the converter queued (none
#    here); the rule is gguf.size_label over the parameter count;
#  * ARCH.attention.key_length / value_length: llama.cpp's converter leaves them out for llama when
#    config.json has no head_dim, and its loader (llama-model.cpp, load_hparams) then uses
#    embedding_length / head_count - sunny writes that same number.
def head_dim(got, arch):
    return got[f"{arch}.embedding_length"][1] // got[f"{arch}.attention.head_count"][1]


EXTRA = {
    "general.size_label": lambda got, arch, n: gguf.size_label(n, 0, 0, 0),
    "{arch}.attention.key_length": lambda got, arch, n: head_dim(got, arch),
    "{arch}.attention.value_length": lambda got, arch, n: head_dim(got, arch),
}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def norm(vtype, v):
    if vtype == gguf.GGUFValueType.FLOAT32:
        return f32(float(v))
    if isinstance(v, (list, tuple)):
        return [norm(None, x) for x in v]
    if isinstance(v, bytes):
        return v.decode("utf-8")
    return v


def reference(hf, outtype):
    cfg = json.load(open(os.path.join(hf, "config.json")))
    cls = get_model_class(cfg["architectures"][0])
    m = cls(Path(hf), FTYPE[outtype], Path(os.devnull + ".gguf"), dry_run=True)
    m.set_vocab = lambda: None  # the tokenizer.* keys: test_vocab_llamacpp.sh (needs the real transformers)
    m.prepare_metadata(vocab_only=False)
    kv = {}
    for k, v in m.gguf_writer.kv_data[0].items():
        kv[k] = (int(v.type), norm(v.type, v.value))
    return kv


def ours(path, ref):
    r = reader(gguf, path)
    kv = {}
    for k, f in r.fields.items():
        if k.startswith("GGUF."):
            continue
        if k.startswith("tokenizer.") and k not in ref:  # not compared here (see the header): no value
            kv[k] = (int(f.types[0]), None)
            continue
        t = f.types[0]
        val = f.contents()
        if t == gguf.GGUFValueType.ARRAY:
            val = [norm(f.types[-1], x) for x in val]
        else:
            val = norm(t, val)
        kv[k] = (int(t), val)
    n_params = sum(int(t.n_elements) for t in r.tensors)
    return kv, n_params


bad = 0
args = sys.argv[2:]
for i in range(0, len(args), 3):
    hf, path, outtype = args[i:i + 3]
    tag = f"{os.path.basename(hf)}/{outtype}"
    try:
        ref = reference(hf, outtype)
    except Exception as e:  # the reference must run: a failure here is a failed test
        print(f"FAIL - {tag}: llama.cpp's converter could not run: {e!r}")
        bad += 1
        continue
    got, n_params = ours(path, ref)
    diffs = []
    for k, (t, v) in ref.items():
        if k not in got:
            diffs.append(f"{k} missing (llama.cpp writes {v!r})")
        elif got[k] != (t, v):
            diffs.append(f"{k} = {got[k][1]!r} (type {got[k][0]}), llama.cpp writes {v!r} (type {t})")
    arch = ref["general.architecture"][1]
    extra = {k.format(arch=arch): rule for k, rule in EXTRA.items()}
    for k in got:
        if k in ref or k.startswith("tokenizer."):
            continue
        if k not in extra:
            diffs.append(f"{k} = {got[k][1]!r} is not written by llama.cpp's converter")
        elif got[k][1] != extra[k](got, arch, n_params):
            diffs.append(f"{k} = {got[k][1]!r}, llama.cpp's rule gives {extra[k](got, arch, n_params)!r}")
    if diffs:
        bad += 1
        print(f"FAIL - {tag}: " + "; ".join(diffs))
    else:
        n_arch = sum(1 for k in ref if not k.startswith("general."))
        print(f"ok   - {tag}: {len(ref)} keys equal llama.cpp's converter's in type and value ({n_arch} architecture keys)")
sys.exit(1 if bad else 0)
