#!/usr/bin/env bash
# bench/decode.sh - sunny-run prefill and decode speed next to llama.cpp's, same GGUF, same run.
#
# Builds a ~200M-parameter llama3-family GGUF once (tests/fixtures/gen_model.py --preset 200m, f32,
# written by tests/tools/rt_hf2gguf.py and converted by rt_quantize to f16, q8_0 and q4_0), then for
# each dtype and 1 and 2 threads runs:
#   llama.cpp: tests/tools/llama_oracle.mjs bench (node-llama-cpp; 64 prompt tokens timed with
#              evaluateWithoutGeneratingNewTokens, then 64 greedy tokens), median of 5 runs;
#   sunny-run: --prompt-ids (the same 64 ids) -n 65 --json, 5 runs, median of its prefill_tok_s and
#              decode_tok_s (decode = 64 single-token evaluations after the prompt).
# Prints tok/s for both and the ratios (target: decode >= 1.0x, prefill >= 0.5x) plus sunny-run's
# peak RSS (from /usr/bin/time) next to the GGUF size and KV cache size. Then, in the same run, the
# runtime-blob rows (issue 8: INT4 blob vs Q4_0, fp16 blob vs F16, 1 and 2 threads) from
# bench/blob_decode.sh; SN_BENCH_BLOB=0 skips them.
#   usage: bench/decode.sh [BUILD_DIR] [DTYPES] [THREADS]
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
DTYPES=${2:-"f16 q8_0 q4_0"}
THREADS=${3:-"1 2"}
RUNS=${SN_BENCH_RUNS:-5}
RUN=$B/cmd/sunny-run
QUANT=$B/tests/rt_quantize
for f in "$RUN" "$QUANT"; do [[ -x $f ]] || { echo "bench/decode.sh: $f not built" >&2; exit 1; }; done
W=${SN_BENCH_WORK:-$B/bench/decode}
mkdir -p "$W"
PY=/usr/bin/python3
src=$W/llama3-200m
if [[ ! -f $W/llama3-200m-f32.gguf ]]; then
  echo "generating the 200m fixture in $W ..."
  $PY tests/fixtures/gen_model.py --family llama3 --preset 200m --dtype f32 --out "$src" >/dev/null || exit 1
  $PY tests/tools/rt_hf2gguf.py "$src" "$W/llama3-200m-f32.gguf" || exit 1
fi
ids=$($PY -c 'print(",".join(str(100 + (i * 7919) % (128256 - 200)) for i in range(64)))')
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "machine: $cpu, $(nproc) cores; prefill 64 tokens, decode 64 tokens, median of $RUNS"
printf '%-6s %3s | %12s %12s %7s | %12s %12s %7s | %8s\n' dtype thr "ours pf" "llama pf" ratio "ours dec" "llama dec" ratio "RSS MB"
for dt in $DTYPES; do
  g=$W/llama3-200m-$dt.gguf
  [[ $dt == f32 || -f $g ]] || "$QUANT" "$W/llama3-200m-f32.gguf" "$g" "$dt" || exit 1
  cat "$g" > /dev/null
  for t in $THREADS; do
    ref=$(node tests/tools/llama_oracle.mjs bench "$g" --threads "$t" --prefill 64 --decode 64 --runs "$RUNS") || { echo "oracle failed"; continue; }
    : > "$W/ours.txt"
    rss=0
    for r in $(seq "$RUNS"); do
      /usr/bin/time -f '%M' -o "$W/rss.txt" "$RUN" "$g" --prompt-ids "$ids" -n 65 -t "$t" --json --ignore-eos >> "$W/ours.txt" || exit 1
      m=$(tail -1 "$W/rss.txt"); (( m > rss )) && rss=$m
    done
    $PY - "$W/ours.txt" "$ref" "$dt" "$t" "$rss" "$g" <<'EOF'
import json, os, statistics, sys
ours = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ref = json.loads(sys.argv[2])
pf = statistics.median(o["prefill_tok_s"] for o in ours)
dc = statistics.median(o["decode_tok_s"] for o in ours)
rpf, rdc = ref["prefill_tok_s"], ref["decode_tok_s"]
print("%-6s %3s | %12.1f %12.1f %6.2fx | %12.1f %12.1f %6.2fx | %8.0f  (gguf %.0f MB)" % (
    sys.argv[3], sys.argv[4], pf, rpf, pf / rpf, dc, rdc, dc / rdc, int(sys.argv[5]) / 1024,
    os.path.getsize(sys.argv[6]) / 2**20))
EOF
  done
done
if [[ ${SN_BENCH_BLOB:-1} != 0 ]]; then
  echo
  echo "== runtime blobs (bench/blob_decode.sh)"
  SN_BENCH_WORK= bash bench/blob_decode.sh "$B" "$RUNS"
fi
