#!/usr/bin/env bash
# test_demo_record.sh - the demo's recorded llama.cpp output (scripts/demo_llama_cpp.tsv) stays true:
#  1. offline (what `make demo` does on a fresh clone): scripts/demo_model writes the recorded model
#     byte for byte (SHA-256 of model.safetensors), sunny-convert makes the recorded f16 GGUF (its
#     SHA-256), and scripts/demo_check.sh finds sunny-run token-exact with the recording, exit 0.
#  2. the check can fail: a recording with one token changed, and the GGUF with one weight perturbed
#     (a runtime that computed it so would be wrong: what a skipped norm or a wrong constant does to
#     the logits), each make it say where sunny-run and llama.cpp part and exit 1. A real runtime bug
#     (the RWKV-7 group norm skipped) is scripts/mutate.sh's rwkv7-skip-groupnorm, caught here.
#  4. `make demo`'s script end to end with no Ollama server (OLLAMA_HOST at a dead port): exit 0, the
#     token-exact line, the 4-bit quality lines with their reading, a "not run" line saying how to run
#     the Ollama check, no escape codes into a pipe; and the demo path runs no node, npm or Python.
#  3. with the npm oracle installed: llama.cpp itself, run now on that GGUF, still gives the recorded
#     tokens and per-step top logits, so the recording cannot rot. SN_DEMO_RECORD_WRITE=1 rewrites the
#     recording from llama.cpp (after a deliberate change of the demo model or the converter).
source "$(dirname "$0")/lib.sh"
GEN=$SN_BUILD/scripts/demo_model
CONV=$SN_BIN/sunny-convert
RUN=$SN_BIN/sunny-run
REC=$SN_SRC/scripts/demo_llama_cpp.tsv
CHECK=$SN_SRC/scripts/demo_check.sh
W=$SN_WORK/demo-record
scratch "$W"
rm -rf "$W" && mkdir -p "$W"
N=24
PROMPTS=("The quick brown fox" "def fibonacci(n):")
field() { awk -F'\t' -v k="$1" '$1 == k { print $2; exit }' "$REC"; }

# the demo's own steps (scripts/demo.sh): its folder name, its --name
"$GEN" --out "$W/rwkv7-demo" >/dev/null 2>&1 || { bad "demo_model failed"; finish; }
"$CONV" "$W/rwkv7-demo" -o "$W/demo-f16.gguf" --outtype f16 --name sunny-demo >/dev/null 2>&1 || { bad "sunny-convert failed"; finish; }
G=$W/demo-f16.gguf
model_sha=$(sha256sum <"$W/rwkv7-demo/model.safetensors" | cut -d' ' -f1)
gguf_sha=$(sha256sum <"$G" | cut -d' ' -f1)

if [[ ${SN_DEMO_RECORD_WRITE:-0} == 1 ]]; then
  need_oracle
  jobs=""
  for p in "${PROMPTS[@]}"; do
    ids=$(printf '%s\n' "$p" | $PY -c 'import json,sys; print(json.dumps(sys.stdin.read()[:-1]))' | $ORACLE tokenize "$G" | tr -d '[]')
    jobs+=$(printf '{"model":"%s","prompt_ids":[%s],"n":%d,"decode_top_logits":1,"step_top_logits":3}' "$G" "$ids" $N)$'\n'
  done
  $ORACLE batch --threads 1 <<<"$jobs" >"$W/llama.json" || { bad "llama.cpp did not run"; finish; }
  ver="$(git -C "$(llama_tree)" rev-parse --short=8 HEAD) (node-llama-cpp $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$SN_SRC/tests/node_modules/node-llama-cpp/package.json" | head -1))"
  $PY - "$W/llama.json" "$REC" "$ver" "$model_sha" "$gguf_sha" "${PROMPTS[@]}" <<'PYEOF'
import json, sys
src, rec, ver, msha, gsha, *prompts = sys.argv[1:]
rows = [json.loads(l) for l in open(src)]
with open(rec + ".tmp", "w") as f:
    f.write("# demo_llama_cpp.tsv - llama.cpp's own greedy decoding of the demo model (scripts/demo_model with its\n"
            "# defaults, converted by sunny-convert --outtype f16 --name sunny-demo), recorded once with the pinned\n"
            "# llama.cpp through node-llama-cpp (tests/tools/llama_oracle.mjs, 1 thread). scripts/demo_check.sh\n"
            "# compares sunny-run with it offline; tests/integration/test_demo_record.sh re-checks it against\n"
            "# llama.cpp and rewrites it with SN_DEMO_RECORD_WRITE=1. Tab-separated; a case row: prompt, its\n"
            "# token ids, the greedy token ids, then each step's 3 largest raw logits as id:logit.\n")
    f.write(f"oracle\t{ver}\nmodel_sha256\t{msha}\ngguf_sha256\t{gsha}\n")
    for p, r in zip(prompts, rows):
        steps = ";".join(",".join(f"{i}:{l:.6f}" for i, l in s["top"]) for s in r["step_logits"])
        f.write("case\t%s\t%s\t%s\t%s\n" % (p, ",".join(map(str, r["prompt_ids"])), ",".join(map(str, r["ids"])), steps))
import os
os.replace(rec + ".tmp", rec)
PYEOF
  ok "recording rewritten: $REC"
fi

# ---- 1. offline: the recorded model and GGUF, byte for byte, and sunny-run token-exact with them
[[ $model_sha == "$(field model_sha256)" ]] && ok "demo_model writes the recorded model.safetensors (SHA-256 ${model_sha:0:16}...)" \
  || bad "demo_model's model.safetensors is $model_sha, the recording's $(field model_sha256)"
[[ $gguf_sha == "$(field gguf_sha256)" ]] && ok "sunny-convert writes the recorded f16 GGUF (SHA-256 ${gguf_sha:0:16}...)" \
  || bad "the f16 GGUF is $gguf_sha, the recording's $(field gguf_sha256)"
out=$(bash "$CHECK" "$RUN" "$G" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -Eq "^token-exact with llama.cpp [0-9a-f]{8} \(node-llama-cpp [0-9.]+\): ([0-9]+)/\1 " <<<"$out" \
  && ok "demo_check: $out" || bad "demo_check on the recorded GGUF: rc=$rc $out"

# ---- 2. the check fails when sunny-run and the recording part
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "case" && !done { split($4, a, ","); a[5] = a[5] + 1; s = a[1]; for (i = 2; i in a; i++) s = s "," a[i]; $4 = s; done = 1 } { print }' \
  "$REC" >"$W/tampered.tsv"
out=$(bash "$CHECK" "$RUN" "$G" "$W/tampered.tsv" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "differs from llama.cpp at generated token 5 of $N" <<<"$out" && grep -q "^NOT token-exact" <<<"$out" \
  && ok "a recording with token 5 changed: exit 1, names the step" || bad "tampered recording: rc=$rc $out"
$PY "$SN_SRC/tests/tools/gguf_edit.py" "$G" "$W/perturbed.gguf" --scale blk.5.channel_mix_value.weight 1.5 >/dev/null 2>&1 || bad "gguf_edit failed"
out=$(bash "$CHECK" "$RUN" "$W/perturbed.gguf" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "^note: .* is not the GGUF the recording was made on" <<<"$out" && grep -q "^NOT token-exact" <<<"$out" \
  && ok "one weight perturbed (as a wrong computation would): exit 1: $(grep -m1 FAIL <<<"$out")" || bad "perturbed GGUF: rc=$rc $out"

# ---- 4. scripts/demo.sh end to end, offline, no server
OLLAMA_HOST=127.0.0.1:9 bash "$SN_SRC/scripts/demo.sh" "$SN_BUILD" >"$W/demo.out" 2>&1; rc=$?
[[ $rc == 0 ]] && grep -Eq "^  - token-exact with llama.cpp [0-9a-f]{8} .*: ([0-9]+)/\1 greedy tokens" "$W/demo.out" \
  && ok "make demo's script: exit 0 with the token-exact line" || bad "demo.sh: rc=$rc $(tail -20 "$W/demo.out")"
grep -Eq "^  INT4 blob \(sunny's\) +KL divergence [0-9.]+ nats, top-1 agreement [0-9]+%" "$W/demo.out" && grep -q "^reading: " "$W/demo.out" \
  && ok "4-bit quality: KL and top-1 agreement with a reading: $(grep '^reading' "$W/demo.out" | cut -c1-90)..." || bad "no quality lines in the demo"
grep -q "^checks not run here:" "$W/demo.out" && grep -q "Ollama gives sunny-run's tokens: no server at 127.0.0.1:9; start one" "$W/demo.out" \
  && ok "no server: a plain line says how to run the Ollama check" || bad "no 'not run' line for Ollama"
grep -q $'\e' "$W/demo.out" && bad "escape codes in the demo's piped output" || ok "no escape codes when the demo's output is a pipe"
if hits=$(grep -nE '^\s*(node|npm|\$ORACLE|python3?|\$PY)\b' "$SN_SRC/scripts/demo.sh" "$SN_SRC/scripts/demo_check.sh"); then
  bad "the demo path runs node/npm/Python: $hits"
else ok "scripts/demo.sh and demo_check.sh run no node, npm or Python"; fi

# ---- 3. the recording against llama.cpp itself, when the oracle is here
if [[ -d $SN_SRC/tests/node_modules/node-llama-cpp ]] && command -v node >/dev/null; then
  jobs=""
  while IFS=$'\t' read -r kind p pids ids steps; do
    [[ $kind == case ]] || continue
    jobs+=$(printf '{"model":"%s","prompt_ids":[%s],"n":%d,"decode_top_logits":1,"step_top_logits":3}' "$G" "$pids" $N)$'\n'
  done <"$REC"
  if $ORACLE batch --threads 1 <<<"$jobs" >"$W/now.json" 2>"$W/now.err"; then
    if res=$($PY - "$W/now.json" "$REC" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cases = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.startswith("case\t")]
assert len(rows) == len(cases), f"{len(rows)} results for {len(cases)} cases"
worst = 0.0
for r, c in zip(rows, cases):
    ids = ",".join(map(str, r["ids"]))
    assert ids == c[3], f"prompt {c[1]!r}: llama.cpp now gives {ids}, recorded {c[3]}"
    for k, (s, rs) in enumerate(zip(r["step_logits"], c[4].split(";"))):
        rec = [(int(a), float(b)) for a, b in (x.split(":") for x in rs.split(","))]
        assert [i for i, _ in s["top"]] == [i for i, _ in rec], f"prompt {c[1]!r} step {k + 1}: top ids {s['top']} vs {rec}"
        worst = max(worst, max(abs(l - rl) for (_, l), (_, rl) in zip(s["top"], rec)))
assert worst < 1e-4, f"top logits moved by {worst}"
print(f"{len(rows)} prompts: the same tokens and top-3 logits per step (max |diff| {worst:.1e})")
PYEOF
    ); then ok "llama.cpp now = the recording: $res"; else bad "llama.cpp differs from the recording: $res"; fi
  else
    bad "llama.cpp did not run: $(tail -2 "$W/now.err")"
  fi
else
  skip_check "the npm oracle is not installed: the recording is not re-checked against llama.cpp (scripts/deps.sh)"
fi
finish
