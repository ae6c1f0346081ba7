#!/usr/bin/env python3
"""parity_judge_selftest.py - the tie rule of tests/tools/parity_judge.py must be able to fail.

Real ties are rare on the fixtures, so the judge's tie path is exercised here with a scripted
stand-in for sunny-run (this file run as `fake-run GGUF --prompt-ids ... -n N ...`, answering from a
scenario) and hand-written llama.cpp answers. Each scenario says whether the judge must pass:
  tie-both        a tie on both engines, same two candidates, picked differently -> pass, and the
                  tokens after it are compared on llama.cpp's path (all match)
  tie-then-wrong  the same tie, but after it sunny's continuation differs at a clear step -> fail
  tie-ours-only   sunny's gap is tiny but llama.cpp's is not -> fail
  tie-theirs-only llama.cpp's gap is tiny but sunny's is not -> fail
  other-pair      both gaps tiny but llama.cpp's pick is not sunny's runner-up -> fail
  equal-close     both picked the same token at a near-tie -> equal, later tokens compared, pass
  equal-then-off  the same, then a clear divergence later -> fail
Usage: parity_judge_selftest.py  (exit 0 when every scenario gets the verdict it must)."""
import json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = [5, 6, 7]
A = [10, 11, 12, 13, 14, 15]  # llama.cpp's greedy tokens


def fake_run(argv):
    """sunny-run stand-in: tokens from the scenario (keyed by the step = history - prompt)."""
    sc = json.load(open(os.environ["SN_FAKE_SCENARIO"]))
    hist = [int(x) for x in argv[argv.index("--prompt-ids") + 1].split(",")]
    n = int(argv[argv.index("-n") + 1])
    ids, last = [], None
    for _ in range(n):
        k = len(hist) - len(PROMPT)
        on_path = hist[len(PROMPT):] == A[:k]
        pick, second, gap = sc["steps"].get(str(k), [A[k] if k < len(A) else 99, 98, 5.0]) if on_path else [97, 96, 5.0]
        ids.append(pick)
        last = [[pick, -0.1], [second, -0.1 - gap]]
        hist = hist + [pick]
    print(json.dumps({"ids": ids, "top_logprobs": last, "max_abs_logit": 10.0}))


def scenario(name, steps, theirs, must_pass):
    o = {"model": "m.gguf", "prompt_ids": PROMPT, "ids": A, "top_logits": [[A[-1], 1.0]],
         "decode_top_logits": [[A[-1], 1.0]],
         "step_logits": [{"top": [[t, 1.0], [t + 100, 0.0]], "max_abs": 10.0} for t in A]}
    for k, top in theirs.items():
        o["step_logits"][k] = {"top": top, "max_abs": 10.0}
    return name, {"steps": {str(k): v for k, v in steps.items()}}, o, must_pass


SCENARIOS = [
    # step 2: sunny picks 50 (runner-up 12 = llama.cpp's pick), llama.cpp picks 12 (runner-up 50)
    scenario("tie-both", {2: [50, 12, 0.001]}, {2: [[12, 1.0], [50, 0.9995]]}, True),
    scenario("tie-then-wrong", {2: [50, 12, 0.001], 4: [60, 14, 3.0]}, {2: [[12, 1.0], [50, 0.9995]]}, False),
    scenario("tie-ours-only", {2: [50, 12, 0.001]}, {2: [[12, 1.0], [50, 0.5]]}, False),
    scenario("tie-theirs-only", {2: [50, 12, 0.5]}, {2: [[12, 1.0], [50, 0.9995]]}, False),
    scenario("other-pair", {2: [50, 51, 0.001]}, {2: [[12, 1.0], [50, 0.9995]]}, False),
    scenario("equal-close", {2: [12, 50, 0.0001]}, {2: [[12, 1.0], [50, 0.99995]]}, True),
    scenario("equal-then-off", {2: [12, 50, 0.0001], 4: [60, 14, 3.0]}, {2: [[12, 1.0], [50, 0.99995]]}, False),
]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "fake-run":
        return fake_run(sys.argv[2:])
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        run = os.path.join(d, "sunny-run")
        with open(run, "w") as f:
            f.write(f"#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} fake-run \"$@\"\n")
        os.chmod(run, 0o755)
        cases = os.path.join(d, "cases.tsv")
        with open(cases, "w") as f:
            f.write("t\tm.gguf\t" + ",".join(map(str, PROMPT)) + "\n")
        for name, sc, o, must_pass in SCENARIOS:
            json.dump(sc, open(os.path.join(d, "sc.json"), "w"))
            json.dump(o, open(os.path.join(d, "oracle.jsonl"), "w"))
            r = subprocess.run([sys.executable, os.path.join(HERE, "parity_judge.py"), cases,
                                os.path.join(d, "oracle.jsonl"), run, str(len(A))],
                               env={**os.environ, "SN_FAKE_SCENARIO": os.path.join(d, "sc.json"), "SN_CPU": "selftest"},
                               capture_output=True, text=True)
            passed = r.returncode == 0
            ok = passed == must_pass
            bad += not ok
            line = (r.stdout.strip().splitlines() or [r.stderr.strip()])[0]
            print(f"{'ok  ' if ok else 'FAIL'} judge self-test {name}: judge {'passed' if passed else 'failed'} "
                  f"(must {'pass' if must_pass else 'fail'}): {line[:160]}")
    print(f"parity judge self-test: {len(SCENARIOS) - bad}/{len(SCENARIOS)} verdicts right")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
