#!/usr/bin/env bash
# test_convert_parity.sh - sunny-convert's GGUFs against llama.cpp, for every fixture family x outtype:
#  * tensor bytes equal llama.cpp's converter math (gguf-py quants from the llama.cpp tree that
#    node-llama-cpp ships) for f32/f16/bf16/q8_0, and equal llama.cpp's own llama_model_quantize
#    (MOSTLY_Q4_0 from our f32 GGUF) for q4_0;
#  * llama.cpp loads each GGUF and greedy-decodes 32 tokens, deterministically; the q8_0/q4_0 runs are
#    reported as top-1 agreement with f32 (informational: quantization changes the model).
source "$(dirname "$0")/lib.sh"
need_oracle

tree=$SN_WORK/llama.cpp
if [[ ! -d $tree/gguf-py ]]; then
  git clone -q "$SN_SRC/tests/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$tree" 2>/dev/null ||
    skip "cannot unpack llama.cpp's source bundle"
fi
libllama=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
export SN_LIBLLAMA=$libllama

agree() { # fraction of equal positions between two JSON id arrays
  $PY -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); n=min(len(a),len(b)); print(sum(x==y for x,y in zip(a,b)), "/", n)' "$1" "$2"
}

for fam in llama3 qwen2 qwen3 mistral; do
  src=$(fixture "$fam" bf16) || { bad "$fam: fixture generation failed"; continue; }
  declare -A ids=()
  for ot in f32 f16 bf16 q8_0 q4_0; do
    g=$(gguf_of "$fam" "$ot") || { bad "$fam/$ot: sunny-convert failed"; continue; }
    if [[ $ot == q4_0 ]]; then
      ref=$SN_WORK/gguf/$fam-llamacpp-q4_0.gguf
      f32=$(gguf_of "$fam" f32)
      "$SN_BUILD/tests/llama_quantize_oracle" "$f32" "$ref" 2 >/dev/null 2>&1 || { bad "$fam: llama_model_quantize failed"; continue; }
      if out=$($PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" --same "$g" "$ref" 2>&1); then
        ok "$fam/q4_0: every tensor byte-identical to llama-quantize MOSTLY_Q4_0 ($(tail -1 <<<"$out"))"
        cmp -s "$g" "$ref" && ok "$fam/q4_0: the whole file equals llama-quantize's output byte for byte" ||
          echo "info - $fam/q4_0: tensors equal, file bytes differ (metadata order/padding)"
      else bad "$fam/q4_0 differs from llama-quantize:"; echo "$out" | head -20; fi
    else
      if out=$($PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" "$src" "$g" "$ot" 2>&1); then
        ok "$fam/$ot: tensor bytes equal llama.cpp converter's ($(tail -1 <<<"$out"))"
      else bad "$fam/$ot tensor bytes differ:"; echo "$out" | head -20; fi
    fi
    prompt=$( [[ $fam == mistral ]] && echo 1,415,2936,9060,285,1142 || echo 9906,1917,11,1234,5678,42 )
    r1=$($ORACLE generate "$g" --prompt-ids "$prompt" -n 32 2>/dev/null | $PY -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["ids"]))') || r1=""
    r2=$($ORACLE generate "$g" --prompt-ids "$prompt" -n 32 2>/dev/null | $PY -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["ids"]))') || r2=""
    if [[ -z $r1 ]]; then bad "$fam/$ot: llama.cpp could not load/generate"; continue; fi
    n=$($PY -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$r1")
    distinct=$($PY -c 'import json,sys; print(len(set(json.loads(sys.argv[1]))))' "$r1")
    [[ $r1 == "$r2" ]] && ok "$fam/$ot: llama.cpp loads it, $n greedy tokens, deterministic, $distinct distinct" ||
      bad "$fam/$ot: llama.cpp greedy output not deterministic"
    ((n == 32)) || bad "$fam/$ot: only $n tokens generated"
    ids[$ot]=$r1
  done
  for ot in f16 bf16 q8_0 q4_0; do
    [[ -n ${ids[f32]:-} && -n ${ids[$ot]:-} ]] && echo "info - $fam: top-1 agreement $ot vs f32: $(agree "${ids[f32]}" "${ids[$ot]}")"
  done
  unset ids
done
finish
