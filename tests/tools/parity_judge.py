#!/usr/bin/env python3
"""parity_judge.py - judge sunny-run's greedy tokens against llama.cpp's answers (one JSON line per case).

    parity_judge.py CASES.tsv ORACLE.jsonl SUNNY_RUN N [THREADS]

CASES.tsv: "tag<TAB>gguf<TAB>comma-separated prompt ids" lines, in the order the oracle answered.
A case passes when the N greedy tokens are equal, or as a proven tie: at the first differing step
sunny-run's top-2 logit gap must be < 1e-3 x max|logit|. For equal cases the final-step logits are
compared too (the last decode step and the same step evaluated as one batch): the max abs difference
over llama.cpp's 8 largest raw logits, each relative to the largest (sunny-run prints log-probs).
On an AVX-512 machine without an SN_CPU cap any difference above 1e-5 fails (sunny mirrors that
build's summation order); elsewhere only the tokens count. Prints a summary line
"N/M cases pass" and exits 1 on any failure."""
import json, os, subprocess, sys

cases = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
oracle = [json.loads(l) for l in open(sys.argv[2])]
run, n = sys.argv[3], int(sys.argv[4])
threads = sys.argv[5] if len(sys.argv) > 5 else "2"
if len(oracle) != len(cases):
    sys.exit(f"llama.cpp answered {len(oracle)} of {len(cases)} cases")
strict = "avx512f" in open("/proc/cpuinfo").read().split() and not os.environ.get("SN_CPU")
inexact = 0


def logit_diff(top, ours):
    global inexact
    if top[0][0] not in ours:
        inexact += 1
        return "n/a (top tokens differ)"
    d = [abs((l - top[0][1]) - (ours[t] - ours[top[0][0]])) for t, l in top if t in ours]
    inexact += max(d) > 1e-5
    return f"{max(d):.1e}"


def sunny(gguf, ids, steps):
    out = subprocess.run([run, gguf, "--prompt-ids", ",".join(map(str, ids)), "-n", str(steps), "--json",
                          "--ignore-eos", "-t", threads], capture_output=True, text=True)
    if out.returncode:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"
    return json.loads(out.stdout), None


fail = refused = 0
for (tag, gguf, ids), o in zip(cases, oracle):
    prompt = [int(i) for i in ids.split(",")]
    assert o["prompt_ids"] == prompt and o["model"] == gguf
    s, why = sunny(gguf, prompt, n)
    if s is None:
        print(f"FAIL {tag}: sunny-run refused or failed: {why}")
        fail += 1
        refused += 1
        continue
    a, b = o["ids"], s["ids"]
    first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    if first is None:
        dec = logit_diff(o["decode_top_logits"], dict(s["top_logprobs"]))
        bat_run, _ = sunny(gguf, prompt + a[:-1], 1)
        bat = logit_diff(o["top_logits"], dict(bat_run["top_logprobs"])) if bat_run else "n/a"
        print(f"PASS {tag}: {n} tokens equal; final-step logits max abs diff: decode {dec}, batch {bat}")
        continue
    t, _ = sunny(gguf, prompt + b[:first], 1)
    gap = t["top_logprobs"][0][1] - t["top_logprobs"][1][1]
    thr = 1e-3 * t["max_abs_logit"]
    verdict = json.dumps({"gap": round(gap, 6), "threshold": round(thr, 6), "tie": gap < thr})
    if gap < thr:
        print(f"PASS {tag}: tie at step {first} {verdict}")
    else:
        print(f"FAIL {tag}: diverged at step {first} {verdict}")
        print(f"  llama.cpp: {a}\n  sunny-run: {b}")
        fail += 1
print(f"parity: {len(cases) - fail}/{len(cases)} cases pass ({refused} refused by sunny-run), {fail} failures; "
      f"{inexact} final-step logit comparisons differ by more than 1e-5")
if inexact and strict:
    print(f"FAIL: {inexact} logit comparisons above 1e-5 on an AVX-512 machine (expected 0)")
sys.exit(1 if fail or (inexact and strict) else 0)
