#!/usr/bin/env bash
# test_mamba2.sh - Mamba-2 end to end against llama.cpp: converter and runtime.
#
# Fixtures: tests/fixtures/gen_mamba2.py, random weights (bf16) with the real qwen3 BPE tokenizer,
# n_groups 1 and 2 in the transformers layout (d_state 64, head 32), and the mamba_ssm layout with
# mamba_ssm's default sizes (ssm_cfg {"layer": "Mamba2"} only, unpadded vocab_size, as published
# configs are; "time_step_limit": [0.0, Infinity] in all).
#  1. Converter: llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, without its
#     vocabulary step, which needs transformers) writes f32/f16/bf16/q8_0 of the n_groups 2 model and
#     f32 of the other two; every key but tokenizer.* and every tensor (order, type, shape, bytes) of
#     sunny-convert's file must be the same (tests/tools/gguf_same.py). q4_0 must equal
#     llama-quantize MOSTLY_Q4_0 run on our f32 file, for all three.
#  2. Runtime: sunny-run vs node-llama-cpp on the same GGUFs, f32/f16/bf16/q8_0/q4_0 x 3 prompts x
#     32 greedy tokens and one 300-token run, for n_groups 1 and 2; the last step's top logits (one
#     prompt per type and the long run) must agree to 1e-5 (relative to the largest), every type.
#  3. Split runs and state save/restore (tests/tools/state_split): A then B == A+B bitwise.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py numpy torch
LCPP=$(llama_tree)   # node-llama-cpp's own llama.cpp source, unpacked once per work dir (lib.sh)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/mamba2
scratch "$W"
mkdir -p "$W"
GEN=$SN_SRC/tests/fixtures/gen_mamba2.py

mk() { # mk NAME ARGS... -> HF dir
  local d=$W/$1; shift
  ( flock 9; [[ -f $d/model.safetensors ]] || $PY "$GEN" --out "$d" "$@" >/dev/null ) 9>"$W/.lock"
  echo "$d"
}
conv() { # conv DIR OUTTYPE -> GGUF (redone when sunny-convert is newer)
  local g=$1-$2.gguf
  if [[ ! -f $g || $SN_BIN/sunny-convert -nt $g ]]; then
    "$SN_BIN/sunny-convert" "$1" -o "$g" --outtype "$2" --force >/dev/null || return 1
  fi
  echo "$g"
}

g1=$(mk hf-g1 --groups 1) && g2=$(mk hf-g2 --groups 2) && ssm=$(mk ssm-g1 --layout mamba_ssm --preset ssm) ||
  { bad "fixture generation failed"; finish; }

# ---- 1. converter
# every outtype on the grouped model; f32 (the transforms) on the other two layouts. llama.cpp's
# converter writes all six references in one python process (torch imported once).
: >"$W/lcpp-jobs.tsv"
for d in "$g1" "$g2" "$ssm"; do
  ots="f32"; [[ $d == "$g2" ]] && ots="f32 f16 bf16 q8_0"
  for ot in $ots; do [[ -f $d-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$d" "$d-llamacpp-$ot.gguf" $ot >>"$W/lcpp-jobs.tsv"; done
done
[[ -s $W/lcpp-jobs.tsv ]] && { SN_LCPP_NO_VOCAB=1 $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for d in "$g1" "$g2" "$ssm"; do
  n=$(basename "$d")
  ots="f32"; [[ $d == "$g2" ]] && ots="f32 f16 bf16 q8_0"
  for ot in $ots; do
    ours=$(conv "$d" $ot) || { bad "$n/$ot: sunny-convert failed"; continue; }
    ref=$d-llamacpp-$ot.gguf
    [[ -f $ref ]] || { bad "$n/$ot: llama.cpp's converter failed: $(grep -F "FAILED $d -> $ref" "$W/lcpp.log" 2>/dev/null | cut -c1-300)"; continue; }
    if out=$($PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" --skip-prefix tokenizer. 2>&1); then
      ok "$n/$ot: keys and tensors equal llama.cpp's converter ($(tail -1 <<<"$out" | sed 's/.*: //'))"
    else bad "$n/$ot: differs from llama.cpp's converter:"; echo "$out" | head -20; fi
  done
  ours=$(conv "$d" q4_0) || { bad "$n/q4_0: sunny-convert failed"; continue; }
  ref=$d-llamaquant-q4_0.gguf
  if "$SN_BUILD/tests/llama_quantize_oracle" "$(conv "$d" f32)" "$ref" 2 >/dev/null 2>&1; then
    cmp -s "$ours" "$ref" && ok "$n/q4_0: file equals llama-quantize MOSTLY_Q4_0 byte for byte" ||
      { bad "$n/q4_0 differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head; }
  else bad "$n: llama_model_quantize failed"; fi
done
# mamba_ssm configs that do set sizes in ssm_cfg (llama.cpp's converter ignores them, writing a file
# whose keys contradict its tensors): ours must state the sizes the tensors have
if $PY - "$LCPP/gguf-py" "$(conv "$(mk ssm-g2 --groups 2 --layout mamba_ssm)" f32)" <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
r = gguf.GGUFReader(sys.argv[2]); v = lambda k: int(r.fields[k].parts[-1][0])
assert (v("mamba2.ssm.state_size"), v("mamba2.ssm.group_count"), v("mamba2.ssm.time_step_rank")) == (64, 2, 8)
t = {x.name: tuple(int(d) for d in x.shape) for x in r.tensors}
assert t["blk.0.ssm_norm.weight"] == (128, 2) and t["blk.0.ssm_in.weight"] == (128, 2 * 256 + 2 * 2 * 64 + 8)
PYEOF
then ok "mamba_ssm config with ssm_cfg sizes: keys match the tensors"; else bad "ssm_cfg sizes"; fi
# the tokenizer keys: the padded vocabulary (151669 tokens -> 151680, the last ones [PADn])
if $PY - "$LCPP/gguf-py" "$(conv "$ssm" f32)" <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
r = gguf.GGUFReader(sys.argv[2]); f = r.fields["tokenizer.ggml.tokens"]
toks = [bytes(f.parts[i]).decode() for i in f.data]
assert len(toks) == 151680 and toks[-1] == "[PAD151679]", (len(toks), toks[-1])
assert bytes(r.fields["tokenizer.ggml.pre"].parts[-1]).decode() == "qwen2"
PYEOF
then ok "mamba_ssm config: vocab padded to 151680 with [PAD] tokens, BPE pre qwen2"; else bad "vocab padding"; fi

# ---- 2. runtime parity
jobs=$W/jobs.jsonl cases=$W/cases.tsv
: >"$jobs"; : >"$cases"
P1='[9707,11,1879,0,576,3974,13876]' P2='[785,3974,13876,38835,35308,916,279,15678,5562,13]' P3='[16,17,18,19,20,21]'
for d in "$g1" "$g2"; do
  for ot in f32 f16 bf16 q8_0 q4_0; do
    g=$(conv "$d" $ot) || { bad "$(basename "$d")/$ot: sunny-convert failed"; continue; }
    for p in "$P1" "$P2" "$P3"; do
      # logits on one prompt per type: the oracle passes every step's full vocabulary through JS,
      # which costs ~30 s a case on a busy 2-core machine (all three were checked when this was written)
      lg=""; [[ $p == "$P1" ]] && lg=',"top_logits":8,"decode_top_logits":8'
      echo "{\"model\":\"$g\",\"prompt_ids\":$p,\"n\":32$lg}" >>"$jobs"
      printf '%s\t%s\t%s\t%s\n' "$(basename "$d")/$ot" "$g" "$p" 32 >>"$cases"
    done
  done
  g=$(conv "$d" f32)
  echo "{\"model\":\"$g\",\"prompt_ids\":$P2,\"n\":300,\"top_logits\":8,\"decode_top_logits\":8}" >>"$jobs"
  printf '%s\t%s\t%s\t%s\n' "$(basename "$d")/f32-300" "$g" "$P2" 300 >>"$cases"
done
# llama.cpp on 1 thread (sunny-run runs 2): no op of this graph splits a sum across threads (matrix rows
# and SSM heads are split, there is no attention), so its answers do not depend on the thread count,
# and 2 threads only spin at ggml's barriers when the other ctest job holds the second core.
$ORACLE batch --threads 1 <"$jobs" >"$W/oracle.jsonl" 2>"$W/oracle.err" || { bad "llama.cpp oracle failed: $(tail -3 "$W/oracle.err")"; finish; }
if $PY "$SN_SRC/tests/tools/parity_cases.py" "$cases" "$W/oracle.jsonl" "$SN_BIN/sunny-run"
then ok "sunny-run = llama.cpp: tokens and logits on all $(wc -l <"$cases") Mamba-2 cases"; else bad "runtime parity"; fi

# ---- 3. split runs and state save/restore
for d in "$g1" "$g2"; do
  g=$(conv "$d" q8_0)
  if out=$("$SN_BUILD/tests/state_split" "$g" 2>&1); then ok "$(basename "$d"): $out"
  else bad "$(basename "$d") split/state: $out"; fi
done
finish
