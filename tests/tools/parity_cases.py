#!/usr/bin/env python3
"""parity_cases.py - sunny-run against llama.cpp's answers, case by case, for the family tests whose
cases differ in length, thread count or context (test_qwen35.sh; test_phi3_smollm3.sh and
test_mamba2.sh run the same judgement inline).

    parity_cases.py CASES.tsv ORACLE.jsonl SUNNY_RUN

CASES.tsv: "tag<TAB>gguf<TAB>prompt ids as a JSON list<TAB>n[<TAB>sunny-run options]" lines, in the
order tests/tools/llama_oracle.mjs batch answered them (ORACLE.jsonl); the options (e.g. "-t 1",
"-c 256") are added to sunny-run's command line, which runs 2 threads unless they say -t.
Tokens: the n greedy tokens must be equal (no tie rule: fixtures whose top-2 gaps are tiny belong to
tests/tools/parity_judge.py). Logits: where the oracle's answer has top_logits (and
decode_top_logits), the last decode step's logits and the same step evaluated as one batch must be
within 1e-5 of llama.cpp's: the max abs difference over llama.cpp's 8 largest raw logits, each
relative to the largest (sunny-run prints log-probs). One line per case; exit 1 on any failure."""
import json
import subprocess
import sys

LIMIT = 1e-5


def sunny(run, gguf, ids, n, opts):
    if "-t" not in opts:
        opts = ["-t", "2"] + opts
    out = subprocess.run([run, gguf, "--prompt-ids", ",".join(map(str, ids)), "-n", str(n), "--json",
                          "--ignore-eos"] + opts, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"sunny-run failed on {gguf}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def diff(top, ours):
    if top[0][0] not in ours:
        return float("inf")
    return max(abs((l - top[0][1]) - (ours[t] - ours[top[0][0]])) for t, l in top if t in ours)


def main():
    cases = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
    oracle = [json.loads(l) for l in open(sys.argv[2])]
    run = sys.argv[3]
    if len(oracle) != len(cases):
        sys.exit(f"{len(cases)} cases but {len(oracle)} oracle answers")
    fail = 0
    for c, o in zip(cases, oracle):
        tag, gguf, p, n = c[:4]
        opts = c[4].split() if len(c) > 4 else []
        prompt = json.loads(p)
        short = p if len(p) < 60 else f"({len(prompt)} tokens)"
        s = sunny(run, gguf, prompt, int(n), opts)
        a, b = o["ids"], s["ids"]
        if a != b:
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print(f"FAIL {tag} prompt {short}: tokens diverge at step {first}\n  llama.cpp {a}\n  sunny-run {b}")
            fail += 1
            continue
        if "top_logits" not in o:
            print(f"PASS {tag} prompt {short}: {n} tokens equal ({len(set(a))} distinct)")
            continue
        dec = diff(o["decode_top_logits"], dict(s["top_logprobs"]))
        bat = diff(o["top_logits"], dict(sunny(run, gguf, prompt + a[:-1], 1, opts)["top_logprobs"]))
        ok = dec <= LIMIT and bat <= LIMIT
        fail += not ok
        print(f"{'PASS' if ok else 'FAIL'} {tag} prompt {short}: {n} tokens equal ({len(set(a))} distinct); "
              f"last-step logits max diff decode {dec:.1e}, batch {bat:.1e} (limit {LIMIT:g})")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
