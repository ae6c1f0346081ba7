#!/usr/bin/env bash
# bench/decode.sh - sunny-run prefill and decode speed next to llama.cpp's, same GGUF, same run.
#
# Self-contained (a fresh clone with `npm ci` in tests/ and a built tree is enough):
#  1. bench/build_llama_tools.sh builds llama.cpp's llama-bench and llama-quantize once from the
#     source bundle inside node-llama-cpp (CPU only, -march=native; cached in BUILD_DIR/llama.cpp-tools).
#  2. The bench model: tests/fixtures/gen_model.py --preset 200m (221M parameters, Llama-3 shape:
#     hidden 1024, 8 layers, 8 heads / 4 KV heads, ffn 2816, vocab 128256, tied embeddings), written
#     as F32 by tests/tools/rt_hf2gguf.py and rounded to F16 by rt_quantize (the bytes llama.cpp's
#     converter writes for these tensors; its convert_hf_to_gguf.py itself needs the `transformers`
#     Python package, which this offline machine does not have). Every quantized type is then made
#     by llama-quantize from that F16 file with llama.cpp's own recipe: Q8_0, Q4_0 (its Q4_0 keeps
#     a Q6_K output head), Q4_K_M, Q5_K_M, Q6_K.
#  3. For each type and 1 and 2 threads, 64 prompt tokens then 64 greedy decode steps:
#       sunny-run   --prompt-ids (64 ids) -n 65 --json --warmup, RUNS runs, medians of prefill_tok_s
#                   and decode_tok_s (decode = 64 single-token evaluations after the prompt; --warmup
#                   evaluates the prompt once untimed first, as llama-bench warms up before each test);
#       llama-bench -p 64 -n 64 -r 1 -fa on (flash attention, as node-llama-cpp and sunny-run use
#                   on CPU), RUNS times, each followed by one sunny-run (interleaved, so both engines
#                   see the same load); medians of its samples_ts for pp64 and tg64;
#       node-llama-cpp (tests/tools/llama_oracle.mjs bench), median of RUNS runs, as a second column.
#     Prints tok/s and the ratios sunny / llama-bench and sunny / node-llama-cpp, sunny-run's peak
#     RSS (/usr/bin/time) and the load average at the start of each row (the machine is shared:
#     compare the ratios, which both engines' runs in the same minute share), and the bandwidth
#     each engine's decode reaches: weight bytes per step (bench/lib.sh bench_decode_bytes; at a
#     depth the KV cache reads come on top) x tok/s, in GB/s and as a share of this machine's read
#     bandwidth at that thread count (bench/tools/membw.c, measured at the start of the run).
#     Under each row: the smallest, median and largest decode ratio of its interleaved pairs.
#     Before each type's rows, the file is read back into the page cache in 2 MB folios and the
#     share a mapping gets in 2 MB pages is printed (bench/lib.sh bench_file_pmd; SN_BENCH_REFOLD=0
#     leaves the cache as it is): llama-bench reads the weights through the page cache, sunny-run
#     from the huge-page copies it makes at load, and llama-bench's decode moves with that share.
# Then, in the same run, the runtime-blob rows (bench/blob_decode.sh); SN_BENCH_BLOB=0 skips them.
#   usage: bench/decode.sh [BUILD_DIR] [DTYPES] [THREADS]
#   env:   SN_BENCH_RUNS (5), SN_BENCH_WORK (BUILD_DIR/bench/decode), SN_BENCH_NODE=0 skips the
#          node-llama-cpp column, SN_BENCH_BLOB=0 the blob rows;
#          SN_BENCH_PRESET=1b the Llama-3.2-1B shape (hidden 2048, 16 layers, 32 heads / 8 KV heads,
#          FFN 8192, vocab 128256, tied; 1.24B parameters) instead of the 221M one;
#          SN_BENCH_PROMPT=N prompt rows of N tokens (default 64, e.g. 512);
#          SN_BENCH_DEPTH=D decode after D cached positions (e.g. 4096): llama-bench -p 0 -n 64 -d D,
#          sunny-run a D-token prompt then 64 decode steps; the prefill columns are then not comparable
#          (llama-bench reports none) and show nan.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
DTYPES=${2:-"f16 q8_0 q4_0 q4_k_m q5_k_m q6_k"}
THREADS=${3:-"1 2"}
RUNS=${SN_BENCH_RUNS:-5}
PRESET=${SN_BENCH_PRESET:-200m}
NP=${SN_BENCH_PROMPT:-64}
DEPTH=${SN_BENCH_DEPTH:-0}
RUN=$B/cmd/sunny-run
QUANT=$B/tests/rt_quantize
for f in "$RUN" "$QUANT"; do [[ -x $f ]] || { echo "bench/decode.sh: $f not built" >&2; exit 1; }; done
LBIN=$(nice -n 10 bash bench/build_llama_tools.sh "$B") || { echo "bench/decode.sh: building llama-bench failed" >&2; exit 1; }
W=${SN_BENCH_WORK:-$B/bench/decode}
mkdir -p "$W"
PY=/usr/bin/python3
M=$W/llama3-$PRESET
if [[ ! -f $M-f16.gguf ]]; then
  echo "generating the $PRESET fixture in $W ..."
  $PY tests/fixtures/gen_model.py --family llama3 --preset "$PRESET" --dtype f32 --out "$M" >/dev/null || exit 1
  $PY tests/tools/rt_hf2gguf.py "$M" "$M-f32.gguf" || exit 1
  "$QUANT" "$M-f32.gguf" "$M-f16.gguf" f16 || exit 1
  [[ $PRESET == 200m ]] || rm -rf "$M" "$M-f32.gguf" # the 1b sources are 10 GB; F16 is what is kept
fi
declare -A FTYPE=([q8_0]=Q8_0 [q4_0]=Q4_0 [q4_k_m]=Q4_K_M [q5_k_m]=Q5_K_M [q6_k]=Q6_K [q3_k_m]=Q3_K_M [q2_k]=Q2_K [q5_0]=Q5_0 [iq4_nl]=IQ4_NL [iq4_xs]=IQ4_XS)
NIDS=$NP; LB_ARGS=(-p "$NP" -n 64)
if (( DEPTH > 0 )); then NIDS=$DEPTH; LB_ARGS=(-p 0 -n 64 -d "$DEPTH"); fi
ids=$($PY -c 'import sys; print(",".join(str(100 + (i * 7919) % (128256 - 200)) for i in range(int(sys.argv[1]))))' "$NIDS")
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
isa=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_vnni|avx512_bf16|amx_int8)$' | tr '\n' ' ')
echo "machine: $cpu, $(nproc) cores, ISA: $isa; model llama3-$PRESET; prefill $NP tokens, decode 64 tokens$( ((DEPTH > 0)) && echo " after $DEPTH cached positions"), median of $RUNS"
echo "llama.cpp: llama-bench from $LBIN (node-llama-cpp's bundle, $(git bundle list-heads tests/node_modules/node-llama-cpp/llama/gitRelease.bundle | head -c 12))"
. bench/lib.sh # bench_row, bench_machine_bw, bench_decode_bytes
rm -f "$W"/membw.* # the machine's bandwidth is measured again in every run
for t in $THREADS; do echo "machine read bandwidth, $t thread(s): $(bench_machine_bw "$W" "$t") GB/s (bench/tools/membw.c, best of 5 plain + 5 page-touching passes over 1 GB)"; done
printf '%-7s %3s | %9s %9s %9s %6s %6s | %9s %9s %9s %6s %6s | %6s %5s | %s\n' type thr "ours pf" "bench pf" "node pf" "/bench" "/node" \
  "ours dec" "bench dec" "node dec" "/bench" "/node" "RSS MB" load "decode GB/s (% of machine): ours, bench"
for dt in $DTYPES; do
  g=$M-$dt.gguf
  if [[ $dt != f16 && ! -f $g ]]; then
    [[ -n ${FTYPE[$dt]:-} ]] || { echo "bench/decode.sh: unknown type $dt" >&2; exit 2; }
    "$LBIN/llama-quantize" "$M-f16.gguf" "$g.tmp" "${FTYPE[$dt]}" >"$W/quantize.log" 2>&1 \
      || { tail -5 "$W/quantize.log"; exit 1; }
    mv "$g.tmp" "$g"
  fi
  cat "$g" > /dev/null
  echo "page cache: $(bench_file_pmd "$W" "$g")% of $(basename "$g") mapped in 2 MB pages for llama-bench (SN_BENCH_REFOLD=${SN_BENCH_REFOLD:-1}; bench/tools/pmdmap.c)"
  for t in $THREADS; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    node_ref='{}'
    if [[ ${SN_BENCH_NODE:-1} != 0 ]] && (( DEPTH == 0 )); then
      node_ref=$(node tests/tools/llama_oracle.mjs bench "$g" --threads "$t" --prefill "$NP" --decode 64 --runs "$RUNS") || node_ref='{}'
    fi
    : > "$W/ours.txt"
    : > "$W/lbench.json"
    rss=0
    for r in $(seq "$RUNS"); do # interleaved: one llama-bench repetition, then one sunny-run
      "$LBIN/llama-bench" -m "$g" -t "$t" "${LB_ARGS[@]}" -r 1 -fa on -o jsonl >>"$W/lbench.json" 2>"$W/lbench.err" \
        || { echo "llama-bench failed on $g: $(tail -2 "$W/lbench.err")"; continue 2; }
      /usr/bin/time -f '%M' -o "$W/rss.txt" "$RUN" "$g" --prompt-ids "$ids" -n 65 -t "$t" --json --ignore-eos --warmup >> "$W/ours.txt" || exit 1
      m=$(tail -1 "$W/rss.txt"); (( m > rss )) && rss=$m
    done
    BENCH_BYTES=$(bench_decode_bytes "$LBIN" "$g") BENCH_BW=$(bench_machine_bw "$W" "$t") \
      bench_row "$W/ours.txt" "$W/lbench.json" "$node_ref" 9 "$(printf '%-7s %3s' "$dt" "$t")" \
      "$(awk -v r="$rss" -v l="$load" 'BEGIN { printf "%6.0f %5s", r / 1024, l }')"
  done
done
if [[ ${SN_BENCH_BLOB:-1} != 0 ]]; then
  echo
  echo "== runtime blobs (bench/blob_decode.sh)"
  SN_BENCH_WORK= bash bench/blob_decode.sh "$B" "$RUNS"
fi
