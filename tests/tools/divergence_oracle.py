#!/usr/bin/python3
"""divergence_oracle.py - where llama.cpp's greedy outputs of two GGUFs first differ (tests only).

  divergence_oracle.py INSTALLED.gguf SERVED.gguf --prompt TEXT [-n N]

The expected verdict of a smoke gate whose server runs SERVED while sunny runs INSTALLED, computed by
llama.cpp alone (tests/tools/llama_oracle.mjs batch, one node process: greedy runs that keep every step's top-2
raw logits), never by sunny. Prints one JSON object:
  k            first index where the greedy token ids differ (0-based; the tokens before it are equal)
  n            tokens generated on the installed side (N unless an end-of-generation token came first)
  installed / served   the token texts at k, as llama.cpp detokenizes each id on its own
  installed_q / served_q   the same, quoted the way sunny's smoke report quotes tokens
  gap_installed / gap_served   top-1 minus top-2 raw logit at step k on each side, and
  rel_installed / rel_served   those gaps over that step's max|logit| (sunny's tie rule: gap < 1e-3 x it)
  text_byte    first byte where the two generated texts (UTF-8) differ
  text_token   how many installed tokens lie wholly before text_byte (a text-only gate's position)
  prompt_ids   the prompt as llama.cpp tokenized it (BOS as the GGUF asks)
Exit 1 (with a message) when the outputs do not differ within N tokens, or a token text at or before
the divergence is not whole UTF-8 (the text positions would not be exact)."""
import argparse
import json
import os
import subprocess
import sys

ORACLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llama_oracle.mjs")


def batch(jobs):
    # 1 llama.cpp thread: these short runs give the same answer at 1 and 2 threads (compared on the
    # test_ollama_e2e files: identical output), and 2 threads spin at ggml's barriers beside another test
    p = subprocess.run(["node", ORACLE, "batch", "--threads", "1"], input="".join(json.dumps(j) + "\n" for j in jobs),
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"llama_oracle batch failed: {p.stderr.strip()[-400:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def quote(s):
    """sunny's show_text: "..." with \\n, \\" and \\xNN for other control bytes."""
    out = []
    for ch in s:
        if ch == "\n":
            out.append("\\n")
        elif ch == '"':
            out.append('\\"')
        elif ord(ch) < 0x20:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("installed")
    ap.add_argument("served")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("-n", type=int, default=32)
    a = ap.parse_args()
    g = [os.path.abspath(a.installed), os.path.abspath(a.served)]
    r = batch([{"model": m, "prompt": a.prompt, "n": a.n, "pieces": True, "step_top_logits": 2} for m in g])
    if r[0]["prompt_ids"] != r[1]["prompt_ids"]:
        sys.exit(f"the two GGUFs tokenize the prompt differently: {r[0]['prompt_ids']} vs {r[1]['prompt_ids']}")
    x, y = r[0]["ids"], r[1]["ids"]
    k = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), None)
    if k is None:
        sys.exit(f"greedy outputs do not differ within {a.n} tokens: {x}")
    for side in r:
        if any("\ufffd" in p for p in side["pieces"][:k + 1]):
            sys.exit(f"a token text up to the divergence is not whole UTF-8: {side['pieces'][:k + 1]}")
    prompt = r[0]["prompt_ids"]
    t = [s["step_logits"][k] for s in r]
    gaps = [s["top"][0][1] - s["top"][1][1] for s in t]
    rel = [gp / s["max_abs"] for gp, s in zip(gaps, t)]
    ta, tb = "".join(r[0]["pieces"]).encode(), "".join(r[1]["pieces"]).encode()
    byte = next((i for i in range(min(len(ta), len(tb))) if ta[i] != tb[i]), min(len(ta), len(tb)))
    ends, off = [], 0
    for p in r[0]["pieces"]:
        off += len(p.encode())
        ends.append(off)
    print(json.dumps({"k": k, "n": len(x), "installed": r[0]["pieces"][k], "served": r[1]["pieces"][k],
                      "installed_q": quote(r[0]["pieces"][k]), "served_q": quote(r[1]["pieces"][k]),
                      "gap_installed": gaps[0], "gap_served": gaps[1], "rel_installed": rel[0], "rel_served": rel[1],
                      "text_byte": byte, "text_token": sum(e <= byte for e in ends), "prompt_ids": prompt},
                     ensure_ascii=False))


if __name__ == "__main__":
    main()
