#!/usr/bin/python3
"""lcpp_convert.py - run llama.cpp's own convert_hf_to_gguf.py where `transformers` is not installed.

  lcpp_convert.py LLAMA_CPP_DIR MODEL_DIR OUT.gguf OUTTYPE
  lcpp_convert.py LLAMA_CPP_DIR --jobs JOBS.tsv     (lines "MODEL_DIR<TAB>OUT.gguf<TAB>OUTTYPE")

--jobs imports torch and the converter's modules once (~3 s of CPU each time otherwise) and runs each
conversion in a child forked from that process, each into OUT.gguf.tmp renamed to OUT.gguf when the converter
returns; a failed job leaves no OUT.gguf, prints "FAILED MODEL_DIR -> OUT.gguf: reason" and makes
the exit status 1 after the others ran.

The converter imports transformers only for AutoConfig / AutoTokenizer. For architectures whose
config transformers does not know (fla's rwkv7) llama.cpp itself falls back to reading
config.json when AutoConfig raises, so the shim below does exactly that: AutoConfig and
AutoTokenizer raise, and dtypes Debian's older torch lacks get inert stand-ins; everything else is
llama.cpp's code. Only for vocabularies that do not go
through transformers (the RWKV world vocab), or with SN_LCPP_NO_VOCAB=1 (see below).
With SN_LCPP_HF_TOK=NAME (an @lenml/tokenizer-NAME package) AutoTokenizer is a stand-in that
tokenizes with the HF tokenizers port (_HFTokenizer below), for a GPT-2 BPE vocabulary; with
SN_LCPP_HF_TOK=folder the port loads the model folder's own tokenizer.json / tokenizer_config.json
(post-processor and added tokens as the folder has them, as AutoTokenizer does).
"""
import os
import runpy
import sys
import traceback
import types

lcpp = sys.argv[1]
if sys.argv[2] == "--jobs":
    jobs = [l.rstrip("\n").split("\t") for l in open(sys.argv[3]) if l.strip()]
else:
    jobs = [sys.argv[2:5]]


class _Unavailable:
    @classmethod
    def from_pretrained(cls, *a, **k):
        raise OSError("transformers is not installed (lcpp_convert.py shim)")


_HF_PIPE = None


def _hf_pipe():
    """The node process answering encode/decode requests: one per lcpp_convert.py run, started
    before --jobs forks its children (they convert one after another, so they share it)."""
    global _HF_PIPE
    if _HF_PIPE is None:
        import subprocess
        here = os.path.dirname(os.path.abspath(__file__))
        _HF_PIPE = subprocess.Popen(["node", os.path.join(here, "hf_tok_pipe.mjs"), os.environ["SN_LCPP_HF_TOK"]],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8",
                                    cwd=os.path.join(here, ".."))
    return _HF_PIPE


class _HFTokenizer:
    """AutoTokenizer for a tokenizer.json, with SN_LCPP_HF_TOK=NAME: the token tables are read from the
    file as a fast tokenizer presents them (vocab with the added tokens, get_added_vocab,
    added_tokens_decoder), and every encode / decode is answered by the HF tokenizers port
    (@lenml/tokenizer-NAME, tests/tools/hf_tok_pipe.mjs, one node process for all jobs), so the
    pre-tokenizer fingerprint llama.cpp computes comes from a real tokenization."""

    @classmethod
    def from_pretrained(cls, d, **kw):
        import json
        t = cls()
        tj = json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))
        t.vocab = dict(tj["model"]["vocab"])
        t._added = {a["content"]: a["id"] for a in tj.get("added_tokens", [])}
        t.vocab.update(t._added)
        t.added_tokens_decoder = {a["id"]: types.SimpleNamespace(content=a["content"], special=bool(a.get("special")),
                                                                normalized=bool(a.get("normalized", True)))
                                  for a in tj.get("added_tokens", [])}
        t._p = _hf_pipe()
        t._json = json
        t._dir = os.path.abspath(str(d))
        return t

    def _ask(self, q):
        q["dir"] = self._dir
        self._p.stdin.write(self._json.dumps(q) + "\n")
        self._p.stdin.flush()
        return self._json.loads(self._p.stdout.readline())

    def get_vocab(self):
        return dict(self.vocab)

    def get_added_vocab(self):
        return dict(self._added)

    def encode(self, text, add_special_tokens=True):
        return self._ask({"encode": text, "add_special_tokens": add_special_tokens})

    def decode(self, ids, **kw):
        return self._ask({"decode": list(ids)})


shim = types.ModuleType("transformers")
shim.AutoConfig = _Unavailable
shim.AutoTokenizer = _HFTokenizer if os.environ.get("SN_LCPP_HF_TOK") else _Unavailable
sys.modules["transformers"] = shim
# sentencepiece is not installed either: the shim reads tokenizer.model's pieces, scores and types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spm_shim  # noqa: E402
spm_shim.install()
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
    # The mixture-of-experts families read their tokenizer.json through AutoTokenizer: without it
    # they write no tokenizer.* keys (their vocabularies are the qwen3 / llama2 ones the vocab tests
    # check against llama.cpp already); so do the Qwen3-Next / Qwen3.5 classes.
    from conversion.llama import LlamaModel  # noqa: E402
    from conversion.qwen import Qwen3MoeModel, Qwen3NextModel  # noqa: E402
    for _cls in (LlamaModel, Qwen3MoeModel, Qwen3NextModel):  # (and SmolLM3Model, a LlamaModel)
        _cls.set_vocab = lambda self: None
if len(jobs) == 1 and sys.argv[2] != "--jobs":  # one conversion: exactly the converter's own run
    model, out, outtype = jobs[0]
    sys.argv = ["convert_hf_to_gguf.py", model, "--outfile", out, "--outtype", outtype]
    runpy.run_path(lcpp + "/convert_hf_to_gguf.py", run_name="__main__")
    sys.exit(0)
def run_job(model, out, outtype):
    """One conversion in this (forked) process; exit status 0 when OUT.gguf is in place."""
    tmp = out + ".tmp"
    sys.argv = ["convert_hf_to_gguf.py", model, "--outfile", tmp, "--outtype", outtype]
    err = None
    try:
        runpy.run_path(lcpp + "/convert_hf_to_gguf.py", run_name="__main__")
    except SystemExit as e:  # the converter exits on bad input (and may exit 0 when done)
        if e.code not in (0, None):
            err = e
    except Exception as e:
        err = e
    if err is None and os.path.exists(tmp):
        os.replace(tmp, out)
        print(f"converted {model} -> {out} ({outtype})", flush=True)
        return 0
    if err is not None and not isinstance(err, SystemExit):
        traceback.print_exception(type(err), err, err.__traceback__)
    print(f"FAILED {model} -> {out}: {err!r}", flush=True)
    if os.path.exists(tmp):
        os.unlink(tmp)
    return 1


# Each job runs in a child forked from this process: the imports above (torch, the converter's
# modules) are shared, but nothing a conversion leaves behind in module or class state reaches the
# next one (run in one interpreter, llama.cpp's RWKV-7 converter keeps the fused lerp tensors it has
# written and the second job fails with "Duplicated tensor name").
if os.environ.get("SN_LCPP_HF_TOK"):
    _hf_pipe()
failed = 0
for model, out, outtype in jobs:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = run_job(model, out, outtype)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        failed += 1
        if not os.WIFEXITED(status):
            print(f"FAILED {model} -> {out}: the conversion process died (status {status})", flush=True)
sys.exit(1 if failed else 0)
