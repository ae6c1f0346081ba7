#!/usr/bin/env bash
# test_blob.sh - runtime blobs (.snb, docs/BLOB.md) end to end, for the llama3 and qwen3 fixtures
# (and RWKV-7 / Mamba-2 ones: fp32 / fp16 blobs equal to the f32 / f16 GGUFs, int4 runs):
#  * fp32 blobs (from the f32 GGUF and from the HF folder) give the same greedy tokens as sunny-run
#    on the f32 GGUF; fp16 blobs the same as on the f16 GGUF (same kernels, same activation types);
#  * int4 blobs run, and their teacher-forced agreement with the f32 GGUF over 256 steps is printed
#    next to that of llama.cpp's Q4_0 recipe (sunny-convert --outtype q4_0 = llama-quantize);
#  * damaged, truncated and foreign blobs are refused by sunny-run with exit 1 and a message naming
#    the file, never a crash; usage errors of sunny-convert --blob exit 2.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUN=$SN_BIN/sunny-run
CONV=$SN_BIN/sunny-convert
AGREE=$SN_BUILD/tests/model_agree
W=$SN_WORK/blob
scratch "$W"
mkdir -p "$W"
PROMPT=1,450,4996,17354,9581,374
N=32
STEPS=${SN_BLOB_STEPS:-256}
# Under ASan/UBSan (SN_SANITIZED=1, scripts/test.sh's second build) the same code paths run on a short
# teacher-forced window: memory safety does not depend on its length, and the int4-vs-Q4_0 quality
# bound (a statistic over the window) is judged by the Release run on all 256 steps.
[[ ${SN_SANITIZED:-0} == 1 && -z ${SN_BLOB_STEPS:-} ]] && STEPS=16

ids_of() { # FILE.json -> the generated ids as "a,b,c"
  sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p' "$1"
}

gen() { # MODEL OUT.json -> greedy run; returns sunny-run's status
  "$RUN" "$1" --prompt-ids "$PROMPT" -n $N -t 2 --json >"$2" 2>"$2.err"
}

for fam in llama3 qwen3; do
  hf=$(fixture "$fam") || { bad "$fam: fixture generation failed"; continue; }
  g32=$(gguf_of "$fam" f32) && g16=$(gguf_of "$fam" f16) && g40=$(gguf_of "$fam" q4_0) ||
    { bad "$fam: GGUF conversion failed"; continue; }
  gen "$g32" "$W/$fam-g32.json" || { bad "$fam: sunny-run on the f32 GGUF failed: $(cat "$W/$fam-g32.json.err")"; continue; }
  gen "$g16" "$W/$fam-g16.json" || { bad "$fam: sunny-run on the f16 GGUF failed"; continue; }
  want32=$(ids_of "$W/$fam-g32.json")
  want16=$(ids_of "$W/$fam-g16.json")

  # name  source  dtype  expected-ids  [extra sunny-convert flags]
  while read -r name src dt want extra; do
    blob=$W/$fam-$name.snb
    # shellcheck disable=SC2086
    if ! "$CONV" "$src" --blob -o "$blob" --dtype "$dt" --force -t 2 $extra >"$W/conv.out" 2>&1; then
      bad "$fam/$name: sunny-convert --blob --dtype $dt failed: $(cat "$W/conv.out")"
      continue
    fi
    if ! gen "$blob" "$W/$fam-$name.json"; then
      bad "$fam/$name: sunny-run on the blob failed: $(cat "$W/$fam-$name.json.err")"
      continue
    fi
    grep -q '"format":"blob"' "$W/$fam-$name.json" || bad "$fam/$name: --json does not say format blob"
    got=$(ids_of "$W/$fam-$name.json")
    case $want in
      f32) [[ $got == "$want32" ]] && ok "$fam/$name: $N greedy tokens identical to the f32 GGUF" ||
             bad "$fam/$name: tokens differ from the f32 GGUF: $got vs $want32" ;;
      f16) [[ $got == "$want16" ]] && ok "$fam/$name: $N greedy tokens identical to the f16 GGUF" ||
             bad "$fam/$name: tokens differ from the f16 GGUF: $got vs $want16" ;;
      run) n=$(tr ',' '\n' <<<"$got" | grep -c .)
           ((n == N)) && ok "$fam/$name: runs, $n tokens" || bad "$fam/$name: produced $n tokens, wanted $N" ;;
    esac
  done <<EOF
fp32-gguf $g32 fp32 f32
fp32-hf $hf fp32 f32
fp16-gguf $g16 fp16 f16
fp16-hf $hf fp16 f16
int4 $g32 int4 run
int4-hf $hf int4 run
int4-head16 $g32 int4 run --head fp16
int4-head4 $g32 int4 run --head int4
EOF
  # the HF folder streams into the blob writer (no intermediate GGUF): same weights as via the f32 GGUF
  [[ -f $W/$fam-int4-hf.json && $(ids_of "$W/$fam-int4-hf.json") == "$(ids_of "$W/$fam-int4.json")" ]] &&
    ok "$fam: int4 blob streamed from the HF folder gives the tokens of the one made from the f32 GGUF" ||
    bad "$fam: int4 blob from the HF folder differs from the one via the f32 GGUF"

  # INT4 size next to llama.cpp's Q4_0 recipe: the embedding and head are compact too (issue 18)
  s4=$(stat -c %s "$W/$fam-int4.snb"); sq=$(stat -c %s "$g40")
  ((s4 * 100 <= sq * 105)) && ok "$fam: int4 blob $s4 bytes <= Q4_0 GGUF $sq bytes + 5%" ||
    bad "$fam: int4 blob $s4 bytes > Q4_0 GGUF $sq bytes + 5%"
  # INT4 quality next to llama.cpp's Q4_0 recipe, both against the f32 GGUF (teacher-forced).
  if [[ -x $AGREE ]]; then
    a4=$("$AGREE" "$g32" "$W/$fam-int4.snb" --prompt-ids "$PROMPT" -n "$STEPS" -t 2 2>&1)
    a4h=$("$AGREE" "$g32" "$W/$fam-int4-head16.snb" --prompt-ids "$PROMPT" -n "$STEPS" -t 2 2>&1)
    a44=$("$AGREE" "$g32" "$W/$fam-int4-head4.snb" --prompt-ids "$PROMPT" -n "$STEPS" -t 2 2>&1)
    aq=$("$AGREE" "$g32" "$g40" --prompt-ids "$PROMPT" -n "$STEPS" -t 2 2>&1)
    af=$("$AGREE" "$g32" "$W/$fam-fp32-gguf.snb" --prompt-ids "$PROMPT" -n "$STEPS" -t 2 2>&1)
    echo "info - $fam agreement with f32 over $STEPS steps: int4 blob $a4"
    echo "info - $fam agreement with f32 over $STEPS steps: int4 blob, fp16 head $a4h"
    echo "info - $fam agreement with f32 over $STEPS steps: int4 blob, int4 head $a44"
    echo "info - $fam agreement with f32 over $STEPS steps: llama.cpp Q4_0 $aq"
    rate() { sed -n 's/.*"top1_rate":\([0-9.]*\).*/\1/p' <<<"$1"; }
    err() { sed -n 's/.*"rel_logit_err_mean":\([0-9.]*\).*/\1/p' <<<"$1"; }
    [[ $(rate "$af") == 1.0000 && $(err "$af") == 0.00000 ]] && ok "$fam: fp32 blob agrees with the f32 GGUF exactly over $STEPS steps" ||
      bad "$fam: fp32 blob vs f32 GGUF: $af"
    r4=$(rate "$a4"); rq=$(rate "$aq"); e4=$(err "$a4"); eq=$(err "$aq")
    # --head int4 trades quality for bytes (a tied head shares the INT4 embedding rows; an untied
    # one is an 8-row-group matrix): it must stay in Q4_0's range, not be garbage (a head that is
    # not read, or read as the embedding, gives errors of ~4)
    e44=$(err "$a44")
    [[ -n $e44 && -n $eq ]] && awk -v e="$e44" -v f="$eq" 'BEGIN { exit !(e <= 1.3 * f) }' &&
      ok "$fam: int4 head: mean relative logit error $e44 (Q4_0 $eq)" || bad "$fam: int4 head broken: $a44 (Q4_0 $aq)"
    if [[ -n $r4 && -n $rq && -n $e4 && -n $eq ]] && ((STEPS < 128)); then
      echo "info - $fam: int4 top-1 $r4 vs Q4_0 $rq over $STEPS steps (the quality bound needs >= 128 steps: judged in the Release run)"
    elif [[ -n $r4 && -n $rq && -n $e4 && -n $eq ]]; then
      # INT4G32 (blob version 3) spends Q4_0's 4.5 bits/weight on the same groups of 32 with fp16
      # scales, but picks each scale by an error search that includes Q4_0's own choice, so its weight
      # error is below Q4_0's in every group (~5% lower RMS): issue 18's target is "no worse than Q4_0".
      # The mean logit error is a stable statistic and must not exceed Q4_0's; top-1 over 256
      # random-weight steps moves by a few steps with any change, so it gets 0.02 (5 steps) of slack.
      # A broken layout or nibble order gives errors near 1 and top-1 near 0.
      awk -v a="$r4" -v b="$rq" -v e="$e4" -v f="$eq" 'BEGIN { exit !(a >= b - 0.02 && e <= f) }' &&
        ok "$fam: int4 top-1 $r4 vs Q4_0 $rq, mean relative logit error $e4 vs Q4_0 $eq (no worse)" ||
        bad "$fam: int4 quality too low: top-1 $r4 (Q4_0 $rq), mean relative logit error $e4 (Q4_0 $eq)"
    else
      bad "$fam: model_agree failed: $a4 / $aq"
    fi
  else
    bad "model_agree not built ($AGREE)"
  fi
done

# ---- the recurrent families: RWKV-7 (fla layout) and Mamba-2 (two groups), tiny f32 fixtures ----
# fp32 blob = f32 GGUF and fp16 blob = f16 GGUF, compared on the tokens and on the last step's
# logits as --json prints them (max |logit| and the top log-probabilities to 1e-6): every matrix
# holds the same values and goes through the same kernels, RWKV-7's small LoRA matrices included
# (FP16 in both; FP32 in the blob alone would move the logits).
# int4 blobs run.
logits_of() { # FILE.json -> the last step's max |logit| and top log-probabilities, as printed
  sed -n 's/.*"max_abs_logit":\(.*\]\]\).*/\1/p' "$1"
}
rdir=$W/rwkv7-fx mdir=$W/mamba2-fx
[[ -f $rdir/fla/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_rwkv7.py" --out "$rdir" >/dev/null 2>&1 ||
  bad "rwkv7: fixture generation failed"
[[ -f $mdir/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_mamba2.py" --out "$mdir" --groups 2 --dtype f32 \
  >/dev/null 2>&1 || bad "mamba2: fixture generation failed"
for fam in rwkv7 mamba2; do
  src=$rdir/fla; [[ $fam == mamba2 ]] && src=$mdir
  [[ -d $src ]] || continue
  for dt in 32 16; do
    g=$W/$fam-f$dt.gguf blob=$W/$fam-fp$dt.snb
    if ! "$CONV" "$src" -o "$g" --outtype "f$dt" --force >"$W/conv.out" 2>&1 ||
       ! "$CONV" "$src" --blob -o "$blob" --dtype "fp$dt" --force -t 2 >>"$W/conv.out" 2>&1; then
      bad "$fam: converting to f$dt / fp$dt failed: $(tail -2 "$W/conv.out")"; continue
    fi
    gen "$g" "$W/$fam-g$dt.json" && gen "$blob" "$W/$fam-b$dt.json" ||
      { bad "$fam: sunny-run on the f$dt GGUF or blob failed"; continue; }
    want=$(ids_of "$W/$fam-g$dt.json") got=$(ids_of "$W/$fam-b$dt.json")
    wl=$(logits_of "$W/$fam-g$dt.json") gl=$(logits_of "$W/$fam-b$dt.json")
    if [[ -n $want && $got == "$want" && -n $wl && $gl == "$wl" ]]; then
      ok "$fam/fp$dt blob: $N greedy tokens and the last step's logits identical to the f$dt GGUF"
    else
      bad "$fam/fp$dt blob differs from the f$dt GGUF: ids $got vs $want; logits $gl vs $wl"
    fi
  done
  if "$CONV" "$src" --blob -o "$W/$fam-int4.snb" --dtype int4 --force -t 2 >"$W/conv.out" 2>&1 &&
     gen "$W/$fam-int4.snb" "$W/$fam-int4.json"; then
    n=$(ids_of "$W/$fam-int4.json" | tr ',' '\n' | grep -c .)
    ((n == N)) && ok "$fam/int4 blob: runs, $n tokens" || bad "$fam/int4 blob: produced $n tokens, wanted $N"
  else
    bad "$fam/int4 blob: conversion or run failed: $(tail -2 "$W/conv.out")"
  fi
done

# ---- damaged, truncated and foreign blobs ----
src=$W/llama3-int4.snb
if [[ -f $src ]]; then
  d=$W/damaged.snb
  cp "$src" "$d"
  size=$(stat -c %s "$src")
  refuse() { # LABEL [PATTERN] -> sunny-run on $d must exit 1 with a message naming the file
    local label=$1 pat=${2:-} rc
    "$RUN" "$d" --prompt-ids 1,2 -n 1 >/dev/null 2>"$W/err.txt"
    rc=$?
    if ((rc != 1)); then bad "$label: sunny-run exit $rc, wanted 1 ($(head -c 300 "$W/err.txt"))"; return; fi
    grep -q "damaged.snb" "$W/err.txt" || { bad "$label: message does not name the file: $(cat "$W/err.txt")"; return; }
    if [[ -n $pat ]] && ! grep -qi -- "$pat" "$W/err.txt"; then bad "$label: message lacks '$pat': $(cat "$W/err.txt")"; return; fi
    ok "$label refused: $(head -c 160 "$W/err.txt")"
  }
  patch() { # OFFSET HEXBYTES -> overwrite in place
    printf "$(sed 's/\(..\)/\\x\1/g' <<<"$2")" | dd of="$d" bs=1 seek="$1" conv=notrunc status=none
  }
  restore() { # OFFSET LEN -> copy the original bytes back
    dd if="$src" of="$d" bs=1 skip="$1" seek="$1" count="$2" conv=notrunc status=none
  }
  # offset length new-bytes label pattern
  while read -r off len bytes label pat; do
    patch "$off" "$bytes"
    [[ $pat == - ]] && pat=
    refuse "header $label (offset $off)" "$pat"
    restore "$off" "$len"
  done <<'EOF'
0 1 58 magic not.a.sunny.blob
4 4 01000000 version-1-older-sunny regenerate
4 4 02000000 version-2-groups-of-64 groups.of.64
4 4 04000000 version-4 regenerate
4 4 00000000 version-0 regenerate
8 4 01020304 endian-mark byte.order
8 4 ffffffff endian-mark-junk endian
12 4 00000000 header-crc CRC32
16 8 0100000000000000 reserved -
24 8 ffffffffffffffff n_tensors -
24 8 0100000000000000 n_tensors-small -
32 8 ffffffffffff0000 table_end -
32 8 4000000000000000 table_end-small -
40 8 0010000000000000 data_offset -
40 8 0110000000000000 data_offset-unaligned -
48 8 0000000001000000 file_size -
56 4 20000000 alignment -
60 4 02000000 flags -
64 8 ffffffffffffffff meta_len -
64 8 1000000000000000 meta_len-small -
EOF
  cmp -s "$src" "$d" && ok "damage helper restores the blob" || bad "damage helper left the copy modified"
  # a byte inside the metadata and one inside the tensor table: caught by the header CRC
  patch 200 ff; refuse "metadata byte (offset 200)" CRC32; restore 200 1
  # tensor data: cheap open does not read it; --verify must catch it
  last=$((size - 100))
  patch "$last" 5a5a5a5a
  if cmp -s "$src" "$d"; then echo "info - data bytes at $last already 5a5a5a5a"; else
    "$RUN" "$d" --prompt-ids 1,2 -n 1 --verify >/dev/null 2>"$W/err.txt"; rc=$?
    ((rc == 1)) && grep -q "CRC32 mismatch" "$W/err.txt" && ok "tensor data damage caught by sunny-run --verify: $(head -c 160 "$W/err.txt")" ||
      bad "--verify did not catch damaged tensor data (exit $rc): $(cat "$W/err.txt")"
  fi
  restore "$last" 4
  "$RUN" "$d" --prompt-ids 1,2 -n 1 --verify >/dev/null 2>&1 && ok "restored blob passes --verify" || bad "restored blob fails --verify"
  # truncation
  for cut in $((size - 1)) $((size / 2)) 4096 70 10 0; do
    head -c "$cut" "$src" >"$d"
    refuse "truncated to $cut bytes"
  done
  # one byte appended
  cp "$src" "$d"; printf 'x' >>"$d"; refuse "one byte appended" "header says"
  # a GGUF renamed .snb
  cp "$(gguf_of llama3 f32)" "$d"; refuse "a GGUF named .snb" "not a sunny blob"
  # the blob header alone, as a GGUF
  cp "$src" "$W/damaged.gguf"
  "$RUN" "$W/damaged.gguf" --prompt-ids 1,2 -n 1 >/dev/null 2>&1 && ok "a blob named .gguf is still recognised by content" ||
    bad "a blob named .gguf does not run"
  rm -f "$d" "$W/damaged.gguf"
else
  bad "no llama3 int4 blob to damage"
fi

# ---- sunny-convert --blob usage and input errors ----
g=$(gguf_of llama3 f32)
usage() { # expected-exit LABEL ARGS...
  local want=$1 label=$2 rc; shift 2
  "$CONV" "$@" >/dev/null 2>"$W/err.txt"; rc=$?
  ((rc == want)) && ok "$label: exit $rc" || bad "$label: exit $rc, wanted $want ($(cat "$W/err.txt"))"
}
usage 2 "--dtype int8" "$g" --blob -o "$W/u.snb" --dtype int8
usage 2 "--blob without --dtype" "$g" --blob -o "$W/u.snb"
usage 2 "--dtype without --blob" "$g" -o "$W/u.snb" --dtype int4
usage 2 "--dtype without a value" "$g" --blob -o "$W/u.snb" --dtype
usage 2 "--head fp16 with --dtype fp32" "$g" --blob -o "$W/u.snb" --dtype fp32 --head fp16
usage 2 "--head q8" "$g" --blob -o "$W/u.snb" --dtype int4 --head q8
usage 2 "--blob without -o" "$g" --blob --dtype int4
usage 1 "missing input file" "$W/nope.gguf" --blob -o "$W/u.snb" --dtype int4
grep -q "nope.gguf" "$W/err.txt" && ok "missing input named in the message" || bad "missing input not named: $(cat "$W/err.txt")"
touch "$W/exists.snb"
usage 1 "existing output without --force" "$g" --blob -o "$W/exists.snb" --dtype fp16
[[ ! -s $W/exists.snb && -z $(leftovers "$W/exists.snb") ]] && ok "nothing written over the existing output" || bad "existing output touched"
usage 0 "--verify" "$g" --blob -o "$W/v.snb" --dtype fp16 --verify --force
rm -f "$W/u.snb" "$W/exists.snb" "$W/v.snb"

# ---- SIGINT / SIGTERM during --blob: exit 128+N, nothing left (no .snb.tmp, no intermediate GGUF) ----
hf=$(fixture qwen3 f32)
for sig in INT TERM; do
  out=$W/int-$sig.snb
  rm -f "$out" "$out".*
  "$CONV" "$hf" --blob -o "$out" --dtype int4 -t 1 >/dev/null 2>"$W/sig.err" &
  pid=$!
  inter=0
  for _ in $(seq 1 400); do
    compgen -G "$out.src*" >/dev/null && inter=1
    [[ -n $(leftovers "$out") ]] && break
    sleep 0.005
  done
  kill -$sig $pid 2>/dev/null; wait $pid; rc=$?
  left=$(compgen -G "$out*" | tr '\n' ' ')
  ((inter)) && bad "SIG$sig: an intermediate file appeared: $out.src*"
  if [[ -n $left && ! -f $out ]]; then bad "SIG$sig: left behind: $left"
  elif [[ -f $out ]]; then echo "info - SIG$sig arrived after the rename (conversion finished first, exit $rc)"
  else
    [[ $rc == $((128 + $(kill -l $sig))) ]] && grep -q "interrupted" "$W/sig.err" &&
      ok "SIG$sig during HF -> blob: exit $rc, 'interrupted', nothing left" || bad "SIG$sig: exit $rc: $(cat "$W/sig.err")"
  fi
  rm -f "$out"
done
finish
