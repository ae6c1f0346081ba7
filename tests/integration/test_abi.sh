#!/usr/bin/env bash
# test_abi.sh - the stable C ABI (runtime/sn_abi.h) used by a program that includes only that header.
#
# abi_smoke (tests/tools/abi_smoke.c) loads a tiny llama3 fixture GGUF through the ABI, checks the
# version handshake, error reporting and capability bits, and generates 16 greedy tokens; they must
# equal sunny-run's for the same prompt. Also checks that sn_abi.h compiles on its own as C and C++.
# abi_threads (tests/tools/abi_threads.c) loads two models (the llama3 f32 fixture and a qwen3 q4_0
# one) from two threads at once, then again one after the other; both runs must equal sunny-run's
# ids. It runs in every build (so under ASan/UBSan in the ASan pass) and, in the normal pass, once
# more built with ThreadSanitizer over the runtime sources (gcc -fsanitize=thread; a race report
# fails the test).
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SN_BUILD:-$SRC/build}
BIN=${SN_BIN:-$BUILD/cmd}
WORK=${SN_WORK:-$(mktemp -d)}/abi
PY=/usr/bin/python3
mkdir -p "$WORK"
# removed when the script passes (lib.sh's scratch rule; SN_KEEP_WORK=1 keeps it), kept when it fails
trap 'rc=$?; ((rc == 0)) && [[ ${SN_KEEP_WORK:-0} != 1 ]] && rm -rf "$WORK"; exit $rc' EXIT
SMOKE=$BUILD/tests/abi_smoke
[[ -x $SMOKE ]] || { echo "missing $SMOKE"; exit 1; }

# the header stands alone
printf '#include "sn_abi.h"\nint main(void){return sn_abi_check(SN_ABI_VERSION_MAJOR);}\n' > "$WORK/h.c"
cc -std=c99 -Wall -Wextra -Werror -fsyntax-only -I"$SRC/runtime" "$WORK/h.c"
if command -v c++ >/dev/null; then c++ -Wall -Werror -fsyntax-only -x c++ -I"$SRC/runtime" "$WORK/h.c"; fi

g=$WORK/llama3-tiny-f32.gguf
if [[ ! -f $g ]]; then
    $PY "$SRC/tests/fixtures/gen_model.py" --family llama3 --out "$WORK/llama3-tiny" --dtype f32 >/dev/null
    $PY "$SRC/tests/tools/rt_hf2gguf.py" "$WORK/llama3-tiny" "$g"
fi
ids=128000,791,3938,315,9822,374
"$SMOKE" "$g" "$ids" 16 > "$WORK/abi.json"
"$BIN/sunny-run" "$g" --prompt-ids "$ids" -n 16 --json --ignore-eos > "$WORK/run.json"
$PY - "$WORK/abi.json" "$WORK/run.json" <<'PYEOF'
import json, sys
a, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["ids"] == r["ids"], f"ABI ids {a['ids']} != sunny-run ids {r['ids']}"
assert len(a["ids"]) == 16
print("abi: 16 greedy tokens equal sunny-run's; caps=%d" % a["caps"], {k: v for k, v in a.items() if k not in ("ids",)})
PYEOF

# two models, two threads
q=$WORK/qwen3-tiny-q4_0.gguf
if [[ ! -f $q ]]; then
    $PY "$SRC/tests/fixtures/gen_model.py" --family qwen3 --out "$WORK/qwen3-tiny" --dtype f32 >/dev/null
    "$BIN/sunny-convert" "$WORK/qwen3-tiny" -o "$q" --outtype q4_0 --force >/dev/null
fi
"$BIN/sunny-run" "$q" --prompt-ids "$ids" -n 12 --json --ignore-eos > "$WORK/run-q.json"
"$BIN/sunny-run" "$g" --prompt-ids "$ids" -n 12 --json --ignore-eos > "$WORK/run-g.json"
check_threads() { # $1: the program, $2: what it is
    "$1" "$g" "$q" "$ids" 12 2 > "$WORK/threads.json" || { echo "abi: $2: abi_threads failed"; exit 1; }
    $PY - "$WORK/threads.json" "$WORK/run-g.json" "$WORK/run-q.json" "$2" <<'PYEOF'
import json, sys
t, g, q = (json.load(open(p)) for p in sys.argv[1:4])
assert t["a"] == g["ids"] and t["b"] == q["ids"], f"{sys.argv[4]}: two-thread ids {t} differ from sunny-run's {g['ids']} / {q['ids']}"
print(f"abi: {sys.argv[4]}: two models loaded and run from two threads at once: 12 ids each equal sunny-run's")
PYEOF
}
check_threads "$BUILD/tests/abi_threads" "$(basename "$BUILD") build"
if [[ $(basename "$BUILD") != *asan* ]]; then
    tsan=$WORK/abi_threads_tsan
    gcc -fsanitize=thread -O1 -g -std=c11 -D_GNU_SOURCE $(printf -- '-I%s ' "$SRC"/runtime "$SRC"/runtime/*/) "$SRC"/runtime/*.c "$SRC"/runtime/*/*.c \
        "$SRC/tests/tools/abi_threads.c" -lpcre2-8 -lz -lm -lpthread -o "$tsan"
    TSAN_OPTIONS="halt_on_error=1 exitcode=66" check_threads "$tsan" "ThreadSanitizer build"
fi
echo "abi: ok"
