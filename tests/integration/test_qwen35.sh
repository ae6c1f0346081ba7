#!/usr/bin/env bash
# test_qwen35.sh - Qwen3.5 (hybrid Gated DeltaNet, "qwen35") against llama.cpp: the converter.
#
# Fixtures: tests/fixtures/gen_qwen35.py, random bf16 weights in the two transformers layouts
# (Qwen3_5ForCausalLM with layer_types; Qwen3_5ForConditionalGeneration with text_config, a vision
# tower, tied embeddings and only full_attention_interval), 4 layers of both kinds plus one MTP block,
# 2 key heads to 4 value heads in the linear attention (so the V-head reordering runs), and the Qwen3
# tokenizer.json (the Qwen3.5 one, pre-tokenizer qwen35, is not available here).
#  1. Converter: llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, without its
#     vocabulary step, which needs transformers) writes f32/f16/bf16/q8_0 of the causal model and
#     f32/q8_0 of the vision-language one; every key but tokenizer.* and every tensor (order, type,
#     shape, bytes) of sunny-convert's file must be the same (tests/tools/gguf_same.py). q4_0 and
#     Q4_K_M must equal llama-quantize run on our f32 file, byte for byte.
#  2. Bad configs: exit 1, a message naming config.json / the tensor, nothing written.
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

causal=$(mk causal --layout causal) && vl=$(mk vl --layout vl) || { bad "fixture generation failed"; finish; }

# ---- 1. converter
outtypes() { [[ $1 == "$causal" ]] && echo "f32 f16 bf16 q8_0" || echo "f32 q8_0"; }
: >"$W/lcpp-jobs.tsv"
for d in "$causal" "$vl"; do
  for ot in $(outtypes "$d"); do
    [[ -f $d-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$d" "$d-llamacpp-$ot.gguf" $ot >>"$W/lcpp-jobs.tsv"
  done
done
[[ -s $W/lcpp-jobs.tsv ]] && { SN_LCPP_NO_VOCAB=1 $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for d in "$causal" "$vl"; do
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
for q in "q4_0 2" "q4_k_m 15"; do
  set -- $q
  ours=$(conv "$causal" $1) || { bad "causal/$1: sunny-convert failed"; continue; }
  ref=$causal-llamaquant-$1.gguf
  if "$SN_BUILD/tests/llama_quantize_oracle" "$(conv "$causal" f32)" "$ref" $2 >/dev/null 2>&1; then
    cmp -s "$ours" "$ref" && ok "causal/$1: file equals llama-quantize's byte for byte" ||
      { bad "causal/$1 differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head; }
  else bad "causal: llama_model_quantize $1 failed"; fi
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
expect_fail "no MTP layer count" "$(variant mtp "$causal" 'del t["mtp_num_hidden_layers"]')" \
  "tensor 'mtp.[a-z_.0-9]+' is in layer 4 but config.json has 4 layers"
finish
