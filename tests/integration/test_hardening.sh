#!/usr/bin/env bash
# test_hardening.sh - faults and races from issue 50, each once, through the programs:
#  - two writers of one output: a held output lock refuses the second run (GGUF, blob, LM Studio
#    entry), concurrent conversions to one -o never publish a mix, concurrent LM Studio installs of
#    one file never remove the other's model;
#  - symlinks planted at the old fixed temp names (OUT.tmp, OUT.snb.tmp, .part) are not followed;
#    -o naming a source file is refused;
#  - SIGINT during an LM Studio copy removes the .part and the folders; `ulimit -f` makes the
#    converter fail with EFBIG and a message, no temp left;
#  - configs and GGUFs sunny-run would refuse (NaN/negative eps, rope theta inf/0, head_dim 0, an
#    unknown rope_type, rope factor 0, bos_token_id 2^40, an empty vocabulary, a truncated file) are
#    refused by convert, --blob, lmstudio, ollama --dry-run and template before anything is written;
#  - FIFOs as model files or as LM Studio's settings.json / home pointer never block; sunny-run -f /dev/zero stops at its budget.
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

# ---- kill -9 mid-conversion (nothing can clean up): the previous output stays whole, never a mix;
# only the killed run's temp file is left, and the next run is not blocked by it or by the lock
out=$W/kill.gguf
"$CONV" "$src" -o "$out" --outtype f16 >/dev/null 2>&1; cp "$out" "$W/kill.f16"
"$CONV" "$src" -o "$W/kill.f32" --outtype f32 >/dev/null 2>&1
hit=0
for _ in 1 2 3 4 5; do
  "$CONV" "$src" -o "$out" --outtype f32 --force >/dev/null 2>&1 & p=$!
  for _ in $(seq 2000); do compgen -G "$out.*tmp" >/dev/null && break; sleep 0.001; done
  kill -9 $p 2>/dev/null && hit=1
  wait $p 2>/dev/null
  ((hit)) && break
  cp "$W/kill.f16" "$out" # it finished first: again
done
whole=0; { cmp -s "$out" "$W/kill.f16" || cmp -s "$out" "$W/kill.f32"; } && whole=1
"$CONV" "$src" -o "$out" --outtype f32 --force >/dev/null 2>&1; rc=$?
[[ $hit == 1 && $whole == 1 && $rc == 0 ]] && cmp -s "$out" "$W/kill.f32" \
  && ok "kill -9 mid-conversion: the old output whole, the next run succeeds ($(compgen -G "$out.*tmp" | wc -l) temp left; test_hardening_faults: swept once stale)" \
  || bad "kill -9: hit=$hit whole=$whole rerun rc=$rc"
rm -f "$out".*tmp

# ---- ulimit -f: EFBIG with a message, no temp left
out=$W/fsize.gguf
msg=$( (ulimit -f 64; "$CONV" "$src" -o "$out" 2>&1) ); rc=$?
[[ $rc == 1 && $msg == *"too large"* && ! -e $out && -z $(leftovers "$out") ]] \
  && ok "ulimit -f: exit 1 '${msg:0:90}', no temp left" || bad "ulimit -f: rc=$rc $msg $(leftovers "$out")"
# ---- validation at the boundary: a config or GGUF sunny-run would refuse is refused, nothing written
# cfgcase NAME NEEDLE PY-EXPR: the fixture's config.json changed by PY-EXPR on c (a dict); convert must
# exit 1 naming NEEDLE and leave nothing
cfgcase() {
  local name=$1 needle=$2 expr=$3 d=$W/cfg-$1 msg rc
  rm -rf "$d"; mkdir -p "$d"; cp "$src"/*.json "$d"/; ln -s "$src/model.safetensors" "$d/model.safetensors"
  $PY - "$d/config.json" "$expr" <<'PY' || { bad "$name: cannot edit the config"; return; }
import json, sys
c = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(c, open(sys.argv[1], "w"))
PY
  msg=$("$CONV" "$d" -o "$W/cfg-$name.gguf" 2>&1); rc=$?
  [[ $rc == 1 && $msg == *"$needle"* && ! -e $W/cfg-$name.gguf && -z $(leftovers "$W/cfg-$name.gguf") ]] \
    && ok "config $name: exit 1, '${msg:0:100}'" || bad "config $name: rc=$rc $msg"
}
cfgcase eps-nan rms_norm_eps 'c["rms_norm_eps"] = float("nan")'
cfgcase eps-negative rms_norm_eps 'c["rms_norm_eps"] = -1e-5'
cfgcase theta-inf rope_theta 'c["rope_theta"] = float("inf")'
cfgcase theta-zero rope_theta 'c["rope_theta"] = 0'
cfgcase head-dim-zero head_dim 'c["head_dim"] = 0'
cfgcase rope-type-unknown bogus 'c["rope_scaling"] = {"rope_type": "bogus", "factor": 2.0}'
cfgcase rope-factor-zero factor 'c["rope_scaling"] = {"rope_type": "linear", "factor": 0}'
cfgcase bos-2e40 bos_token_id 'c["bos_token_id"] = 2**40'
d=$W/cfg-empty-vocab; rm -rf "$d"; mkdir -p "$d"; cp "$src"/*.json "$d"/; ln -s "$src/model.safetensors" "$d/model.safetensors"
$PY - "$d/tokenizer.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); t["model"]["vocab"] = {}  # merges and added tokens kept
json.dump(t, open(sys.argv[1], "w"))
PY
msg=$("$CONV" "$d" -o "$W/cfg-empty.gguf" 2>&1); rc=$?
[[ $rc == 1 && $msg == *"model.vocab is empty"* && ! -e $W/cfg-empty.gguf && -z $(leftovers "$W/cfg-empty.gguf") ]] && ok "empty vocabulary: exit 1, '${msg:0:100}'" \
  || bad "empty vocabulary: rc=$rc $msg"

# GGUFs the runtime refuses, made by patching one f32 value of a good file: --blob, lmstudio and
# ollama --dry-run refuse them before writing or contacting anything; a truncated one too (and template)
patch_f32() { $PY - "$1" "$2" "$3" "$4" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read()); k = sys.argv[3].encode()
i = b.find(struct.pack("<Q", len(k)) + k); assert i > 0, "key not found"
j = i + 8 + len(k); assert struct.unpack_from("<I", b, j)[0] == 6, "not f32"
struct.pack_into("<f", b, j + 4, float(sys.argv[4])); open(sys.argv[2], "wb").write(b)
PY
}
patch_f32 "$G" "$W/eps-nan.gguf" llama.attention.layer_norm_rms_epsilon nan &&
  patch_f32 "$G" "$W/theta-zero.gguf" llama.rope.freq_base 0 || bad "cannot patch the GGUF fixture"
head -c $(( $(stat -c %s "$G") - 4096 )) "$G" >"$W/trunc.gguf"
for g in eps-nan theta-zero trunc; do
  rm -rf "$M"; mkdir -p "$M"
  msg=$("$CONV" "$W/$g.gguf" --blob -o "$W/$g.snb" --dtype fp16 2>&1); rc=$?
  [[ $rc == 1 && ! -e $W/$g.snb && -z $(leftovers "$W/$g.snb") ]] && ok "$g.gguf --blob refused: '${msg:0:110}'" || bad "$g --blob: rc=$rc $msg"
  msg=$("$SI" lmstudio --gguf "$W/$g.gguf" --models-dir "$M" 2>&1); rc=$?
  [[ $rc == 1 && -z $(find "$M" -mindepth 1) ]] && ok "$g.gguf lmstudio refused, nothing placed" || bad "$g lmstudio: rc=$rc $msg"
  msg=$("$SI" ollama "$W/$g.gguf" --name x:y --dry-run --host http://127.0.0.1:9 2>&1); rc=$?
  [[ $rc == 1 ]] && ok "$g.gguf ollama --dry-run refused" || bad "$g ollama --dry-run: rc=$rc $msg"
done
msg=$("$SI" template "$W/trunc.gguf" 2>&1); rc=$?
[[ $rc == 1 && $msg == *trunc.gguf* ]] && ok "template refuses a truncated GGUF" || bad "template trunc: rc=$rc $msg"
# ---- FIFOs and devices: refused at once (opened non-blocking, then fstat), never waited on
for f in model.safetensors README.md; do
  d=$W/fifo-$f; rm -rf "$d"; mkdir -p "$d"; cp "$src"/*.json "$d"/; ln -s "$src/model.safetensors" "$d/"
  rm -f "$d/$f"; mkfifo "$d/$f"
  msg=$(timeout 20 "$CONV" "$d" -o "$W/fifo.gguf" --force 2>&1); rc=$?
  if [[ $f == model.safetensors ]]; then
    [[ $rc == 1 && $msg == *"not a regular file (a FIFO)"* ]] && ok "FIFO as $f: exit 1 at once" || bad "FIFO $f: rc=$rc $msg"
  else
    [[ $rc == 0 ]] && ok "FIFO as $f: skipped like a missing README, no hang" || bad "FIFO $f: rc=$rc $msg"
  fi
done
mkfifo "$W/fifo.gguf.in"
msg=$(timeout 20 "$SI" lmstudio --gguf "$W/fifo.gguf.in" --models-dir "$W" 2>&1); rc=$?
[[ $rc == 1 && $msg == *"not a regular file"* ]] && ok "lmstudio --gguf FIFO: exit 1 at once" || bad "lmstudio FIFO: rc=$rc $msg"
# LM Studio's own files in HOME: a FIFO as settings.json is skipped (the default models dir), a FIFO
# as ~/.lmstudio-home-pointer is an error naming it; neither blocks (both opened with fopen before)
H=$W/lmshome; rm -rf "$H"; mkdir -p "$H/lms"; echo "$H/lms" >"$H/.lmstudio-home-pointer"; mkfifo "$H/lms/settings.json"
msg=$(HOME=$H timeout 20 "$SI" lmstudio --gguf "$G" --dry-run 2>&1); rc=$?
[[ $rc == 0 && $msg == *"$H/lms/models"* ]] && ok "LM Studio settings.json FIFO: skipped, no hang" || bad "settings.json FIFO: rc=$rc $msg"
rm -f "$H/.lmstudio-home-pointer"; mkfifo "$H/.lmstudio-home-pointer"
msg=$(HOME=$H timeout 20 "$SI" lmstudio --gguf "$G" --dry-run 2>&1); rc=$?
[[ $rc == 1 && $msg == *".lmstudio-home-pointer"*"not a regular file"* ]] && ok "LM Studio home pointer FIFO: exit 1 at once" \
  || bad "home pointer FIFO: rc=$rc $msg"
msg=$(timeout 60 "$SN_BIN/sunny-run" -m "$G" -f /dev/zero -n 1 2>&1); rc=$?
[[ $rc == 1 && $msg == *"budget for a prompt file"* ]] && ok "sunny-run -f /dev/zero: exit 1, '${msg:0:90}'" || bad "-f /dev/zero: rc=$rc ${msg:0:200}"
# ---- a README whose text is not UTF-8: its model card is dropped, general.name stays valid UTF-8
d=$W/readme-bad; rm -rf "$d"; mkdir -p "$d"; cp "$src"/*.json "$d"/; ln -s "$src/model.safetensors" "$d/"
printf -- '---\nmodel_name: Evil\xff\xfeName\nlicense: mit\n---\n# card\n' >"$d/README.md"
msg=$("$CONV" "$d" -o "$W/readme-bad.gguf" 2>&1); rc=$?
if [[ $rc == 0 ]] && ! grep -q $'Evil\xff' "$W/readme-bad.gguf"; then ok "invalid UTF-8 in README.md: the card is dropped, general.name from config/folder"
else bad "README with invalid UTF-8: rc=$rc $msg"; fi
finish
