#!/usr/bin/env bash
# test_abi.sh - the stable C ABI (runtime/sn_abi.h) used by a program that includes only that header.
#
# abi_smoke (tests/tools/abi_smoke.c) loads a tiny llama3 fixture GGUF through the ABI, checks the
# version handshake, error reporting and capability bits, and generates 16 greedy tokens; they must
# equal sunny-run's for the same prompt. Also checks that sn_abi.h compiles on its own as C and C++.
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SN_BUILD:-$SRC/build}
BIN=${SN_BIN:-$BUILD/cmd}
WORK=${SN_WORK:-$(mktemp -d)}/abi
PY=/usr/bin/python3
mkdir -p "$WORK"
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
echo "abi: ok"
