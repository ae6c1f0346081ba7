#!/usr/bin/env bash
# test_qwen35.sh - Qwen3.5 (hybrid Gated DeltaNet, "qwen35") against llama.cpp: the converter.
#
# Fixtures: tests/fixtures/gen_qwen35.py, random bf16 weights in the two transformers layouts
# (Qwen3_5ForCausalLM with layer_types; Qwen3_5ForConditionalGeneration with text_config, a vision
# tower, tied embeddings and only full_attention_interval), 4 layers of both kinds plus one MTP block,
# 2 key heads to 4 value heads in the linear attention (so the V-head reordering runs), and the Qwen3
# tokenizer.json (the Qwen3.5 one, pre-tokenizer qwen35, is not available here).
#  The mixture-of-experts twins (Qwen3_5Moe*, "qwen35moe": 4 experts stored fused, top 2, and a
#  sigmoid-gated shared expert) in both layouts. Qwen3-Next (Qwen3NextForCausalLM, "qwen3next": fused
#  in_proj_qkvz / in_proj_ba, value heads grouped by key head, experts stored one by one, no
#  mtp_num_hidden_layers: the MTP layer is counted from the tensors).
#  1. Converter: llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, without its
#     vocabulary step, which needs transformers) writes f32/f16/bf16/q8_0 of the causal and MoE models,
#     f32/q8_0 of the vision-language one and f32 of the MoE vision-language one; every key but
#     tokenizer.* and every tensor (order, type, shape, bytes) of sunny-convert's file must be the same
#     (tests/tools/gguf_same.py). q4_0 and Q4_K_M (dense and MoE) must equal llama-quantize run on our
#     f32 file, byte for byte. Qwen3-Next: llama.cpp's converter with its vocabulary step (the HF
#     tokenizers port) writes f32/f16/bf16/q8_0, and sunny-convert's files must be the same bytes
#     (cmp), as its one-step q4_0 / Q4_K_M must be llama-quantize's of llama.cpp's f32.
#  2. Bad configs: exit 1, a message naming config.json / the tensor, nothing written.
#  3. Runtime: sunny-run vs node-llama-cpp (llama.cpp) on the causal and the MoE model in
#     f32/f16/bf16/q8_0 and the llama-quantize'd q4_0 / Q4_K_M, 3 prompts x 32 greedy tokens each, and
#     a 300-token prompt (past the 64-token tile of the attention and llama.cpp's delta-net chunk) on
#     f32 and q8_0 (causal) and q8_0 and q4_0 (MoE: 150 tokens per expert in one batch); the
#     vision-language model (tied head, attention every 2nd layer) on f32 and q8_0; Qwen3-Next's
#     six types (sunny-convert's files, the same bytes as llama.cpp's), 3 prompts each, and the
#     300-token prompt on q8_0. The last step's top logits (one prompt per type, and the long runs)
#     must agree to 1e-5.
#  4. State: A then B == A+B bitwise, save -> restore -> continue == uninterrupted (tests/tools/state_split,
#     and tests/tools/abi_state through sn_abi), dense, MoE and Qwen3-Next.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py numpy torch
LCPP=$(llama_tree)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/qwen35
scratch "$W"
mkdir -p "$W"
GEN=$SN_SRC/tests/fixtures/gen_qwen35.py
CONV=$SN_BIN/sunny-convert

mk() { # mk NAME ARGS... -> HF dir
  local d=$W/$1; shift
  ( flock 9; [[ -f $d/model.safetensors ]] || $PY "$GEN" --out "$d" "$@" >/dev/null ) 9>"$W/.lock"
  echo "$d"
}
conv() { # conv DIR OUTTYPE -> GGUF (redone when sunny-convert is newer)
  local g=$1-$2.gguf
  if [[ ! -f $g || $CONV -nt $g ]]; then
    "$CONV" "$1" -o "$g" --outtype "$2" --force >/dev/null || return 1
  fi
  echo "$g"
}

causal=$(mk causal --layout causal) && vl=$(mk vl --layout vl) && moe=$(mk moe --moe) && moevl=$(mk moevl --moe --layout vl) &&
  next=$(mk next --layout next) || { bad "fixture generation failed"; finish; }

# ---- 1. converter
outtypes() { case $1 in "$causal") echo "f32 f16 bf16 q8_0";; "$vl") echo "f32 q8_0";; "$moe") echo "f32 f16 bf16 q8_0";; *) echo f32;; esac; }
: >"$W/lcpp-jobs.tsv"
for d in "$causal" "$vl" "$moe" "$moevl"; do
  for ot in $(outtypes "$d"); do
    [[ -f $d-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$d" "$d-llamacpp-$ot.gguf" $ot >>"$W/lcpp-jobs.tsv"
  done
done
# Qwen3-Next: llama.cpp's converter with its vocabulary step, so whole files compare
: >"$W/next-jobs.tsv"
for ot in f32 f16 bf16 q8_0; do
  [[ -f $next-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$next" "$next-llamacpp-$ot.gguf" $ot >>"$W/next-jobs.tsv"
done
[[ -s $W/next-jobs.tsv ]] && { SN_LCPP_HF_TOK=qwen3 $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/next-jobs.tsv" \
  >"$W/lcpp-next.log" 2>&1 || bad "llama.cpp's converter failed on Qwen3-Next: $(grep FAILED "$W/lcpp-next.log" | cut -c1-300)"; }
[[ -s $W/lcpp-jobs.tsv ]] && { SN_LCPP_NO_VOCAB=1 $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for d in "$causal" "$vl" "$moe" "$moevl"; do
  n=$(basename "$d")
  for ot in $(outtypes "$d"); do
    ours=$(conv "$d" $ot) || { bad "$n/$ot: sunny-convert failed"; continue; }
    ref=$d-llamacpp-$ot.gguf
    [[ -f $ref ]] || { bad "$n/$ot: llama.cpp's converter failed: $(grep -F "FAILED $d -> $ref" "$W/lcpp.log" 2>/dev/null | cut -c1-300)"; continue; }
    if out=$($PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" --skip-prefix tokenizer. 2>&1); then
      ok "$n/$ot: keys and tensors equal llama.cpp's converter ($(tail -1 <<<"$out" | sed 's/.*: //'))"
    else bad "$n/$ot: differs from llama.cpp's converter:"; echo "$out" | head -20; fi
  done
done
for ot in f32 f16 bf16 q8_0; do
  ours=$(conv "$next" $ot) || { bad "next/$ot: sunny-convert failed"; continue; }
  if [[ ! -f $next-llamacpp-$ot.gguf ]]; then bad "next/$ot: llama.cpp's converter failed"
  elif cmp -s "$ours" "$next-llamacpp-$ot.gguf"; then ok "next/$ot: file equals llama.cpp's converter's byte for byte"
  else bad "next/$ot differs from llama.cpp's converter:"
    $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$next-llamacpp-$ot.gguf" "$ours" | head; fi
done
for q in "q4_0 2" "q4_k_m 15"; do
  set -- $q
  ours=$(conv "$next" $1) || { bad "next/$1: sunny-convert failed"; continue; }
  if [[ -f $next-llamacpp-f32.gguf ]] && "$SN_BUILD/tests/llama_quantize_oracle" "$next-llamacpp-f32.gguf" \
       "$next-llamaquant-$1.gguf" $2 >/dev/null 2>&1; then
    cmp -s "$ours" "$next-llamaquant-$1.gguf" && ok "next/$1: file equals llama-quantize's of llama.cpp's f32 byte for byte" ||
      { bad "next/$1 differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$next-llamaquant-$1.gguf" "$ours" | head; }
  else bad "next: llama_model_quantize $1 failed"; fi
done
for d in "$causal" "$moe"; do
  n=$(basename "$d")
  for q in "q4_0 2" "q4_k_m 15"; do
    set -- $q
    ours=$(conv "$d" $1) || { bad "$n/$1: sunny-convert failed"; continue; }
    ref=$d-llamaquant-$1.gguf
    if "$SN_BUILD/tests/llama_quantize_oracle" "$(conv "$d" f32)" "$ref" $2 >/dev/null 2>&1; then
      cmp -s "$ours" "$ref" && ok "$n/$1: file equals llama-quantize's byte for byte" ||
        { bad "$n/$1 differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head; }
    else bad "$n: llama_model_quantize $1 failed"; fi
  done
done
# what the reference leaves implicit: the vision tower is gone, the MTP block is layer 4, the
# hybrid mask and the value-head order are what llama.cpp's loader reads
if $PY - "$LCPP/gguf-py" "$(conv "$causal" f32)" "$(conv "$vl" f32)" <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
r = gguf.GGUFReader(sys.argv[2]); v = lambda r, k: r.fields[k].contents()
assert v(r, "qwen35.attention.recurrent_layers") == [True, True, True, False, False]
assert v(r, "qwen35.block_count") == 5 and v(r, "qwen35.nextn_predict_layers") == 1
assert v(r, "qwen35.rope.dimension_count") == 8 and v(r, "qwen35.rope.dimension_sections") == [2, 1, 1, 0]
assert v(r, "tokenizer.ggml.pre") == "qwen2"
names = {t.name for t in r.tensors}
assert "blk.4.nextn.eh_proj.weight" in names and "blk.3.attn_q.weight" in names and "blk.3.ssm_a" not in names
q = gguf.GGUFReader(sys.argv[3]); qn = {t.name for t in q.tensors}
assert "output.weight" not in qn and not any("visual" in n or "v." == n[:2] for n in qn), sorted(qn)[:5]
assert v(q, "qwen35.full_attention_interval") == 2 and "qwen35.attention.recurrent_layers" not in q.fields
PYEOF
then ok "layer mask, MTP layer, rope sections; vision tower skipped"; else bad "qwen35 layout checks"; fi

# ---- 2. bad configs: exit 1, the problem named, nothing written
variant() { # variant NAME DIR PYTHON-EDIT-OF-cfg -> a copy of DIR with config.json edited
  local d=$W/bad-$1; rm -rf "$d"; mkdir -p "$d"
  for x in "$2"/*; do ln -s "$x" "$d/"; done
  rm "$d/config.json"
  $PY - "$2/config.json" "$d/config.json" "$3" <<'PYEOF' || return 1
import json, sys
cfg = json.load(open(sys.argv[1])); t = cfg.get("text_config", cfg)
exec(sys.argv[3])
json.dump(cfg, open(sys.argv[2], "w"))
PYEOF
  echo "$d"
}
expect_fail() { # expect_fail NAME DIR PATTERN
  local out=$W/bad-$1.gguf
  rm -f "$out" "$out.tmp"
  "$CONV" "$2" -o "$out" --outtype q8_0 >/dev/null 2>"$W/bad-$1.err"; local rc=$?
  if ((rc == 1)) && grep -Eq "$3" "$W/bad-$1.err" && [[ ! -e $out && -z $(leftovers "$out") ]]; then
    ok "$1: exit 1, $(head -c 240 "$W/bad-$1.err")"
  else bad "$1: exit $rc, want 1 and /$3/ and no output: $(head -c 300 "$W/bad-$1.err")"; fi
}
expect_fail "layer_types too short" "$(variant lt-len "$causal" 't["layer_types"] = t["layer_types"][:3]')" \
  "config.json: layer_types has 3 entries, expected num_hidden_layers \(4\)"
expect_fail "layer kind against the tensors" "$(variant lt-kind "$causal" 't["layer_types"][0] = "full_attention"')" \
  "tensor 'model.layers.0.linear_attn.A_log': config.json makes layer 0 a full-attention layer \(layer_types\)"
expect_fail "interval against the tensors" "$(variant interval "$vl" 't["full_attention_interval"] = 4')" \
  "tensor 'model.language_model.layers.1.[a-z_.]+': config.json makes layer 1 a linear-attention layer \(full_attention_interval\)"
expect_fail "value heads not a multiple of key heads" "$(variant vheads "$causal" 't["linear_num_value_heads"] = 3')" \
  "config.json: linear_num_value_heads 3 is not a multiple of linear_num_key_heads 2"
expect_fail "value heads against the tensors" "$(variant vheads2 "$causal" 't["linear_num_value_heads"] = 8')" \
  "tensor 'model.layers.0.linear_attn.[A-Za-z_.]+' has shape \[[0-9, ]+\] but config.json implies"
expect_fail "attention heads against the tensors" "$(variant heads "$causal" 't["num_attention_heads"] = 4; t["num_key_value_heads"] = 2')" \
  "tensor 'model.layers.3.self_attn.[a-z_.]+' has shape \[[0-9, ]+\] but config.json implies"
expect_fail "MTP layer count against the tensors" "$(variant mtp "$causal" 't["mtp_num_hidden_layers"] = 2')" \
  "no tensor maps to blk.5.attn_norm.weight \(layer 5 of 6 is incomplete\)"
expect_fail "next: key heads against the tensors" "$(variant next-hk "$next" 't["linear_num_key_heads"] = 1')" \
  "tensor 'model.layers.0.linear_attn.[A-Za-z_.0-9]+' has shape \[[0-9, ]+\] but config.json implies"
expect_fail "next: value heads against the tensors" "$(variant next-hv "$next" 't["linear_num_value_heads"] = 8')" \
  "tensor 'model.layers.0.linear_attn.[A-Za-z_.0-9]+' has shape \[[0-9, ]+\] but config.json implies"

# ---- 3. runtime parity
jobs=$W/jobs.jsonl cases=$W/cases.tsv
: >"$jobs"; : >"$cases"
P1='[9707,11,1879,0,576,3974,13876]' P2='[785,3974,13876,38835,35308,916,279,15678,5562,13]' P3='[16,17,18,19,20,21]'
PL=$($PY -c 'print([(i * 7919) % 150000 + 100 for i in range(300)])' | tr -d ' ')
add_case() { # add_case TAG GGUF PROMPT N LOGITS(0/1) [THREADS]
  local lg=""; [[ $5 == 1 ]] && lg=',"top_logits":8,"decode_top_logits":8'
  echo "{\"model\":\"$2\",\"prompt_ids\":$3,\"n\":$4$lg}" >>"$jobs"
  printf '%s\t%s\t%s\t%s\t-t %s\n' "$1" "$2" "$3" "$4" "${6:-2}" >>"$cases"
}
for d in "$causal" "$moe"; do
  n=$(basename "$d")
  for ot in f32 f16 bf16 q8_0 q4_0 q4_k_m; do
    g=$d-$ot.gguf
    [[ $ot == q4_* ]] && g=$d-llamaquant-$ot.gguf
    [[ -f $g ]] || { bad "$n/$ot: no GGUF"; continue; }
    for p in "$P1" "$P2" "$P3"; do add_case "$n/$ot" "$g" "$p" 32 $([[ $p == "$P1" ]] && echo 1 || echo 0); done
  done
done
# past 256 positions llama.cpp's decode attention spans 512 cells and sums one chunk of them per
# thread: sunny-run takes the oracle's thread count there
for ot in f32 q8_0; do
  add_case "causal/$ot-long" "$causal-$ot.gguf" "$PL" 16 1 1
  add_case "vl/$ot" "$vl-$ot.gguf" "$P2" 32 1
done
add_case "moe/q8_0-long" "$moe-q8_0.gguf" "$PL" 16 1 1
add_case "moe/q4_0-long" "$moe-llamaquant-q4_0.gguf" "$PL" 16 1 1
# Qwen3-Next, sunny-convert's files (the same bytes as llama.cpp's, section 1)
for ot in f32 f16 bf16 q8_0 q4_0 q4_k_m; do
  g=$next-$ot.gguf
  [[ -f $g ]] || { bad "next/$ot: no GGUF"; continue; }
  for p in "$P1" "$P2" "$P3"; do add_case "next/$ot" "$g" "$p" 32 $([[ $p == "$P1" ]] && echo 1 || echo 0); done
done
[[ -f $next-q8_0.gguf ]] && add_case "next/q8_0-long" "$next-q8_0.gguf" "$PL" 16 1 1
$ORACLE batch --threads 1 <"$jobs" >"$W/oracle.jsonl" 2>"$W/oracle.err" || { bad "llama.cpp oracle failed: $(tail -3 "$W/oracle.err")"; finish; }
if $PY "$SN_SRC/tests/tools/parity_cases.py" "$cases" "$W/oracle.jsonl" "$SN_BIN/sunny-run"
then ok "sunny-run = llama.cpp: tokens and logits on all $(wc -l <"$cases") Qwen3.5 / Qwen3.5-MoE / Qwen3-Next cases"; else bad "runtime parity"; fi

# ---- 4. split runs and state save/restore
for g in "$causal-q8_0.gguf" "$vl-f32.gguf" "$moe-bf16.gguf" "$next-q8_0.gguf"; do
  if out=$("$SN_BUILD/tests/state_split" "$g" 2>&1); then ok "$(basename "$g"): $out"
  else bad "$(basename "$g") split/state: $out"; fi
done
# the same through the public ABI (sn_abi.h only), on the Q4_K_M file
if out=$("$SN_BUILD/tests/abi_state" "$causal-llamaquant-q4_k_m.gguf" 9707,11,1879,0,576,3974,13876,38835,35308 916,279,15678,5562,13,16,17 2>&1)
then ok "sn_abi state: $(tr '\n' ';' <<<"$out")"; else bad "sn_abi state: $out"; fi
if out=$("$SN_BUILD/tests/abi_state" "$moe-llamaquant-q4_k_m.gguf" 9707,11,1879,0,576,3974,13876,38835,35308 916,279,15678,5562,13,16,17 2>&1)
then ok "sn_abi state (MoE): $(tr '\n' ';' <<<"$out")"; else bad "sn_abi state (MoE): $out"; fi
finish
