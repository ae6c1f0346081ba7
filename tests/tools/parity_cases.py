#!/usr/bin/env python3
"""parity_cases.py - sunny-run against llama.cpp's answers, case by case, for the family tests whose
cases differ in length, thread count or context (test_qwen35.sh, test_lfm2.sh, test_phi3_smollm3.sh,
test_mamba2.sh, test_granitehybrid.sh, test_moe_run.sh, test_gptoss_run.sh).

    parity_cases.py CASES.tsv ORACLE.jsonl SUNNY_RUN [--limit L] [--raw] [--min-distinct K] [--experts]

CASES.tsv: "tag<TAB>gguf<TAB>prompt ids as a JSON list[<TAB>n[<TAB>sunny-run options]]" lines (n 32
when left out), in the order tests/tools/llama_oracle.mjs batch answered them (ORACLE.jsonl; lib.sh's
oracle_cases writes it for cases without options); the options (e.g. "-t 1", "-c 256") are added to
sunny-run's command line, which runs 2 threads unless they say -t.
Tokens: the n greedy tokens must be equal (no tie rule: fixtures whose top-2 gaps are tiny belong to
tests/tools/parity_judge.py), and with --min-distinct hold at least K distinct ids (a degenerate
repeating answer proves little). Logits: where the oracle's answer has decode_top_logits, the last
decode step's logits, and where it has top_logits, the same step evaluated as one batch, must be
within L (default 1e-5) of llama.cpp's: the max abs difference over llama.cpp's 8 largest raw logits,
each relative to the largest, from sunny-run's log-probs (or its raw logits with --raw).
--experts: sunny-run's expert histograms, summed per family (the tag before "/"), must choose every
expert and none more than half of the time. One line per case; exit 1 on any failure."""
import json
import subprocess
import sys


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


def options(argv):
    opt = {"--limit": 1e-5, "--raw": False, "--min-distinct": 0, "--experts": False}
    pos, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("--limit", "--min-distinct") and i + 1 < len(argv):
            opt[a] = type(opt[a])(argv[i + 1])
            i += 2
            continue
        if a in ("--raw", "--experts"):
            opt[a] = True
        elif a.startswith("--"):
            sys.exit(f"parity_cases.py: unknown option {a}")
        else:
            pos.append(a)
        i += 1
    if len(pos) != 3:
        sys.exit(__doc__)
    return pos, opt


def main():
    (cases_path, oracle_path, run), opt = options(sys.argv[1:])
    limit, field = opt["--limit"], "top_logits" if opt["--raw"] else "top_logprobs"
    cases = [l.rstrip("\n").split("\t") for l in open(cases_path) if l.strip()]
    oracle = [json.loads(l) for l in open(oracle_path)]
    if len(oracle) != len(cases):
        sys.exit(f"{len(cases)} cases but {len(oracle)} oracle answers")
    fail, hist = 0, {}
    for c, o in zip(cases, oracle):
        tag, gguf, p = c[:3]
        n = int(c[3]) if len(c) > 3 else 32
        opts = c[4].split() if len(c) > 4 else []
        prompt = json.loads(p)
        short = p if len(p) < 60 else f"({len(prompt)} tokens)"
        s = sunny(run, gguf, prompt, n, opts)
        if opt["--experts"]:
            h = hist.setdefault(tag.split("/")[0], [0] * len(s.get("expert_histogram", [])))
            for e, k in enumerate(s.get("expert_histogram", [])):
                h[e] += k
        a, b = o["ids"], s["ids"]
        if a != b:
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print(f"FAIL {tag} prompt {short}: tokens diverge at step {first}\n  llama.cpp {a}\n  sunny-run {b}")
            fail += 1
            continue
        ok, what = len(set(a)) >= opt["--min-distinct"], []
        if "decode_top_logits" in o:
            dec = diff(o["decode_top_logits"], dict(s[field]))
            ok &= dec <= limit
            what.append(f"decode {dec:.1e}")
        if "top_logits" in o:
            bat = diff(o["top_logits"], dict(sunny(run, gguf, prompt + a[:-1], 1, opts)[field]))
            ok &= bat <= limit
            what.append(f"batch {bat:.1e}")
        fail += not ok
        logits = f"; last-step logits max diff {', '.join(what)} (limit {limit:g})" if what else ""
        need = f", at least {opt['--min-distinct']} wanted" if len(set(a)) < opt["--min-distinct"] else ""
        print(f"{'PASS' if ok else 'FAIL'} {tag} prompt {short}: {n} tokens equal ({len(set(a))} distinct{need}){logits}")
    for fam, h in hist.items():
        spread = len(h) > 0 and min(h) > 0 and max(h) <= sum(h) / 2
        print(f"{'PASS' if spread else 'FAIL'} {fam} expert histogram (choices over all layers and runs): {h}")
        fail += not spread
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
