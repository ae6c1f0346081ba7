#!/usr/bin/env bash
# test_convert_parity.sh - sunny-convert's GGUFs against llama.cpp, for every fixture family x outtype:
#  * tensor bytes equal llama.cpp's converter math (gguf-py quants from the llama.cpp tree that
#    node-llama-cpp ships) for f32/f16/bf16/q8_0, and the q4_0 file equals what llama.cpp's own
#    llama_model_quantize (MOSTLY_Q4_0) writes from our f32 GGUF;
#  * llama.cpp loads each GGUF and greedy-decodes 32 tokens (f32 twice: deterministic); q8_0/q4_0
#    are reported as top-1 agreement with f32 (informational: quantization changes the model).
source "$(dirname "$0")/lib.sh"
need_oracle

tree=$SN_WORK/llama.cpp
if [[ ! -d $tree/gguf-py ]]; then
  git clone -q "$SN_SRC/tests/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$tree" 2>/dev/null ||
    skip "cannot unpack llama.cpp's source bundle"
fi
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
jobs=$SN_WORK/convert_parity_jobs.jsonl
: >"$jobs"

for fam in llama3 qwen2 qwen3 mistral; do
  src=$(fixture "$fam" bf16) || { bad "$fam: fixture generation failed"; continue; }
  args=()
  for ot in f32 f16 bf16 q8_0 q4_0; do
    g=$(gguf_of "$fam" "$ot") || { bad "$fam/$ot: sunny-convert failed"; continue; }
    [[ $ot != q4_0 ]] && args+=("$g" "$ot")
    prompt=$( [[ $fam == mistral ]] && echo '[1,415,2936,9060,285,1142]' || echo '[9906,1917,11,1234,5678,42]' )
    echo "{\"model\":\"$g\",\"prompt_ids\":$prompt,\"n\":32,\"tag\":\"$fam/$ot\"}" >>"$jobs"
    [[ $ot == f32 ]] && echo "{\"model\":\"$g\",\"prompt_ids\":$prompt,\"n\":32}" >>"$jobs"
  done
  if out=$($PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" "$src" "${args[@]}" 2>&1); then
    ok "$fam: tensor bytes equal llama.cpp converter's for f32/f16/bf16/q8_0 ($(grep -c mismatches <<<"$out") files)"
  else bad "$fam: tensor bytes differ:"; echo "$out" | head -20; fi
  ref=$SN_WORK/gguf/$fam-llamacpp-q4_0.gguf
  if "$SN_BUILD/tests/llama_quantize_oracle" "$(gguf_of "$fam" f32)" "$ref" 2 >/dev/null 2>&1; then
    cmp -s "$(gguf_of "$fam" q4_0)" "$ref" && ok "$fam/q4_0: file equals llama-quantize MOSTLY_Q4_0 byte for byte" ||
      { bad "$fam/q4_0 differs from llama-quantize:";
        $PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" --same "$(gguf_of "$fam" q4_0)" "$ref" | head -20; }
  else bad "$fam: llama_model_quantize failed"; fi
done

# One llama.cpp process for every greedy run.
$ORACLE batch --threads 2 <"$jobs" >"$SN_WORK/convert_parity_results.jsonl" 2>/dev/null || bad "llama.cpp oracle failed"
$PY - "$jobs" "$SN_WORK/convert_parity_results.jsonl" <<'PY' || sn_fail=$((sn_fail + 1))
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
res = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
bad = 0
if len(res) != len(jobs):
    print(f"FAIL - llama.cpp answered {len(res)} of {len(jobs)} runs"); sys.exit(1)
ids, prev = {}, None
for j, r in zip(jobs, res):
    if "tag" not in j:  # the repeated f32 run
        if r["ids"] != prev:
            print(f"FAIL - {j['model']}: llama.cpp greedy output not deterministic"); bad += 1
        continue
    prev = r["ids"]
    n, distinct = len(r["ids"]), len(set(r["ids"]))
    ids[j["tag"]] = r["ids"]
    if n != 32:
        print(f"FAIL - {j['tag']}: {n} tokens"); bad += 1
    else:
        print(f"ok   - {j['tag']}: llama.cpp loads it and greedy-decodes 32 tokens ({distinct} distinct)")
for fam in ("llama3", "qwen2", "qwen3", "mistral"):
    ref = ids.get(fam + "/f32")
    for ot in ("f16", "bf16", "q8_0", "q4_0"):
        c = ids.get(f"{fam}/{ot}")
        if ref and c:
            k = next((i for i, (a, b) in enumerate(zip(ref, c)) if a != b), len(ref))
            print(f"info - {fam}: {ot} follows f32 for {k}/32 greedy steps before the first different token")
sys.exit(1 if bad else 0)
PY
finish
