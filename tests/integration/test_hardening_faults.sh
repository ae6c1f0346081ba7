#!/usr/bin/env bash
# test_hardening_faults.sh - what a crash or a full disk leaves behind (issue 50), through the programs:
#  - kill -9 during a conversion, a --blob write and an LM Studio copy leaves the killed run's temp
#    file (nothing can run in the dead process); the next writer of the same output removes it once
#    it is older than SN_TMP_STALE_S (backdated here) and its pid is gone, and keeps the temp file of
#    a writer that still runs;
#  - a real full filesystem (a small tmpfs, when this runs as root and may mount) under the
#    converter's -o, --blob's -o and the LM Studio models dir: exit 1 naming the file and "No space
#    left on device", nothing partial left (no output, no temp, no .part, no new folders).
source "$(dirname "$0")/lib.sh"

# ---- every budget is stated in runtime/base/budget.h and named in the error that enforces it: each
# SN_BUDGET_* appears in a message (a string literal) or is passed to a reader that names it
# (SN_READ_FILE, JA_INIT stringify it); no other source defines one
missing=$($PY - "$SN_SRC" <<'PY'
import re, sys, pathlib
root = pathlib.Path(sys.argv[1])
budget = (root / "runtime/base/budget.h").read_text()
names = [n for n in re.findall(r"#define (SN_BUDGET_\w+)", budget) if n != "SN_BUDGET_H"]
src = ""
for d in ("convert", "runtime", "integrate", "templates", "cmd"):
    for f in (root / d).rglob("*.[ch]"):
        if f.name != "budget.h":
            t = f.read_text(errors="replace")
            src += t
            for n in re.findall(r"#define (SN_BUDGET_\w+)", t): print(f"{n} defined in {f}")
for n in names:
    family = n[:len("SN_BUDGET_INFLATE_")] + "*" if n.startswith("SN_BUDGET_INFLATE_") else None
    if not (re.search(r'"[^"\n]*' + n + r'\b', src) or (family and family in src)
            or re.search(r"(SN_READ_FILE|JA_INIT)\([^;]*\b" + n + r"\b", src)):
        print(n)
PY
)
[[ -z $missing ]] && ok "every SN_BUDGET_* of budget.h is named by the error that enforces it, none defined elsewhere" \
  || bad "budgets not named in an error (or defined outside budget.h): $missing"

CONV=$SN_BIN/sunny-convert
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/hardening-faults
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
src=$(fixture llama3 bf16) || { bad "fixture"; finish; }
G=$(gguf_of llama3 f16) || { bad "gguf fixture"; finish; }
old() { touch -h -d '-20 minutes' "$@"; } # older than SN_TMP_STALE_S (10 min)

# kill9 PATTERN CMD...: runs CMD in the background and kills it with -9 as soon as a file matching
# PATTERN exists (up to 5 tries: a fast run may finish first). Succeeds when one was killed mid-write.
kill9() {
  local pat=$1 p i; shift
  for i in 1 2 3 4 5; do
    "$@" >/dev/null 2>&1 & p=$!
    for _ in $(seq 3000); do compgen -G "$pat" >/dev/null && break; sleep 0.001; done
    if compgen -G "$pat" >/dev/null && kill -9 $p 2>/dev/null; then wait $p 2>/dev/null; return 0; fi
    wait $p 2>/dev/null
    rm -rf "${KILL9_RESET[@]}"
  done
  return 1
}

# ---- conversion: the killed run's temp is swept by the next run of the same -o, a live one is kept
out=$W/conv.gguf
KILL9_RESET=("$out")
if kill9 "$out.*tmp" "$CONV" "$src" -o "$out" --outtype f32 --force; then
  left=$(compgen -G "$out.*tmp")
  [[ -n $left && $left =~ \.[0-9]+-[0-9a-f]{8}\.tmp$ ]] && ok "kill -9 mid-conversion leaves its temp, named with its pid: ${left##*/}" \
    || bad "kill -9 conversion: temp [$left]"
  old $left
  sleep 300 & live=$! # a writer that still runs: its (backdated) temp file must stay
  : >"$out.$live-0badc0de.tmp"; old "$out.$live-0badc0de.tmp"
  "$CONV" "$src" -o "$out" --outtype f16 --force >/dev/null 2>&1; rc=$?
  [[ $rc == 0 && ! -e $left && -e $out.$live-0badc0de.tmp ]] \
    && ok "the next conversion to that -o removed the dead run's temp, kept the live writer's" \
    || bad "sweep after kill -9: rc=$rc left=[$(compgen -G "$out.*tmp")]"
  kill $live; wait $live 2>/dev/null; rm -f "$out.$live-0badc0de.tmp"
else
  bad "kill -9 conversion: never caught mid-write"
fi

# ---- --blob: the same for the runtime blob
blob=$W/m.snb
KILL9_RESET=("$blob")
if kill9 "$blob.*tmp" "$CONV" "$G" --blob -o "$blob" --dtype fp16 --force; then
  left=$(compgen -G "$blob.*tmp")
  old $left
  fresh=$blob.999999999-00c0ffee.tmp; : >"$fresh" # dead pid but just written: not stale yet
  "$CONV" "$G" --blob -o "$blob" --dtype fp16 --force >/dev/null 2>&1; rc=$?
  [[ $rc == 0 && -n $left && -z $(compgen -G "$blob.*tmp" | grep -v 00c0ffee) && -e $fresh ]] \
    && ok "kill -9 mid --blob: the next --blob run removed the stale temp (${left##*/}), kept a fresh one" \
    || bad "blob sweep: rc=$rc left=[$left] now=[$(compgen -G "$blob.*tmp")]"
  rm -f "$fresh"
else
  bad "kill -9 --blob: never caught mid-write"
fi

# ---- LM Studio copy: the .part of a killed copy is removed by the next install of that entry
big=$W/big.gguf
cp "$G" "$big"; truncate -s 96M "$big" # a long copy: trailing bytes the GGUF reader ignores
M=$W/models; mkdir -p "$M"
KILL9_RESET=("$M/sunny-local")
if kill9 "$M/sunny-local/Big-GGUF/*.part.*" "$SI" lmstudio --gguf "$big" --models-dir "$M" --mode copy --repo Big-GGUF; then
  left=$(compgen -G "$M/sunny-local/Big-GGUF/*.part.*")
  old $left
  "$SI" lmstudio --gguf "$big" --models-dir "$M" --mode copy --repo Big-GGUF >/dev/null 2>&1; rc=$?
  n=$(find "$M" -type f | wc -l)
  [[ $rc == 0 && -n $left && ! -e $left && $n == 1 ]] \
    && ok "kill -9 mid LM Studio copy: the next install removed the stale ${left##*/}, one file placed" \
    || bad "lmstudio sweep: rc=$rc left=[$left] files=$(find "$M" -type f)"
else
  bad "kill -9 LM Studio copy: never caught mid-copy"
fi

# ---- a full filesystem: a tmpfs smaller than the output
F=$W/full
mkdir -p "$F"
if [[ $(id -u) == 0 ]] && mount -t tmpfs -o size=4m,mode=0755 sunny-full "$F" 2>/dev/null; then
  umount_full() { umount "$F" 2>/dev/null; }
  sn_exit_hooks+=(umount_full)
  head -c 3M /dev/zero >"$F/filler" # the output starts, then meets the end of the disk
  msg=$("$CONV" "$src" -o "$F/out.gguf" 2>&1); rc=$?
  [[ $rc == 1 && $msg == *"No space left on device"* && $msg == *"$F/out.gguf"* && ! -e $F/out.gguf && -z $(leftovers "$F/out.gguf") ]] \
    && ok "full disk under convert -o: exit 1 '${msg:0:110}', nothing left" || bad "full convert: rc=$rc $msg $(ls -A "$F")"
  msg=$("$CONV" "$G" --blob -o "$F/m.snb" --dtype fp16 2>&1); rc=$?
  [[ $rc == 1 && $msg == *"No space left on device"* && $msg == *"$F/m.snb"* && ! -e $F/m.snb && -z $(leftovers "$F/m.snb") ]] \
    && ok "full disk under --blob -o: exit 1 '${msg:0:110}', nothing left" || bad "full blob: rc=$rc $msg $(ls -A "$F")"
  mkdir -p "$F/models"
  msg=$("$SI" lmstudio --gguf "$G" --models-dir "$F/models" 2>&1); rc=$? # another filesystem: copied
  [[ $rc == 1 && $msg == *"No space left on device"* && -z $(find "$F/models" -mindepth 1) ]] \
    && ok "full disk under the LM Studio models dir: exit 1 '${msg:0:110}', no .part, no folders" \
    || bad "full lmstudio: rc=$rc $msg $(find "$F/models" -mindepth 1)"
  [[ $(ls -A "$F") == $'filler\nmodels' ]] && ok "the full filesystem holds only what was there" || bad "full fs left: $(ls -A "$F")"
  umount_full
else
  skip_check "full filesystem: mounting a tmpfs needs root (uid $(id -u)) and a mount-capable container"
fi
finish
