#!/usr/bin/env bash
# test_moe_run.sh - the mixture-of-experts runtime (runtime/models/moe.c) against llama.cpp: greedy
# tokens of sunny-run = node-llama-cpp's, for qwen3moe (16 experts of 64, top-4, qk-norm, NEOX rope)
# and Mixtral (llama with 8 experts, top-2, normal rope), random weights (gen_model.py, the routers'
# logits with a std of ~2 so tokens pick different experts) and the real qwen3 / llama2 tokenizers.
#  - sunny-convert's f32/f16/bf16/q8_0/q4_0 of the hidden-128 fixtures (the 3-D expert stacks in each
#    type; q4_0's are repacked into 8-row groups by the loader);
#  - llama-quantize's Q4_K_M / Q6_K / Q5_K_M (llama_quantize_oracle) of the "kq" fixtures, whose rows
#    of 256 let the K types reach the expert stacks (Q4_K and Q6_K, Q5_K stacks);
#  - 3 prompts x 32 tokens each (prompts of 6-12 tokens: the batched route and the grouped expert
#    multiplies, then one-token decode), sunny-run on 2 threads, llama.cpp on 1 (mul_mat_id sums
#    no dot product across threads);
#  - the expert histogram of sunny-run's runs (`--json`), summed per fixture, printed; every expert
#    must be chosen and none may take more than half of the choices.
source "$(dirname "$0")/lib.sh"
need_oracle
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/moe_run
scratch "$W"
mkdir -p "$W"

conv() { # conv DIR OUTTYPE -> GGUF (redone when sunny-convert is newer)
  local g=$W/$(basename "$1")-$2.gguf
  if [[ ! -f $g || $SN_BIN/sunny-convert -nt $g ]]; then
    "$SN_BIN/sunny-convert" "$1" -o "$g" --outtype "$2" --force >/dev/null || return 1
  fi
  echo "$g"
}
quant() { # quant DIR FTYPE-ID NAME -> llama-quantize's file from our bf16
  local g=$W/$(basename "$1")-$3.gguf src
  src=$(conv "$1" bf16) || return 1
  if [[ ! -f $g || $src -nt $g ]]; then
    "$SN_BUILD/tests/llama_quantize_oracle" "$src" "$g" "$2" >/dev/null 2>&1 || return 1
  fi
  echo "$g"
}

: >"$W/cases.tsv"
case_add() { # case_add TAG GGUF PROMPTS...
  local tag=$1 g=$2; shift 2
  for p in "$@"; do printf '%s\t%s\t%s\n' "$tag" "$g" "$p" >>"$W/cases.tsv"; done
}
QP=('[9707,11,1879,0,576,3974,13876]' '[785,3974,13876,38835,35308,916,279,15678,5562,13,576,220]' '[16,17,18,19,20,21]')
MP=('[1,15043,29892,3186,29991,450,4996]' '[1,450,4996,17354,1701,29916,432,17204,975,278,17366,11203]' '[1,29871,29896,29892,29871,29906]')
for fam in qwen3moe mixtral; do
  if [[ $fam == qwen3moe ]]; then P=("${QP[@]}"); else P=("${MP[@]}"); fi
  d=$(fixture "$fam" bf16) || { bad "$fam: fixture generation failed"; continue; }
  for ot in f32 f16 bf16 q8_0 q4_0; do
    g=$(conv "$d" $ot) && case_add "$fam/$ot" "$g" "${P[@]}" || bad "$fam/$ot: sunny-convert failed"
  done
  d=$(fixture "$fam" bf16 kq) || { bad "$fam-kq: fixture generation failed"; continue; }
  # llama_ftype: 15 Q4_K_M, 18 Q6_K, 17 Q5_K_M
  for q in "15 Q4_K_M" "18 Q6_K" "17 Q5_K_M"; do
    set -- $q
    g=$(quant "$d" $1 $2) && case_add "$fam-kq/$2" "$g" "${P[@]}" || bad "$fam-kq/$2: llama-quantize failed"
  done
done
[[ -s $W/cases.tsv ]] || finish

# the K types really reach the expert stacks
if $PY - "$(llama_tree)/gguf-py" "$W"/*-kq-bf16-Q4_K_M.gguf "$W"/*-kq-bf16-Q6_K.gguf <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
for path in sys.argv[2:]:
    t = {x.name: x.tensor_type.name for x in gguf.GGUFReader(path).tensors}
    exps = sorted({v for k, v in t.items() if "_exps" in k})
    assert all(v.endswith("_K") for v in exps), (path, exps)
    print(f"info - {path.rsplit('/', 1)[-1]}: expert stacks {', '.join(exps)}")
PYEOF
then ok "llama-quantize's K types are on the 3-D expert stacks"; else bad "K-quant expert stacks"; fi

oracle_cases "$W/cases.tsv" "$W/oracle.jsonl" || finish
if $PY "$SN_SRC/tests/tools/parity_cases.py" "$W/cases.tsv" "$W/oracle.jsonl" "$SN_BIN/sunny-run" --min-distinct 8 --experts
then ok "sunny-run = llama.cpp on all $(wc -l <"$W/cases.tsv") mixture-of-experts cases"; else bad "runtime parity"; fi
finish
