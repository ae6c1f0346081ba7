#!/usr/bin/env bash
# test_granitehybrid.sh - Granite 4.0-H (granitehybrid) end to end against llama.cpp.
#
# Fixtures: tests/fixtures/gen_granitehybrid.py (4 layers: mamba, attention, mamba, attention; the
# experts' fused input_linear and a shared expert; the embedding / attention / residual / logits
# multipliers; the Llama-3 BPE tokenizer standing in for Granite's, Granite 4.0's chat template) and
# its --dense variant (no experts: the shared_mlp is the dense FFN).
#  1. Converter: llama.cpp's convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, its AutoTokenizer
#     answered by the HF tokenizers port reading the folder's tokenizer: SN_LCPP_HF_TOK=folder) writes
#     f32/f16/bf16/q8_0: the whole files must equal ours byte for byte, vocabulary (smaug-bpe) and
#     template included; the dense fixture's too.
#     q4_0 and Q4_K_M must equal llama-quantize run on our f32 file byte for byte.
#  2. Runtime: sunny-run vs node-llama-cpp, 3 prompts x 32 greedy tokens on each of f32, f16, bf16,
#     q8_0, q4_0, q4_k_m of the MoE fixture and f32 of the dense one: tokens equal, and the
#     last-step logits (relative to the top one) within 1e-6 plus the rounding of sunny-run's
#     printed %.6f values, 2e-6 in all. A one-ulp difference in a Mamba layer's state turns into
#     ~1e-4 here once an f16 KV cache rounds it (the scan without ggml's fused state update left
#     the f32 file up to 2.1e-4 off).
#  3. Install: the q4_k_m into the fake Ollama (no Go template family: the server renders the GGUF's
#     Jinja) and the fake LM Studio, each with --smoke (llama.cpp inside the fakes).
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_oracle
need_go
need_py numpy torch
LCPP=$(llama_tree)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/granitehybrid
scratch "$W"
mkdir -p "$W"
gh=$W/moe dn=$W/dense
[[ -f $gh/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_granitehybrid.py" --out "$gh" >/dev/null ||
  { bad "gen_granitehybrid.py failed"; finish; }
[[ -f $dn/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_granitehybrid.py" --out "$dn" --dense >/dev/null ||
  { bad "gen_granitehybrid.py --dense failed"; finish; }
conv() { # conv DIR OUTTYPE -> GGUF
  local g=$1-$2.gguf
  if [[ ! -f $g || $SN_BIN/sunny-convert -nt $g ]]; then
    "$SN_BIN/sunny-convert" "$1" -o "$g" --outtype "$2" --force >/dev/null || return 1
  fi
  echo "$g"
}

# ---- 1. converter
: >"$W/lcpp-jobs.tsv"
for ot in f32 f16 bf16 q8_0; do
  [[ -f $gh-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$gh" "$gh-llamacpp-$ot.gguf" $ot >>"$W/lcpp-jobs.tsv"
done
for ot in f32 f16 bf16 q8_0; do
  [[ -f $dn-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$dn" "$dn-llamacpp-$ot.gguf" $ot >>"$W/lcpp-jobs.tsv"
done
[[ -s $W/lcpp-jobs.tsv ]] && { SN_LCPP_HF_TOK=folder $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >>"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for c in {moe,dense}/{f32,f16,bf16,q8_0}; do
  d=$W/${c%/*} ot=${c#*/}
  ours=$(conv "$d" $ot) || { bad "$c: sunny-convert failed"; continue; }
  ref=$d-llamacpp-$ot.gguf
  [[ -f $ref ]] || { bad "$c: llama.cpp's converter failed: $(grep -F "FAILED $d -> $ref" "$W/lcpp.log" | cut -c1-300)"; continue; }
  cmp -s "$ref" "$ours" && ok "$c: the whole file equals llama.cpp's converter's byte for byte" ||
    { bad "$c: differs from llama.cpp's converter:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head -20; }
done
if "$SN_BUILD/tests/llama_quantize_oracle" "$(conv "$gh" f32)" "$gh-llamaquant-q4_0.gguf" 2 \
     "$(conv "$gh" f32)" "$gh-llamaquant-q4_k_m.gguf" 15 >"$W/quant.log" 2>&1; then
  for ot in q4_0 q4_k_m; do
    ours=$(conv "$gh" $ot) || { bad "moe/$ot: sunny-convert failed"; continue; }
    cmp -s "$ours" "$gh-llamaquant-$ot.gguf" && ok "moe/$ot: file equals llama-quantize's byte for byte" ||
      { bad "moe/$ot differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$gh-llamaquant-$ot.gguf" "$ours" | head; }
  done
else bad "llama_model_quantize failed: $(tail -3 "$W/quant.log")"; fi
# the chat template travels as the folder's Jinja, byte for byte
$PY - "$SN_SRC/tests/tools" "$(conv "$gh" f32)" "$gh/tokenizer_config.json" <<'PYEOF' &&
import json, sys; sys.path.insert(0, sys.argv[1]); from vocab_gguf import read_kv
assert read_kv(sys.argv[2])["tokenizer.chat_template"][1].decode() == json.load(open(sys.argv[3]))["chat_template"]
PYEOF
  ok "tokenizer.chat_template is Granite 4.0's Jinja as the folder has it" || bad "chat template differs from the folder's"

# ---- 2. runtime parity
jobs=$W/jobs.jsonl cases=$W/cases.tsv
: >"$jobs"; : >"$cases"
PS=('[128000,9906,11,1268,527,499,30]' '[128000,791,4062,14198,39935,35308]' '[128000,16,11,220,17,11,220,18]')
add() { # add TAG GGUF PROMPT
  echo "{\"model\":\"$2\",\"prompt_ids\":$3,\"n\":32,\"ctx\":512,\"decode_top_logits\":8}" >>"$jobs"
  printf '%s\t%s\t%s\t32\t-c 512\n' "$1" "$2" "$3" >>"$cases"
}
for ot in f32 f16 bf16 q8_0 q4_0 q4_k_m; do for i in 0 1 2; do add "moe/$ot" "$(conv "$gh" $ot)" "${PS[$i]}"; done; done
for i in 0 1 2; do add "dense/f32" "$(conv "$dn" f32)" "${PS[$i]}"; done
$ORACLE batch --threads 1 <"$jobs" >"$W/oracle.jsonl" 2>"$W/oracle.err" || { bad "llama.cpp oracle failed: $(tail -3 "$W/oracle.err")"; finish; }
if $PY "$SN_SRC/tests/tools/parity_cases.py" "$cases" "$W/oracle.jsonl" "$SN_BIN/sunny-run" --raw --limit 2e-6
then ok "sunny-run = llama.cpp: tokens and last-step logits (2e-6) on all $(wc -l <"$cases") granitehybrid cases"; else bad "runtime parity"; fi

# ---- 3. install + smoke
smoke_pair granitehybrid "$(conv "$gh" q4_k_m)" granite-e2e:latest "$W"
finish
