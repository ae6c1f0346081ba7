#!/usr/bin/env bash
# test_convert_torch.sh - PyTorch checkpoints (written by Debian's python3-torch with torch.save):
#  * the llama3, qwen3 and mistral fixtures saved as pytorch_model.bin (single, and 2 shards +
#    pytorch_model.bin.index.json) in f32, f16 and bf16 convert to GGUFs byte-identical (cmp) to the
#    same model converted from safetensors, for every outtype (the safetensors GGUFs are the ones
#    test_convert_parity.sh checks against llama.cpp's converter and llama-quantize);
#  * layouts that must not change the result: tied weights sharing one storage (against a
#    safetensors copy holding the same values twice), a transposed non-contiguous view, slices of
#    one fused storage (storage_offset), a stride-2 view, a nested {"model": ...} .pth given alone
#    with --config, an ambiguous two-state-dict .pth with --state-key, a deflate re-pack;
#  * --dry-run lists the checkpoint's tensors (name, dtype, shape);
#  * hostile files (gen_torch_ckpt.py hostile): each exits 1 within 20 s naming the problem,
#    writes nothing, and never runs the payload (no marker file appears).
source "$(dirname "$0")/lib.sh"
$PY -c 'import torch' 2>/dev/null || skip "/usr/bin/python3 has no torch (apt-get install python3-torch)"
CONV=$SN_BIN/sunny-convert
GEN=$SN_SRC/tests/fixtures/gen_torch_ckpt.py
W=$SN_WORK/torch
scratch "$W"
mkdir -p "$W"

# Sources: the single-file safetensors fixtures of lib.sh and, for the sharded layout, the same
# models written by gen_model.py --shards 2 (GGUF tensor order follows the shards, as llama.cpp's
# converter visits them). Each .bin folder has the basename of its source (general.name derives
# from it). All torch.save calls of a run happen in one Python process (importing torch is slow).
src_of() { # LAYOUT FAM DT -> safetensors folder
  local layout=$1 fam=$2 dt=$3 d
  if [[ $layout == single ]]; then fixture "$fam" "$dt"; return; fi
  d=$W/st2/$fam-tiny-$dt
  if [[ ! -f $d/.done ]]; then
    rm -rf "$d"
    $PY "$SN_SRC/tests/fixtures/gen_model.py" --family "$fam" --dtype "$dt" --shards 2 --out "$d" >/dev/null && touch "$d/.done" || return 1
  fi
  echo "$d"
}
exec 8>"$W/.lock"
flock 8 # one run at a time owns $W
jobs=()
for fam in llama3 qwen3 mistral; do
  for dt in f32 f16 bf16; do
    for layout in single shard2; do
      s=$(src_of "$layout" "$fam" "$dt") || { bad "$fam/$dt/$layout: safetensors fixture failed"; continue; }
      d=$W/$layout/$(basename "$s")
      [[ -f $d/.done && ! $GEN -nt $d/.done ]] || { rm -rf "$d"; jobs+=("$s" "$d" "$([[ $layout == shard2 ]] && echo 2 || echo 1)"); }
    done
  done
done
if ((${#jobs[@]})); then
  $PY "$GEN" repack-many "${jobs[@]}" || bad "torch.save fixtures failed"
  for ((i = 1; i < ${#jobs[@]}; i += 3)); do touch "${jobs[i]}/.done"; done
fi

# ref_of LAYOUT FAM OUTTYPE DT -> GGUF of the safetensors source
ref_of() {
  if [[ $1 == single ]]; then gguf_of "$2" "$3" "$4"; return; fi
  local out=$W/st2/$2-$4-$3.gguf
  [[ -f $out && ! $SN_BIN/sunny-convert -nt $out ]] ||
    "$CONV" "$(src_of shard2 "$2" "$4")" -o "$out" --outtype "$3" --force >/dev/null || return 1
  echo "$out"
}

# 1. every family x dtype x layout x outtype equals the safetensors conversion
for fam in llama3 qwen3 mistral; do
  for dt in f32 f16 bf16; do
    for layout in single shard2; do
      d=$W/$layout/$fam-tiny-$dt
      [[ -f $d/.done ]] || { bad "$fam/$dt/$layout: no torch.save fixture"; continue; }
      if [[ $layout == single ]]; then [[ -f $d/pytorch_model.bin ]] || bad "$fam/$dt: no pytorch_model.bin"
      else [[ -f $d/pytorch_model-00002-of-00002.bin && -f $d/pytorch_model.bin.index.json ]] || bad "$fam/$dt: no shards"; fi
      same=0 diff=""
      for ot in f32 f16 bf16 q8_0 q4_0; do
        ref=$(ref_of "$layout" "$fam" "$ot" "$dt") || { bad "$fam/$dt/$ot: safetensors conversion failed"; continue; }
        out=$W/out-$fam-$dt-$layout-$ot.gguf
        if ! "$CONV" "$d" -o "$out" --outtype "$ot" --force >"$W/log" 2>&1; then
          bad "$fam/$dt/$layout/$ot: conversion failed: $(tail -1 "$W/log")"; continue
        fi
        if cmp -s "$out" "$ref"; then same=$((same + 1)); else diff+=" $ot"; fi
        rm -f "$out"
        [[ $layout == shard2 ]] && rm -f "$ref" # read once: keeps this test's peak disk use ~2 GB lower
      done
      [[ -z $diff ]] && ok "$fam $dt $layout pytorch_model.bin: $same outtypes byte-identical to the safetensors GGUF" ||
        bad "$fam $dt $layout: GGUF differs from the safetensors one for:$diff"
    done
  done
done

# 2. layouts (mistral: untied, so lm_head can be tied by hand; f16 source)
src=$(fixture mistral f16) || bad "mistral f16 fixture"
V=$W/variants
if [[ ! -f $V/.done || $GEN -nt $V/.done ]]; then
  rm -rf "$V"
  $PY "$GEN" variants "$src" "$V" && touch "$V/.done" || bad "variants generation failed"
fi
for ot in f32 q8_0; do
  ref=$(gguf_of mistral "$ot" f16)
  "$CONV" "$V/tied_ref" -o "$W/tref.gguf" --outtype "$ot" --force >/dev/null 2>&1 &&
    "$CONV" "$V/tied" -o "$W/tied.gguf" --outtype "$ot" --force >/dev/null 2>&1 && cmp -s "$W/tied.gguf" "$W/tref.gguf" &&
    ok "$ot: tied lm_head/embed (one storage) equals the safetensors copy with the same values" ||
    bad "$ot: tied-weights checkpoint differs from its safetensors reference"
  "$CONV" "$V/views" -o "$W/views.gguf" --outtype "$ot" --force >/dev/null 2>&1 && cmp -s "$W/views.gguf" "$ref" &&
    ok "$ot: transposed view, fused-storage slices (storage_offset) and a stride-2 norm give the same GGUF" ||
    bad "$ot: views checkpoint differs from the contiguous model"
  "$CONV" "$V/deflate" -o "$W/deflate.gguf" --outtype "$ot" --force >/dev/null 2>&1 && cmp -s "$W/deflate.gguf" "$ref" &&
    ok "$ot: deflate-compressed re-pack gives the same GGUF" || bad "$ot: deflated checkpoint differs"
  "$CONV" "$V/nested.pth" --config "$src/config.json" -o "$W/nested.gguf" --outtype "$ot" --force >/dev/null 2>&1 &&
    cmp -s "$W/nested.gguf" "$ref" && ok "$ot: nested {\"model\": ...} .pth with --config gives the same GGUF" ||
    bad "$ot: nested .pth differs"
done
rm -f "$W"/{tref,tied,views,deflate,nested}.gguf
msg=$("$CONV" "$V/two.pth" --config "$src/config.json" -o "$W/two.gguf" 2>&1); rc=$?
[[ $rc == 1 && $msg == *"choose one with --state-key"* && ! -e $W/two.gguf ]] &&
  ok "two state dicts without --state-key: exit 1, '${msg#*: }'" || bad "ambiguous .pth: rc=$rc $msg"
"$CONV" "$V/two.pth" --config "$src/config.json" --state-key ema -o "$W/two.gguf" --outtype f32 --force >/dev/null 2>&1 &&
  cmp -s "$W/two.gguf" "$(gguf_of mistral f32 f16)" && ok "--state-key ema picks the named state dict" ||
  bad "--state-key ema failed"
rm -f "$W/two.gguf"

# 3. --dry-run lists the checkpoint's tensors
d=$W/single/qwen3-tiny-bf16
n_src=$($PY -c 'import torch,sys; print(len(torch.load(sys.argv[1], weights_only=True)))' "$d/pytorch_model.bin")
plan=$("$CONV" "$d" --dry-run 2>&1)
n_plan=$(grep -c ' -> ' <<<"$plan")
grep -q '^model.layers.1.self_attn.q_norm.weight *-> blk.1.attn_q_norm.weight *BF16 .*\[64\]' <<<"$plan" &&
  [[ $n_plan == "$n_src" ]] && ok "--dry-run lists all $n_plan checkpoint tensors with name, dtype and shape" ||
  bad "--dry-run: $n_plan lines for $n_src tensors: $(head -3 <<<"$plan")"

# 4. hostile files
H=$W/hostile
if [[ ! -f $H/.done || $GEN -nt $H/.done ]]; then
  rm -rf "$H"
  $PY "$GEN" hostile "$src" "$H" && touch "$H/.done" || bad "hostile generation failed"
fi
n=0
while IFS=$'\t' read -r name want; do
  out=$W/hostile.gguf
  rm -f "$out" "$out".*.tmp
  msg=$(timeout 20 "$CONV" "$H/$name.bin" --config "$src/config.json" -o "$out" 2>&1); rc=$?
  if [[ $rc == 1 && $msg == *"$want"* && $msg == *"$name.bin"* && ! -e $out && -z $(leftovers "$out") ]]; then n=$((n + 1))
  else bad "hostile $name: rc=$rc (want 1), message '$msg' (want '$want'), output left: $(ls "$out"* 2>/dev/null)"; fi
done <"$H/expect.tsv"
ok "$n hostile checkpoints: exit 1, the problem named with the file, nothing written, no hang"
[[ -e $H/PWNED ]] && bad "a payload ran: $H/PWNED exists" || ok "no payload ran"
msg=$("$CONV" "$H/good_handmade.bin" --config "$src/config.json" --dry-run 2>&1)
[[ $msg == *"cannot map tensor 'w'"* ]] &&
  ok "the hand-made baseline archive (which torch.load reads) passes the reader" || bad "hand-made baseline refused"
finish
