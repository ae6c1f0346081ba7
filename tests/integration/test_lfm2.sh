#!/usr/bin/env bash
# test_lfm2.sh - LFM2 (lfm2) end to end against llama.cpp.
#
# Fixture: tests/fixtures/gen_lfm2.py (5 layers: conv, conv, full_attention, conv, full_attention;
# short convolutions with conv_L_cache 3, GQA with q/k layernorms, the adjusted SwiGLU width, the
# Llama-3 BPE tokenizer standing in for LFM2's, LFM2.5-Instruct's chat template).
#  1. Converter: llama.cpp's convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, its AutoTokenizer
#     answered by the HF tokenizers port reading the folder's tokenizer: SN_LCPP_HF_TOK=folder) writes
#     f32/f16/bf16/q8_0: the whole files must equal ours byte for byte, vocabulary (llama-bpe) and
#     chat template included. q4_0 and Q4_K_M must
#     equal llama-quantize run on our f32 file byte for byte (shortconv.conv stays F32). A conv
#     tensor in an attention layer, or no layer_types, is a named error with exit 1 and no file.
#  2. Runtime: sunny-run vs node-llama-cpp, 3 prompts x 32 greedy tokens on each of f32, f16, bf16,
#     q8_0, q4_0, q4_k_m (each decode step carries the conv windows and the KV cache on); one prompt
#     with the last step's logits, decode and batch (limit 1e-5 relative to the largest). The state
#     through sn_abi (tests/tools/abi_state): A then B equals A+B bitwise, save/restore continues
#     bitwise, a corrupt state is refused.
#  3. Install: the q4_k_m into the fake Ollama (--template auto: the chatml Go template, proven
#     equal to LFM2.5-Instruct's Jinja on the probe conversations - test_template_claims checks that
#     claim with jinja2 and Go's text/template - so Ollama < 0.30 chats too; <|im_end|> stops) and
#     into the fake LM Studio, each with --smoke (llama.cpp inside the fakes).
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_oracle
need_go
need_py numpy torch
LCPP=$(llama_tree)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/lfm2
scratch "$W"
mkdir -p "$W"
d=$W/lfm2
[[ -f $d/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_lfm2.py" --out "$d" >/dev/null ||
  { bad "gen_lfm2.py failed"; finish; }
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
  [[ -f $d-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$d" "$d-llamacpp-$ot.gguf" $ot >>"$W/lcpp-jobs.tsv"
done
[[ -s $W/lcpp-jobs.tsv ]] && { SN_LCPP_HF_TOK=folder $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >>"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for ot in f32 f16 bf16 q8_0; do
  ours=$(conv "$d" $ot) || { bad "$ot: sunny-convert failed"; continue; }
  ref=$d-llamacpp-$ot.gguf
  [[ -f $ref ]] || { bad "$ot: llama.cpp's converter failed: $(grep -F "FAILED $d -> $ref" "$W/lcpp.log" | cut -c1-300)"; continue; }
  cmp -s "$ref" "$ours" && ok "$ot: the whole file equals llama.cpp's converter's byte for byte" ||
    { bad "$ot: differs from llama.cpp's converter:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head -20; }
done
if "$SN_BUILD/tests/llama_quantize_oracle" "$(conv "$d" f32)" "$d-llamaquant-q4_0.gguf" 2 \
     "$(conv "$d" f32)" "$d-llamaquant-q4_k_m.gguf" 15 >"$W/quant.log" 2>&1; then
  for ot in q4_0 q4_k_m; do
    ours=$(conv "$d" $ot) || { bad "$ot: sunny-convert failed"; continue; }
    cmp -s "$ours" "$d-llamaquant-$ot.gguf" && ok "$ot: file equals llama-quantize's byte for byte" ||
      { bad "$ot differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$d-llamaquant-$ot.gguf" "$ours" | head; }
  done
else bad "llama_model_quantize failed: $(tail -3 "$W/quant.log")"; fi
# config vs tensors: layer 2 declared "conv" holds attention tensors; no layer_types at all
badcase() { # badcase NAME PYTHON-EDIT-OF-cfg EXPECTED-MESSAGE
  local b=$W/bad-$1
  rm -rf "$b"; mkdir -p "$b"
  for f in "$d"/*; do ln -s "$(realpath "$f")" "$b/"; done
  rm "$b/config.json"
  $PY -c "import json,sys; cfg=json.load(open(sys.argv[1])); $2; json.dump(cfg, open(sys.argv[2],'w'))" "$d/config.json" "$b/config.json"
  "$SN_BIN/sunny-convert" "$b" -o "$b.gguf" --outtype f32 --force >"$b.out" 2>&1; local rc=$?
  if [[ $rc == 1 && ! -e $b.gguf ]] && grep -qF "$3" "$b.out"; then ok "bad config ($1): exit 1, no file: $(head -c 200 "$b.out")"
  else bad "bad config ($1): rc=$rc, file $( [[ -e $b.gguf ]] && echo written || echo absent): $(head -c 300 "$b.out")"; fi
}
badcase kind 'cfg["layer_types"][2] = "conv"' "model.layers.2.self_attn"
badcase notypes 'del cfg["layer_types"]' '"layer_types"'

# ---- 2. runtime parity
jobs=$W/jobs.jsonl cases=$W/cases.tsv
: >"$jobs"; : >"$cases"
P=('[128000,128011,882,198,9906,11,1268,527,499,30,128012,198,128011,78191,198]' '[128000,791,4062,14198,39935,35308]' '[128000,16,11,220,17,11,220,18]')
for ot in f32 f16 bf16 q8_0 q4_0 q4_k_m; do
  for i in 0 1 2; do
    lg=""; [[ $ot == f32 && $i == 0 ]] && lg=',"top_logits":8,"decode_top_logits":8'
    echo "{\"model\":\"$(conv "$d" $ot)\",\"prompt_ids\":${P[$i]},\"n\":32,\"ctx\":512$lg}" >>"$jobs"
    printf '%s\t%s\t%s\t32\t-c 512\n' "$ot" "$(conv "$d" $ot)" "${P[$i]}" >>"$cases"
  done
done
$ORACLE batch --threads 1 <"$jobs" >"$W/oracle.jsonl" 2>"$W/oracle.err" || { bad "llama.cpp oracle failed: $(tail -3 "$W/oracle.err")"; finish; }
if $PY "$SN_SRC/tests/tools/parity_cases.py" "$cases" "$W/oracle.jsonl" "$SN_BIN/sunny-run"; then
  ok "sunny-run = llama.cpp: tokens on all $(wc -l <"$cases") cases"; else bad "runtime parity"; fi
if out=$("$SN_BUILD/tests/abi_state" "$(conv "$d" q4_k_m)" 128000,9906,11,1268,527,499,30,791,4062 14198,39935,35308,13,16,17,11 2>&1); then
  ok "state through sn_abi (q4_k_m): $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
else bad "state through sn_abi: $out"; fi

# ---- 3. install + smoke
smoke_pair "lfm2 (chatml Go template)" "$(conv "$d" q4_k_m)" lfm2-e2e:latest "$W"
curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"lfm2-e2e:latest"}' >"$W/show.json"
$PY - "$W/show.json" "$SN_SRC/templates/data/chatml.gotmpl" <<'PYEOF' && ok "ollama: the chatml TEMPLATE installed, <|im_end|> stops" || bad "ollama template/stops: $(head -c 400 "$W/show.json")"
import json, sys
s = json.load(open(sys.argv[1]))
# the Modelfile's TEMPLATE (what Ollama < 0.30 renders; /api/show's "template" is the one a >= 0.30
# server selects: the Jinja, which exposes tools)
assert 'TEMPLATE """' + open(sys.argv[2]).read() + '"""' in s["modelfile"], s["modelfile"]
assert 'stop "<|im_end|>"' in s["modelfile"] or '"<|im_end|>"' in s["parameters"], s["modelfile"]
PYEOF

finish
