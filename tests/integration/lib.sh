# lib.sh - shared helpers for the integration tests (sourced, not run).
# ctest provides SN_SRC, SN_BIN, SN_BUILD and SN_WORK; running a test by hand works too:
#   SN_SRC=$PWD SN_BIN=build/cmd SN_BUILD=build bash tests/integration/test_x.sh
set -uo pipefail
SN_SRC=${SN_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SN_BUILD=${SN_BUILD:-$SN_SRC/build}
SN_BIN=${SN_BIN:-$SN_BUILD/cmd}
SN_WORK=${SN_WORK:-$SN_BUILD/tests/work}
PY=/usr/bin/python3
ORACLE="node $SN_SRC/tests/tools/llama_oracle.mjs"
mkdir -p "$SN_WORK"

sn_fail=0
ok()   { echo "ok   - $*"; }
bad()  { echo "FAIL - $*"; sn_fail=$((sn_fail + 1)); }
# A missing oracle, toolchain or fixture is a failure, not a pass: a suite that "passes" in 0.01 s
# because node_modules is gone proves nothing. skip() exits 77 (ctest's "skipped") only for a test
# declared optional in tests/CMakeLists.txt (SN_OPTIONAL_INTEGRATION, with its reason; ctest then
# exports SN_OPTIONAL); anywhere else it fails with exit 1. scripts/test.sh counts both.
skip() {
  if [[ -n ${SN_OPTIONAL:-} ]]; then echo "SKIP: $* (optional: $SN_OPTIONAL)"; exit 77; fi
  echo "FAIL - unexpected skip: $* (not declared optional in tests/CMakeLists.txt)"; exit 1
}
# skip_check REASON: one check inside a test cannot run here for a machine reason (e.g. no second
# filesystem); the test goes on. scripts/test.sh lists these lines.
skip_check() { echo "SKIP-CHECK: $*"; }
finish() { if ((sn_fail)); then echo "$sn_fail check(s) failed"; exit 1; fi; echo "all checks passed"; exit 0; }
# scratch DIR...: directories only this test writes and reads. They are removed when the test exits 0
# and kept when it fails, to look at (SN_KEEP_WORK=1 keeps them always). Without this a full
# `make test` leaves ~26 GB of models behind and a CI machine with less free disk fails on ENOSPC.
# Caches that several tests share (fixtures/, gguf/, llama.cpp/) are not scratch: scripts/test.sh
# removes the whole work tree after a passing stage. Functions in sn_exit_hooks (e.g. harness.sh's
# server shutdown) run first, so no server still writes into a directory being removed.
sn_scratch=()
sn_exit_hooks=()
scratch() { sn_scratch+=("$@"); }
sn_on_exit() {
  local rc=$1 h
  for h in "${sn_exit_hooks[@]}"; do "$h"; done
  if ((rc == 0)) && [[ ${SN_KEEP_WORK:-0} != 1 ]] && ((${#sn_scratch[@]})); then rm -rf -- "${sn_scratch[@]}"; fi
}
trap 'sn_on_exit $?' EXIT

# need_oracle: node + the npm oracles (node-llama-cpp with its prebuilt CPU libllama, the HF tokenizers,
# @huggingface/gguf) and the Debian python with numpy. Missing -> the test fails.
need_oracle() {
  local m
  command -v node >/dev/null || skip "node missing (run scripts/deps.sh)"
  for m in node-llama-cpp @node-llama-cpp/linux-x64 @lenml/tokenizers @huggingface/gguf; do
    [[ -d $SN_SRC/tests/node_modules/$m ]] || skip "npm oracle $m missing in tests/node_modules (run scripts/deps.sh)"
  done
  $PY -c 'import numpy' 2>/dev/null || skip "$PY has no numpy (python3-numpy; run scripts/deps.sh)"
}
# need_py MODULE...: the Debian python must import each (e.g. torch for checkpoint oracles)
need_py() { local m; for m in "$@"; do $PY -c "import $m" 2>/dev/null || skip "$PY cannot import $m (run scripts/deps.sh)"; done; }

# llama_tree -> prints the llama.cpp source tree node-llama-cpp ships (its gitRelease.bundle, the
# exact version of the oracle's libllama), unpacked once under SN_WORK for every test that reads it
llama_tree() {
  local t=$SN_WORK/llama.cpp
  ( flock 9
    [[ -d $t/gguf-py ]] || { rm -rf "$t"; git clone -q "$SN_SRC/tests/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$t"; }
  ) 9>"$t.lock" 2>/dev/null || return 1
  echo "$t"
}

# oracle_cases CASES.tsv OUT.jsonl -> llama.cpp's greedy answers (llama_oracle.mjs batch) to
# tests/tools/parity_cases.py's "tag gguf prompt-ids [n [options]]" cases, in their order: -c and -t
# in the options set the context and threads of both (llama.cpp 1 thread unless -t); a failure is said
oracle_cases() {
  awk -F'\t' '{ o = ""; k = split($5, a, " ")
    for (i = 1; i < k; i++) { if (a[i] == "-c") o = o ",\"ctx\":" a[i + 1]; if (a[i] == "-t") o = o ",\"threads\":" a[i + 1] }
    printf "{\"model\":\"%s\",\"prompt_ids\":%s,\"n\":%s%s}\n", $2, $3, ($4 == "" ? 32 : $4), o }' "$1" |
    $ORACLE batch --threads 1 >"$2" 2>"$2.err" || { bad "llama.cpp oracle failed: $(tail -3 "$2.err")"; return 1; }
}

# leftovers PATH -> prints what a writer of PATH may leave behind: its temp files (PATH.XXXXXXXX.tmp,
# PATH.part.XXXXXXXX.tmp, ...) and its lock file (.NAME.lock beside it); empty when none
leftovers() { compgen -G "$1.*tmp"; compgen -G "$(dirname "$1")/.$(basename "$1").lock"; true; }

# fixture FAMILY [DTYPE] [PRESET] -> prints the HF dir, generated once per work dir and shared by every
# test that asks for the same one (SN_WORK/fixtures). Its .done holds the generator's content hash
# and the parameters, so an edited gen_model.py regenerates it; written to DIR.tmp, then renamed.
fixture() {
  local fam=$1 dt=${2:-bf16} preset=${3:-tiny}
  local d=$SN_WORK/fixtures/$fam-$preset-$dt key
  key="$(sha256sum <"$SN_SRC/tests/fixtures/gen_model.py" | cut -c1-16) $fam $preset $dt"
  mkdir -p "$SN_WORK/fixtures"
  ( # tests run in parallel under ctest -j: one writer per fixture
    flock 9
    if [[ ! -f $d/.done || $(<"$d/.done") != "$key" ]]; then
      rm -rf "$d" "$d.tmp"
      $PY "$SN_SRC/tests/fixtures/gen_model.py" --family "$fam" --dtype "$dt" --preset "$preset" --out "$d.tmp" >/dev/null || exit 1
      echo "$key" >"$d.tmp/.done" && mv "$d.tmp" "$d" || exit 1
    fi
  ) 9>"$d.lock" || return 1
  echo "$d"
}

# gguf_of FAMILY OUTTYPE [DTYPE] [PRESET] -> converts the fixture once, prints the GGUF path
gguf_of() {
  local fam=$1 ot=$2 dt=${3:-bf16} preset=${4:-tiny}
  local src out
  src=$(fixture "$fam" "$dt" "$preset") || return 1
  out=$SN_WORK/gguf/$fam-$preset-$dt-$ot.gguf
  mkdir -p "$SN_WORK/gguf"
  ( flock 9
    if [[ ! -f $out || $SN_BIN/sunny-convert -nt $out || $src/.done -nt $out ]]; then # a rebuilt converter or fixture redoes it
      "$SN_BIN/sunny-convert" "$src" -o "$out" --outtype "$ot" --force >/dev/null || exit 1
    fi
  ) 9>"$out.lock" || return 1
  echo "$out"
}

# ggufs_of ARRAY "FAMILIES" "OUTTYPES" -> ARRAY[family-outtype] = gguf_of's path for each pair (tiny,
# bf16); the test fails if the converter cannot make one (gguf_of locks each file itself)
ggufs_of() {
  local -n _gg=$1
  local fam ot
  for fam in $2; do
    for ot in $3; do
      _gg[$fam-$ot]=$(gguf_of "$fam" "$ot") || { echo "FAIL - sunny-convert cannot produce the $fam $ot fixture"; exit 1; }
    done
  done
}
