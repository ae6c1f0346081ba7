#!/usr/bin/env bash
# test_fuzz_jinja.sh - the Jinja interpreter must never crash, leak, trip a sanitizer or hang on
# mutated templates. Builds tests/fuzz/fuzz_jinja.c with clang's libFuzzer + ASan + UBSan, replays
# every saved regression input (tests/fuzz/jinja_regressions/: inputs that once crashed), then
# fuzzes for SN_FUZZ_SECONDS (default 30) seeded with the real template corpus.
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
W=${SN_WORK:-/tmp/sn-work}/fuzz_jinja
SECS=${SN_FUZZ_SECONDS:-30}
rm -rf "$W" && mkdir -p "$W/corpus"
command -v clang >/dev/null || { echo "FAIL: clang (libFuzzer) not installed; scripts/deps.sh installs it"; exit 1; }
clang -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$SRC/templates" -I"$SRC/runtime" "$SRC/tests/fuzz/fuzz_jinja.c" "$SRC"/templates/jinja_*.c \
  "$SRC/runtime/sn_err.c" -lcjson -o "$W/fuzz_jinja"
cp "$SRC"/tests/fixtures/templates/*.jinja "$W/corpus/"
reg=("$SRC"/tests/fuzz/jinja_regressions/*)
if [ -e "${reg[0]}" ]; then
  "$W/fuzz_jinja" -runs=1 -timeout=10 "${reg[@]}" >"$W/regressions.log" 2>&1 ||
    { tail -30 "$W/regressions.log"; echo "FAIL: a saved regression input crashes again"; exit 1; }
  echo "fuzz_jinja: ${#reg[@]} regression input(s) replayed"
fi
if ! "$W/fuzz_jinja" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=1024 -max_len=65536 \
     -artifact_prefix="$W/" "$W/corpus" >"$W/fuzz.log" 2>&1; then
  tail -40 "$W/fuzz.log"
  echo "FAIL: fuzz_jinja found a crash/hang; the input is in $W/ (crash-*|timeout-*|leak-*):" \
       "add it to tests/fuzz/jinja_regressions/ with the fix"
  exit 1
fi
grep -E "^Done|#[0-9]+.*(DONE|pulse)" "$W/fuzz.log" | tail -1
echo "fuzz_jinja: no crash in ${SECS}s"
