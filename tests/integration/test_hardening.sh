#!/usr/bin/env bash
# test_hardening.sh - faults and races from issue 50, each once, through the programs:
#  - two writers of one output: a held output lock refuses the second run (GGUF, blob, LM Studio
#    entry), concurrent conversions to one -o never publish a mix, concurrent LM Studio installs of
#    one file never remove the other's model;
#  - symlinks planted at the old fixed temp names (OUT.tmp, OUT.snb.tmp, .part) are not followed;
#    -o naming a source file is refused;
#  - SIGINT during an LM Studio copy removes the .part and the folders; `ulimit -f` makes the
#    converter fail with EFBIG and a message, no temp left.
source "$(dirname "$0")/lib.sh"
CONV=$SN_BIN/sunny-convert
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/hardening
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
src=$(fixture llama3 bf16) || { bad "fixture"; finish; }
G=$(gguf_of llama3 f16) || { bad "gguf fixture"; finish; }

# hold LOCKFILE: takes the lock like a running writer would, until unhold (the sleep holds the fd)
hold() { ( exec 9>"$1"; flock 9; exec sleep 60 ) & holder=$!; for _ in $(seq 100); do [[ -e $1 ]] && break; sleep 0.02; done; sleep 0.1; }
unhold() { kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null; }

# ---- one writer per output: a held lock refuses the second run before anything is written
out=$W/locked.gguf
hold "$W/.locked.gguf.lock"
msg=$("$CONV" "$src" -o "$out" 2>&1); rc=$?
unhold
[[ $rc == 1 && $msg == *"another process is writing it"* && ! -e $out && -z $(compgen -G "$out.*tmp") ]] \
  && ok "convert: a held output lock refuses the run" || bad "convert under a held lock: rc=$rc $msg"
hold "$W/.locked.snb.lock"
msg=$("$CONV" "$G" --blob -o "$W/locked.snb" --dtype fp16 2>&1); rc=$?
unhold
[[ $rc == 1 && $msg == *"another process is writing it"* && ! -e $W/locked.snb ]] \
  && ok "blob: a held output lock refuses the run" || bad "blob under a held lock: rc=$rc $msg"

# ---- two conversions to one -o at once: the file is one of them, whole
"$CONV" "$src" -o "$W/ref-f16.gguf" --outtype f16 >/dev/null 2>&1 &&
  "$CONV" "$src" -o "$W/ref-q4.gguf" --outtype q4_0 >/dev/null 2>&1 || bad "reference conversions"
mixed=0
for t in 1 2 3; do
  out=$W/race.gguf; rm -f "$out"
  "$CONV" "$src" -o "$out" --outtype f16 --force -t 1 >/dev/null 2>&1 & a=$!
  "$CONV" "$src" -o "$out" --outtype q4_0 --force -t 1 >/dev/null 2>&1 & b=$!
  wait $a; ra=$?; wait $b; rb=$?
  if ((ra == 0 || rb == 0)); then
    cmp -s "$out" "$W/ref-f16.gguf" || cmp -s "$out" "$W/ref-q4.gguf" || mixed=$((mixed + 1))
  fi
  [[ -n $(leftovers "$out") ]] && mixed=$((mixed + 1))
done
((mixed == 0)) && ok "concurrent conversions to one -o: the output is always one whole file" || bad "$mixed of 3 races left a mixed file or temp files"

# ---- planted symlinks at the old fixed temp names are not followed; -o naming a source is refused
echo keep >"$W/victim"
ln -sf "$W/victim" "$W/sym.gguf.tmp"
ln -sf "$W/victim" "$W/sym.snb.tmp"
"$CONV" "$src" -o "$W/sym.gguf" >/dev/null 2>&1; r1=$?
"$CONV" "$G" --blob -o "$W/sym.snb" --dtype fp16 >/dev/null 2>&1; r2=$?
[[ $r1 == 0 && $r2 == 0 && $(<"$W/victim") == keep ]] && ok "symlinks at OUT.tmp / OUT.snb.tmp: target untouched" \
  || bad "planted symlink followed (rc $r1 $r2): victim now $(head -c 20 "$W/victim" | od -c | head -1)"
d=$W/selfsrc; mkdir -p "$d"; cp "$src"/*.json "$d"/; cp "$src/model.safetensors" "$d/"
sum=$(md5sum <"$d/model.safetensors")
msg=$("$CONV" "$d" -o "$d/./model.safetensors" --force 2>&1); rc=$?
[[ $rc == 1 && $msg == *"source file"* && $(md5sum <"$d/model.safetensors") == "$sum" ]] \
  && ok "-o naming the source weights is refused, the weights are intact" || bad "-o source: rc=$rc $msg"
msg=$("$CONV" "$d" -o "$d/tokenizer.json" --force 2>&1); rc=$?
[[ $rc == 1 && $msg == *"source file"* ]] && ok "-o naming tokenizer.json is refused" || bad "-o tokenizer.json: rc=$rc $msg"
cp "$G" "$W/in.gguf"
msg=$("$CONV" "$W/in.gguf" --blob -o "$W/./in.gguf" --dtype fp16 --force 2>&1); rc=$?
[[ $rc == 1 && $msg == *"input itself"* ]] && ok "--blob -o naming the input GGUF is refused" || bad "blob -o input: rc=$rc $msg"

# ---- LM Studio: a held entry lock refuses, concurrent copies keep one model, symlinked .part
M=$W/lms; mkdir -p "$M"
msg=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy --dry-run 2>&1)
T=$(sed -n 's/^would place: \(.*\) (.*/\1/p' <<<"$msg")
[[ -n $T ]] || { bad "no target in the dry run: $msg"; finish; }
mkdir -p "$(dirname "$T")"
hold "$(dirname "$T")/.$(basename "$T").lock"
msg=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy 2>&1); rc=$?
unhold
[[ $rc == 1 && $msg == *"another process is writing it"* && ! -e $T ]] \
  && ok "lmstudio: a held entry lock refuses the install" || bad "lmstudio under a held lock: rc=$rc $msg"
lost=0
for t in 1 2 3 4; do
  rm -rf "$M"; mkdir -p "$M"
  "$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy >"$W/a.out" 2>&1 & a=$!
  "$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy >"$W/b.out" 2>&1 & b=$!
  wait $a; ra=$?; wait $b; rb=$?
  if ((ra == 0 || rb == 0)) && ! cmp -s "$G" "$T"; then lost=$((lost + 1)); fi
  ((ra != 0 && rb != 0)) && lost=$((lost + 1))
  [[ -n $(leftovers "$T") ]] && lost=$((lost + 1))
done
((lost == 0)) && ok "concurrent LM Studio copies of one file: the model is always there, whole" \
  || bad "$lost of 4 concurrent installs lost the model or left temp files"
rm -rf "$M"; mkdir -p "$(dirname "$T")"
ln -sf "$W/victim" "$T.part"
"$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy >/dev/null 2>&1; rc=$?
[[ $rc == 0 && $(<"$W/victim") == keep ]] && cmp -s "$G" "$T" && ok "lmstudio: a symlink at NAME.part is not followed" \
  || bad "lmstudio .part symlink: rc=$rc"

# ---- SIGINT during an LM Studio copy: nothing left, exit 130
big=$W/big.gguf
cp "$G" "$big"; truncate -s 96M "$big" # a long copy: trailing bytes the GGUF reader ignores
rm -rf "$M"; mkdir -p "$M"
"$SI" lmstudio --gguf "$big" --models-dir "$M" --mode copy --repo Big-GGUF >/dev/null 2>"$W/int.err" & p=$!
for _ in $(seq 500); do compgen -G "$M/*/Big-GGUF/*.part.*" >/dev/null && break; sleep 0.005; done
kill -STOP $p; kill -INT $p; kill -CONT $p
wait $p; rc=$?
left=$(find "$M" -mindepth 1 | head -3)
[[ $rc == 130 && -z $left ]] && grep -q interrupted "$W/int.err" \
  && ok "SIGINT during an LM Studio copy: exit 130, no .part, no folders" || bad "SIGINT copy: rc=$rc left=[$left] $(cat "$W/int.err")"

# ---- ulimit -f: EFBIG with a message, no temp left
out=$W/fsize.gguf
msg=$( (ulimit -f 64; "$CONV" "$src" -o "$out" 2>&1) ); rc=$?
[[ $rc == 1 && $msg == *"too large"* && ! -e $out && -z $(leftovers "$out") ]] \
  && ok "ulimit -f: exit 1 '${msg:0:90}', no temp left" || bad "ulimit -f: rc=$rc $msg $(leftovers "$out")"
finish
