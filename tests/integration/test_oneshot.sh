#!/usr/bin/env bash
# test_oneshot.sh - from an HF folder to an installed, smoke-tested model in one command.
#  * sunny-convert's default output name and {ftype} expansion equal what llama.cpp's gguf-py derives
#    (gguf.naming_convention / fill_templated_filename run on the GGUF's own general.* keys, which
#    test_convert_metadata proves equal to convert_hf_to_gguf.py's); -o EXISTING_DIR writes that name
#    inside it and refuses an existing file there before converting anything.
#  * sunny-integrate ollama HF_DIR against the fake Ollama: converts into $XDG_CACHE_HOME/sunny,
#    default --name from the model's name and type, smoke OK; the second run is a cache hit that
#    converts nothing (both timed); --keep-gguf; entries a killed run leaves (temp file only, GGUF
#    without the completion marker, marker with another size) are never trusted.
#  * sunny-integrate lmstudio HF_DIR --smoke: placed from the cache, smoke OK against the fake LM Studio;
#    re-running finds the same file there
#    (same inode, or same bytes after a copy) and succeeds; other bytes are still refused.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
SC=$SN_BIN/sunny-convert
W=$SN_WORK/oneshot
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
tree=$(llama_tree) || { echo "FAIL - cannot unpack llama.cpp's source bundle"; exit 1; }
src=$(fixture llama3 bf16) || { echo "FAIL - fixture"; exit 1; }
M=$W/Llama-3.2-1B-Instruct          # a folder name that carries size and finetune, like a real download
cp -r "$src" "$M"; rm -f "$M/.done"

# gguf-py's own naming functions on a GGUF's general.* keys -> the names llama.cpp would choose:
# line 1 gguf.naming_convention(...).gguf, line 2 gguf.fill_templated_filename(TEMPLATE, type)
refnames() { PYTHONPATH=$tree/gguf-py:$SN_SRC/tests/tools $PY - "$@" <<'PY'
import sys, gguf
from gguf_fast import reader  # gguf-py's GGUFReader, fast on big vocabularies
r = reader(gguf, sys.argv[1])
def s(k):
    f = r.fields.get(k)
    return None if f is None else f.contents()
ft = gguf.LlamaFileType(s("general.file_type")).name.partition("_")[2]
print(gguf.naming_convention(s("general.name"), s("general.basename"), s("general.finetune"),
                             s("general.version"), s("general.size_label"), ft) + ".gguf")
print(gguf.fill_templated_filename(sys.argv[2], ft))
PY
}

# --- sunny-convert names
out=$("$SC" "$M" --outtype q8_0 2>&1); rc=$?
f=$(ls "$M"/*.gguf 2>/dev/null | head -1)
tmpl='out-{ftype}.{FTYPE}-{outtype}-{OUTTYPE}-{}-{{x}}.gguf'
[[ -f $f ]] && { refs=$(refnames "$f" "$tmpl") || bad "gguf-py naming"; }
if [[ $rc == 0 && -f $f ]]; then
  exp=$(sed -n 1p <<<"$refs")
  [[ $(basename "$f") == "$exp" ]] && ok "no -o: $(basename "$f") in the model folder, as gguf.naming_convention names it" \
    || bad "default name $(basename "$f"), gguf-py: $exp"
else bad "no -o: rc=$rc $out"; fi
out=$("$SC" "$M" --outtype q8_0 -o "$W/$tmpl" 2>&1); rc=$?
exp=$(sed -n 2p <<<"$refs")
[[ $rc == 0 && -f $W/$exp ]] && ok "-o $tmpl -> $exp (gguf.fill_templated_filename)" || bad "template rc=$rc $out; expected $exp: $(ls "$W")"
out=$("$SC" "$M" -o "$W/bad-{size}.gguf" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "unknown field {size}" <<<"$out" && ok "unknown {field}: exit 1, named" || bad "bad field rc=$rc $out"
mkdir -p "$W/od"
out=$("$SC" "$M" -o "$W/od" --outtype q8_0 2>&1); rc=$?
[[ $rc == 0 && -f $W/od/$(basename "$f") ]] && ok "-o EXISTING_DIR: the default name inside it" || bad "-o dir rc=$rc $out"
s0=$(stat -c %Y.%i "$W/od/$(basename "$f")")
out=$("$SC" "$M" -o "$W/od" --outtype q8_0 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "already exists" <<<"$out" && [[ $(stat -c %Y.%i "$W/od/$(basename "$f")") == "$s0" && -z $(leftovers "$W/od/$(basename "$f")") ]] \
  && ok "-o EXISTING_DIR again: refused before converting, file untouched" || bad "-o dir again rc=$rc $out"
out=$("$SC" "$M" -o "$W/od" --outtype q8_0 --force 2>&1); rc=$?
[[ $rc == 0 ]] && cmp -s "$f" "$W/od/$(basename "$f")" && ok "-o EXISTING_DIR --force: replaced" || bad "-o dir --force rc=$rc $out"
rm -f "$M"/*.gguf

# --- Ollama: one command
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
export XDG_CACHE_HOME=$W/cache
start_fake_ollama "$W/f"
t0=$(date +%s.%N)
out=$("$SI" ollama "$M" --outtype q8_0 --host "$FAKE_URL" --smoke -n 16 --keep-gguf "$W/kept.gguf" --json 2>"$W/o1.err"); rc=$?
t1=$(date +%s.%N)
echo "$out" >"$W/o1.json"
if [[ $rc == 0 ]] && grep -q '\[smoke\] OK: 16/16' "$W/o1.err" && grep -q "converted into the cache" "$W/o1.err"; then
  ok "ollama HF_DIR: converted, installed, smoke OK in $(printf %.2f "$(echo "$t1 - $t0" | bc)") s"
else bad "ollama HF_DIR rc=$rc $(tail -5 "$W/o1.err")"; fi
cg=$(jget "$W/o1.json" 'j["cache"]["gguf"]')
stem=$(sed -n 1p <<<"$refs"); stem=${stem%-Q8_0.gguf}   # the cached GGUF has the same metadata
[[ $(grep -o 'name: [^ ]*' "$W/o1.err") == "name: ${stem,,}:q8_0" ]] \
  && ok "default --name from the model's name and type: ${stem,,}:q8_0" || bad "default name: $(grep 'name:' "$W/o1.err"), want ${stem,,}:q8_0"
[[ $cg == $XDG_CACHE_HOME/sunny/gguf/*/*.gguf && -f $(dirname "$cg")/complete ]] && ok "cache entry under \$XDG_CACHE_HOME/sunny with its marker" || bad "cache entry $cg"
[[ -f $W/kept.gguf ]] && cmp -s "$cg" "$W/kept.gguf" && ok "--keep-gguf: the same GGUF at the path asked for" || bad "--keep-gguf"
t0=$(date +%s.%N)
out=$("$SI" ollama "$M" --outtype q8_0 --host "$FAKE_URL" --keep-gguf "$W/kept.gguf" 2>&1); rc=$?
t1=$(date +%s.%N)
[[ $rc == 0 ]] && grep -q "cache hit .*converted nothing" <<<"$out" && grep -q "already on the server" <<<"$out" \
  && ok "second run (no --smoke): cache hit, converted nothing, installed in $(printf %.2f "$(echo "$t1 - $t0" | bc)") s (first: converted in $(jget "$W/o1.json" 'j["cache"]["convert_seconds"]') s)" || bad "second run rc=$rc $out"
# what a killed run leaves is never trusted
E=$(dirname "$cg")
conv_again() { # $1: label (a dry run: the conversion is the point, not the server)
  out=$("$SI" ollama "$M" --outtype q8_0 --host "$FAKE_URL" --name oneshot-k --dry-run 2>&1); rc=$?
  [[ $rc == 0 ]] && grep -q "converted into the cache" <<<"$out" && ! grep -q "cache hit" <<<"$out" \
    && ok "$1: converted again, not trusted" || bad "$1: rc=$rc $out"
}
rm "$E/complete"; conv_again "GGUF without the completion marker (killed before it)"
rm -rf "$E"; mkdir -p "$E"; head -c 4096 "$W/kept.gguf" >"$E/$(basename "$cg").1a2b3c4d.tmp"; conv_again "entry with only a partial temp file (killed mid-conversion)"
printf '%s\n%s\n' "$(basename "$cg")" 12345 >"$E/complete"; conv_again "marker whose size disagrees with the GGUF"
out=$("$SI" ollama "$M" --outtype q8_0 --host "$FAKE_URL" --name oneshot-k --dry-run 2>&1)
grep -q "cache hit" <<<"$out" && ok "after the re-conversion: a hit again" || bad "no hit after re-conversion: $out $(ls -la "$E"; cat "$E/complete")"
# a real interruption: SIGINT while converting (q4_k_m keeps the converter busy for a while)
B=$M
if [[ -n $B ]]; then
  C=$W/cache-int
  XDG_CACHE_HOME=$C "$SI" ollama "$B" --outtype q4_k_m --host "$FAKE_URL" --name oneshot-int --dry-run >"$W/int.out" 2>&1 & p=$!
  for i in $(seq 1 1000); do compgen -G "$C/sunny/gguf/*/*.tmp" >/dev/null && break; sleep 0.005; done
  kill -INT "$p"; wait "$p"; rc=$?
  if grep -q "converted into the cache" "$W/int.out"; then skip_check "conversion finished before SIGINT ($rc)"
  else [[ $rc == 1 && -z $(compgen -G "$C/sunny/gguf/*/complete") && -z $(compgen -G "$C/sunny/gguf/*/*.tmp") ]] \
    && grep -q interrupted "$W/int.out" && ok "SIGINT mid-conversion: exit 1, no temp file, no complete entry" \
    || bad "SIGINT rc=$rc $(ls -R "$C") $(cat "$W/int.out")"; fi
  out=$(XDG_CACHE_HOME=$C "$SI" ollama "$B" --outtype q4_k_m --host "$FAKE_URL" --name oneshot-int --dry-run 2>&1); rc=$?
  [[ $rc == 0 ]] && grep -q "converted into the cache" <<<"$out" && ok "the next run after SIGINT converts (nothing trusted)" || bad "after SIGINT rc=$rc $out"
fi
stop "$FAKE_PID"

# --- LM Studio: one command, and re-running is safe
cg=$(ls "$E"/*.gguf)   # the entry's GGUF as converted again above
L=$W/lms-models; mkdir -p "$L/l"
"$SN_TOOLS/fake-lmstudio" -models "$L" -port-file "$L/l/port" -worker "$SN_SRC/tests/fake-ollama/worker.mjs" 2>"$L/l/stderr" &
LMS_PID=$!; SN_PIDS+=("$LMS_PID")
LMS_URL=http://127.0.0.1:$(wait_port "$L/l/port") || exit 1
t0=$(date +%s.%N)
out=$("$SI" lmstudio "$M" --outtype q8_0 --models-dir "$L" --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
t1=$(date +%s.%N)
p=$(ls "$L"/sunny-local/*/*.gguf 2>/dev/null | head -1)
[[ $rc == 0 && -f $p ]] && grep -q "cache hit" <<<"$out" && [[ $(stat -c %i "$p") == $(stat -c %i "$cg") ]] && grep -q '\[smoke\] OK: 8/8' <<<"$out" \
  && ok "lmstudio HF_DIR: cache hit, hard-linked from the cache, smoke OK on the fake LM Studio in $(printf %.2f "$(echo "$t1 - $t0" | bc)") s" || bad "lmstudio HF_DIR rc=$rc $out"
stop "$LMS_PID"
t0=$(date +%s.%N)
out=$("$SI" lmstudio "$M" --outtype q8_0 --models-dir "$L" 2>&1); rc=$?
t1=$(date +%s.%N)
[[ $rc == 0 ]] && grep -q "already in place" <<<"$out" && ok "re-run, same inode: success, nothing placed ($(printf %.2f "$(echo "$t1 - $t0" | bc)") s)" || bad "re-run same inode rc=$rc $out"
cp "$cg" "$p.copy" && mv "$p.copy" "$p"
out=$("$SI" lmstudio "$cg" --models-dir "$L" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "already in place" <<<"$out" && [[ $(stat -c %i "$p") != $(stat -c %i "$cg") ]] \
  && ok "re-run, same bytes in another inode: success, left as it is" || bad "re-run same bytes rc=$rc $out"
$PY -c 'import sys; f=open(sys.argv[1], "r+b"); f.seek(-1, 2); b=f.read(1); f.seek(-1, 2); f.write(bytes([b[0] ^ 1]))' "$p"
out=$("$SI" lmstudio "$cg" --models-dir "$L" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "already exists" <<<"$out" && ok "other bytes at the target: still refused without --force" || bad "other bytes rc=$rc $out"
finish
