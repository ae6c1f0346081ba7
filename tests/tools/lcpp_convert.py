#!/usr/bin/python3
"""lcpp_convert.py - run llama.cpp's own convert_hf_to_gguf.py where `transformers` is not installed.

  lcpp_convert.py LLAMA_CPP_DIR MODEL_DIR OUT.gguf OUTTYPE

The converter imports transformers only for AutoConfig / AutoTokenizer. For architectures whose
config transformers does not know (fla's rwkv7) llama.cpp itself falls back to reading
config.json when AutoConfig raises, so the shim below does exactly that: AutoConfig and
AutoTokenizer raise, and dtypes Debian's older torch lacks get inert stand-ins; everything else is
llama.cpp's code. Only for vocabularies that do not go
through transformers (the RWKV world vocab), or with SN_LCPP_NO_VOCAB=1 (see below).
"""
import os
import runpy
import sys
import types

lcpp, model, out, outtype = sys.argv[1:5]


class _Unavailable:
    @classmethod
    def from_pretrained(cls, *a, **k):
        raise OSError("transformers is not installed (lcpp_convert.py shim)")


shim = types.ModuleType("transformers")
shim.AutoConfig = _Unavailable
shim.AutoTokenizer = _Unavailable
sys.modules["transformers"] = shim
# Debian's torch 1.13 predates the float8 / wide unsigned dtypes the converter's lookup tables name;
# they are only dictionary keys there (our checkpoints hold none of them), so stand-ins suffice.
import torch  # noqa: E402
for _n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16", "uint32", "uint64"):
    if not hasattr(torch, _n):
        setattr(torch, _n, type("missing_" + _n, (), {})())
sys.path.insert(0, lcpp + "/gguf-py")
sys.path.insert(0, lcpp)
try:
    import tqdm  # noqa: F401
except ImportError:  # only draws the progress bar
    _tq = types.ModuleType("tqdm")

    class _Bar:
        def __init__(self, *a, **k):
            pass

        def update(self, *a, **k):
            pass

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            pass

    _tq.tqdm = _Bar
    sys.modules["tqdm"] = _tq
if os.environ.get("SN_LCPP_NO_VOCAB"):
    # Mamba-2 with a tokenizer.json needs transformers' AutoTokenizer for its vocabulary; with
    # SN_LCPP_NO_VOCAB=1 the converter writes everything but tokenizer.* (set_vocab only pads
    # vocab_size as llama.cpp's does), so keys and tensors can still be compared with llama.cpp's.
    from conversion.mamba import Mamba2Model  # noqa: E402

    def _pad_only(self):
        pad = self.hparams.get("pad_vocab_size_multiple", 16)
        self.hparams["vocab_size"] = -(self.hparams["vocab_size"] // -pad) * pad

    Mamba2Model.set_vocab = _pad_only
sys.argv = ["convert_hf_to_gguf.py", model, "--outfile", out, "--outtype", outtype]
runpy.run_path(lcpp + "/convert_hf_to_gguf.py", run_name="__main__")
