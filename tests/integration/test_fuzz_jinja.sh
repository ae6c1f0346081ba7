#!/usr/bin/env bash
# test_fuzz_jinja.sh - the template interpreters must never crash, leak, trip a sanitizer or hang
# on mutated input. Builds tests/fuzz/fuzz_jinja.c (the Jinja interpreter) and
# tests/fuzz/fuzz_gotmpl.c (the Go text/template evaluator) with clang's libFuzzer + ASan + UBSan,
# replays every saved regression input (tests/fuzz/{jinja,gotmpl}_regressions/: inputs that once
# crashed), then fuzzes each for SN_FUZZ_SECONDS (default 30 for Jinja, half that for Go),
# seeded with the real template corpora.
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
W=${SN_WORK:-/tmp/sn-work}/fuzz_jinja
SECS=${SN_FUZZ_SECONDS:-30}
rm -rf "$W" && mkdir -p "$W"
command -v clang >/dev/null || { echo "FAIL: clang (libFuzzer) not installed; scripts/deps.sh installs it"; exit 1; }
fuzz() { # name seconds seed-files...
  local name=$1 secs=$2; shift 2
  mkdir -p "$W/$name-corpus"
  clang -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$SRC/templates" -I"$SRC/runtime/base" "$SRC/tests/fuzz/fuzz_$name.c" "$SRC"/templates/jinja_*.c \
    "$SRC"/templates/gotmpl*.c "$SRC/runtime/base/sn_err.c" "$SRC/runtime/base/utf8.c" -lcjson -o "$W/fuzz_$name"
  cp "$@" "$W/$name-corpus/"
  local reg=("$SRC"/tests/fuzz/${name}_regressions/*)
  if [ -e "${reg[0]}" ]; then
    "$W/fuzz_$name" -runs=1 -timeout=10 "${reg[@]}" >"$W/$name-regressions.log" 2>&1 ||
      { tail -30 "$W/$name-regressions.log"; echo "FAIL: a saved $name regression input crashes again"; exit 1; }
    echo "fuzz_$name: ${#reg[@]} regression input(s) replayed"
  fi
  if ! "$W/fuzz_$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -max_len=65536 \
       -artifact_prefix="$W/$name-" "$W/$name-corpus" >"$W/$name.log" 2>&1; then
    tail -40 "$W/$name.log"
    echo "FAIL: fuzz_$name found a crash/hang; the input is in $W/ ($name-crash-*|timeout-*|leak-*):" \
         "add it to tests/fuzz/${name}_regressions/ with the fix"
    exit 1
  fi
  grep -E "^Done" "$W/$name.log" | tail -1
  echo "fuzz_$name: no crash in ${secs}s"
}
fuzz jinja "$SECS" "$SRC"/tests/fixtures/templates/*.jinja
fuzz gotmpl "$((SECS / 2))" "$SRC"/templates/data/*.gotmpl "$SRC"/tests/fixtures/gotemplates/*.gotmpl
