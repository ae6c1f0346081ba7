#!/usr/bin/env bash
# test_convert_quant.sh - sunny-convert's quantized file types are llama-quantize's files, byte for byte.
#
# For every family fixture (llama3, mistral, qwen2, qwen3: tests/fixtures/gen_model.py; rwkv7:
# gen_rwkv7.py; mamba2: gen_mamba2.py, 2 groups), in the "tiny" presets (rows of 128: the K-quants
# fall back to Q4_0/Q5_0/Q5_1/Q8_0/IQ4_NL/F16) and "small" ones (rows multiples of 256: the recipes as
# written), the mixtures of experts (gen_model.py mixtral: 8 experts, whose rules bump
# attn_k/attn_v/attn_output; qwen3moe: 16) and the later families
# (gemma3: gen_gemma3.py; phi3: gen_phi3.py; qwen35 and qwen35moe: gen_qwen35.py, also --wide with
# rows of 256; smollm3: gen_model.py tiny4; granitehybrid, lfm2, gptoss: plan only), each of the 15
# file types T, against
# llama_model_quantize (tests/tools/llama_quantize_oracle.c, node-llama-cpp's libllama) run for T's
# llama_ftype on sunny's f32 GGUF of the same folder (equal to llama.cpp's converter's:
# test_convert_parity, test_rwkv7, test_mamba2 and the families' own tests), one oracle process per mode:
# - the whole file, `cmp`, of `sunny-convert HF_DIR --outtype T` in one step, on the mistral fixtures
#   (the cheapest vocabulary): all 15 types on the tiny one, and on the small one the six types that
#   between them run every quantizer on rows of 256; q4_k_m on the other tiny fixtures and the small
#   rwkv7; one or two types on each later family (36 files);
# - for the other family x preset x type combinations (324 of 360), the per-tensor plan: sunny-convert
#   --dry-run's type of every tensor, in file order, equals llama-quantize --dry-run's. The bytes of a
#   tensor follow from its type (the quantizers are bit-exact with libggml: tests/unit/test_ggml_types.c)
#   and the plan is what the family and the file type change, so this keeps every combination covered
#   at a fraction of the cost (a large embedding quantized twice per type).
# SN_CQ_FULL=1 compares all 360 files byte for byte instead (gptoss's refused: MXFP4 experts).
# sunny-run against llama.cpp on written files, every tensor type x every family: test_quant_matrix.
# Then the GGUF input (requantize): from the f32 and from a bf16 GGUF, from a Q4_0 file (refused, then
# with --allow-requantize against llama-quantize --allow-requantize); the CLI: names in any case, an
# unknown name listing the accepted ones, --dry-run's plan naming each tensor's type.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py torch numpy
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/convert_quant
scratch "$W"
mkdir -p "$W"
CONV=$SN_BIN/sunny-convert
LQ=$SN_BUILD/tests/llama_quantize_oracle
declare -A FT=([q4_0]=2 [q4_1]=3 [q5_0]=8 [q5_1]=9 [q2_k]=10 [q3_k_s]=11 [q3_k_m]=12 [q3_k_l]=13 [q4_k_s]=14
               [q4_k_m]=15 [q5_k_s]=16 [q5_k_m]=17 [q6_k]=18 [iq4_nl]=25 [iq4_xs]=30)
ALL="q4_0 q4_1 q5_0 q5_1 q2_k q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k iq4_nl iq4_xs"
# fixture -> the types compared whole-file (the rest: plan only). The tiny mistral has all 15 (each
# type's fallback mix), the small one each quantizer's recipe on rows of 256 (Q2_K, Q3_K + Q4_K +
# Q5_K, Q4_K + Q6_K, Q5_K + Q6_K, Q6_K, IQ4_XS); every other tiny fixture and the small rwkv7 q4_k_m.
# (The small llama3, qwen2, qwen3 and mamba2 are plan only: their 128k-152k-token embeddings cost
# seconds per file in llama-quantize.)
declare -A BYTES=([mistral/tiny]=$ALL [mistral/small]="q2_k q3_k_m q4_k_m q5_k_m q6_k iq4_xs"
  [llama3/small]="" [qwen2/small]="" [qwen3/small]="" [mamba2/small]="")
# The later families, whole file on a few types each (one step from the HF folder), plan on the rest:
# gemma3 (tied 262k x 64 embedding: the output rule's Q8_0; attn_output / ffn_down rows of 256), phi3
# (fused attn_qkv: attn_v's rules), qwen35 and qwen35moe (recurrent ssm_* tensors, the MTP layer,
# fused experts + a shared one; "wide": rows of 256, the K recipes on 3-D expert stacks), smollm3
# (tiny4: a NoPE layer; its recipes on rows of 256 are llama3/small's).
BYTES+=([gemma3/tiny]="q3_k_m" [phi3/tiny]="q5_k_m iq4_xs" [qwen35/tiny]="q2_k" [qwen35moe/tiny]="q5_1"
  [qwen35moe/wide]="q3_k_m" [smollm3/tiny4]="q6_k")
# Plan only: granitehybrid (gen_granitehybrid.py: mamba + attention layers, experts; "dense" without
# them), lfm2 (gen_lfm2.py: short-conv layers), gptoss (gen_gptoss.py: MXFP4 experts in the
# checkpoint, which a quantized file type requantizes: --allow-requantize, as llama-quantize needs)
BYTES+=([granitehybrid/tiny]="" [granitehybrid/dense]="" [lfm2/tiny]="" [gptoss/tiny]="")
FIXTURES="llama3/tiny mistral/tiny qwen2/tiny qwen3/tiny rwkv7/tiny mamba2/tiny mistral/small llama3/small rwkv7/small
          qwen2/small qwen3/small mamba2/small mixtral/tiny qwen3moe/tiny
          gemma3/tiny phi3/tiny qwen35/tiny qwen35moe/tiny qwen35moe/wide smollm3/tiny4
          granitehybrid/tiny granitehybrid/dense lfm2/tiny gptoss/tiny"
N_COMBOS=360 # 24 fixtures x 15 types
# files kept for the requantize checks below: the Q4_0 input (written besides the plan) and the
# q4_k_m pair compared whole
RUNS=" mistral/small/q4_0 mistral/small/q4_k_m "
KEEP=$RUNS

hf_of() { # hf_of FAMILY PRESET -> HF folder
  case $1 in
    rwkv7) local d=$W/rwkv7-$2
      [[ -f $d/fla/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_rwkv7.py" --out "$d" --preset "$2" >/dev/null || return 1
      echo "$d/fla" ;;
    mamba2) local d=$W/mamba2-$2
      [[ -f $d/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_mamba2.py" --out "$d" --preset "$2" --groups 2 >/dev/null || return 1
      echo "$d" ;;
    gemma3|phi3|qwen35|qwen35moe) local d=$W/$1-$2 args=()
      case $1/$2 in
        phi3/*) args=(--lcpp "$(llama_tree)") ;;
        qwen35moe/wide) args=(--moe --wide --layout vl) ;; # tied: half the 152k-row matrices
        qwen35moe/*) args=(--moe) ;;
      esac
      [[ -f $d/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_${1%moe}.py" --out "$d" "${args[@]}" >/dev/null || return 1
      echo "$d" ;;
    granitehybrid|lfm2|gptoss) local d=$W/$1-$2 args=()
      [[ $2 == dense ]] && args=(--dense)
      [[ -f $d/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_$1.py" --out "$d" "${args[@]}" >/dev/null || return 1
      echo "$d" ;;
    *) fixture "$1" bf16 "$2" ;;
  esac
}

args=() pairs=() pargs=() plans=()
for fp in $FIXTURES; do
  fam=${fp%/*} preset=${fp#*/}
  hf=$(hf_of "$fam" "$preset") || { bad "$fp: fixture generation failed"; continue; }
  f32=$W/$fam-$preset-f32.gguf
  "$CONV" "$hf" -o "$f32" --outtype f32 --force >/dev/null 2>&1 || { bad "$fp: sunny-convert f32 failed"; continue; }
  for ot in $ALL; do
    base=$W/$fam-$preset-$ot
    if [[ ${SN_CQ_FULL:-0} == 1 || " ${BYTES[$fp]-q4_k_m} " == *" $ot "* ]]; then
      "$CONV" "$hf" -o "$base.gguf" --outtype "$ot" --force >/dev/null 2>"$W/err" ||
        { bad "$fp/$ot: sunny-convert failed: $(cat "$W/err")"; continue; }
      args+=("$f32" "$base.lq.gguf" "${FT[$ot]}")
      pairs+=("$fp/$ot")
    else
      rq=(); [[ $fam == gptoss ]] && rq=(--allow-requantize)
      "$CONV" "$hf" --dry-run --outtype "$ot" "${rq[@]}" 2>"$W/err" | awk '$2 == "->" && $5 == "->" {print $3, tolower($6)}' >"$base.plan" &&
        [[ -s $base.plan ]] || { bad "$fp/$ot: sunny-convert --dry-run failed: $(cat "$W/err")"; continue; }
      # the requantize input is written too
      if [[ $RUNS == *" $fp/$ot "* ]]; then
        "$CONV" "$hf" -o "$base.gguf" --outtype "$ot" --force >/dev/null 2>"$W/err" ||
          bad "$fp/$ot: sunny-convert failed: $(cat "$W/err")"
      fi
      pargs+=("$f32" "$base.lq.plan" "${FT[$ot]}")
      plans+=("$fp/$ot")
    fi
  done
done

# requantize input on the small mistral: its bf16 GGUF
hf=$(hf_of mistral small) && "$CONV" "$hf" -o "$W/rq-bf16.gguf" --outtype bf16 --force >/dev/null ||
  bad "mistral/small: bf16 GGUF failed"
args+=("$W/rq-bf16.gguf" "$W/rq-bf16-q4_k_m.lq.gguf" 15)
"$LQ" "${args[@]}" >"$W/lq.log" 2>&1 || { bad "llama_model_quantize failed:"; tail -5 "$W/lq.log"; }
((${#pargs[@]})) && { SN_QUANT_DRY_RUN=1 "$LQ" "${pargs[@]}" >"$W/lq-plan.log" 2>&1 ||
  { bad "llama_model_quantize --dry-run failed:"; tail -5 "$W/lq-plan.log"; }; }

n_same=0
for p in "${pairs[@]}"; do
  IFS=/ read -r fam preset ot <<<"$p"
  ours=$W/$fam-$preset-$ot.gguf ref=$W/$fam-$preset-$ot.lq.gguf
  if cmp -s "$ours" "$ref"; then
    n_same=$((n_same + 1))
    [[ $KEEP == *" $fam/$preset/$ot "* ]] || rm -f "$ours" "$ref"
  else bad "$p: sunny-convert's file differs from llama-quantize's: $(cmp "$ours" "$ref" 2>&1 | head -1)"; fi
done
ok "$n_same of ${#pairs[@]} files (family/preset/type) equal llama-quantize's byte for byte"
n_same=0
for p in "${plans[@]}"; do
  IFS=/ read -r fam preset ot <<<"$p"
  base=$W/$fam-$preset-$ot
  tr '[:upper:]' '[:lower:]' <"$base.lq.plan" >"$base.lq.lc" # ggml's names: q4_K
  if cmp -s "$base.plan" "$base.lq.lc"; then n_same=$((n_same + 1))
  else bad "$p: sunny-convert --dry-run's plan differs from llama-quantize --dry-run's:"; diff "$base.plan" "$base.lq.lc" | head -4; fi
done
((${#plans[@]} + ${#pairs[@]} == N_COMBOS)) || bad "expected $N_COMBOS combinations, got ${#pairs[@]} files + ${#plans[@]} plans"
ok "$n_same of ${#plans[@]} further family/preset/type plans equal llama-quantize --dry-run's tensor by tensor"

# ---- a GGUF as input
f32=$W/mistral-small-f32.gguf
"$CONV" "$f32" -o "$W/rq-f32-q4_k_m.gguf" --outtype q4_k_m --force >/dev/null 2>&1 &&
  cmp -s "$W/rq-f32-q4_k_m.gguf" "$W/mistral-small-q4_k_m.lq.gguf" &&
  ok "requantize: f32 GGUF -> q4_k_m equals llama-quantize's" || bad "requantize: f32 GGUF -> q4_k_m differs"
"$CONV" "$W/rq-bf16.gguf" -o "$W/rq-bf16-q4_k_m.gguf" --outtype Q4_K_M --force >/dev/null 2>&1 &&
  cmp -s "$W/rq-bf16-q4_k_m.gguf" "$W/rq-bf16-q4_k_m.lq.gguf" &&
  ok "requantize: bf16 GGUF -> Q4_K_M equals llama-quantize's" || bad "requantize: bf16 GGUF -> Q4_K_M differs"
q40=$W/mistral-small-q4_0.gguf # written above (the plan check covers it; the tiny q4_0 is compared whole)
out=$("$CONV" "$q40" -o "$W/rq-q4.gguf" --outtype q4_k_m --force 2>&1); rc=$?
[[ $rc == 1 && $out == *"already Q4_0"*"--allow-requantize"* && ! -e $W/rq-q4.gguf ]] &&
  ok "requantize: an already-quantized input is refused without --allow-requantize (exit 1, nothing written)" ||
  bad "requantize: a Q4_0 input gave exit $rc: $out"
out=$("$CONV" "$q40" -o "$W/rq-q4.gguf" --outtype q4_k_m --force --allow-requantize 2>&1 >/dev/null)
SN_ALLOW_REQUANTIZE=1 "$LQ" "$q40" "$W/rq-q4.lq.gguf" 15 >/dev/null 2>&1
[[ $out == *"warning:"*"quantized again"* ]] && cmp -s "$W/rq-q4.gguf" "$W/rq-q4.lq.gguf" &&
  ok "requantize: --allow-requantize Q4_0 -> q4_k_m warns and equals llama-quantize --allow-requantize's" ||
  bad "requantize: --allow-requantize: warning '$out' or bytes differ"

# ---- the command line
hf=$(hf_of mistral small)
out=$("$CONV" "$hf" -o "$W/x.gguf" --outtype q4_k_x 2>&1); rc=$?
[[ $rc == 2 && $out == *"q2_k"*"q4_k_m"*"iq4_xs"* ]] && ok "an unknown --outtype exits 2 and lists the accepted names" ||
  bad "unknown --outtype: exit $rc, '$out'"
"$CONV" "$hf" --dry-run --outtype Q4_K_M >"$W/plan.txt" 2>&1 &&
  [[ $(grep -E 'blk\.[0-3]\.(attn_v|ffn_down)\.weight' "$W/plan.txt" | awk '{print $3 "=" $6}' | tr '\n' ' ') == \
     "blk.0.attn_v.weight=Q4_K blk.0.ffn_down.weight=Q4_K blk.1.attn_v.weight=Q4_K blk.1.ffn_down.weight=Q4_K "\
"blk.2.attn_v.weight=Q6_K blk.2.ffn_down.weight=Q6_K blk.3.attn_v.weight=Q6_K blk.3.ffn_down.weight=Q6_K " ]] &&
  grep -q 'output.weight .* Q6_K' "$W/plan.txt" && ! [[ -e $W/x.gguf ]] &&
  ok "--dry-run --outtype Q4_K_M prints the per-tensor plan (layers 2-3 of 4 get Q6_K attn_v/ffn_down)" ||
  { bad "--dry-run plan:"; head -20 "$W/plan.txt"; }
finish
