#!/usr/bin/env bash
# bench/blob_decode.sh - decode speed of sunny's runtime blobs (docs/BLOB.md) against llama.cpp.
#
# On the ~200M llama3 fixture (tests/fixtures/gen_model.py --preset 200m, bf16, tied embeddings),
# in one run, for 1 and 2 threads: sunny-run on the INT4 blob (default Q6_K head shared with the
# embedding, as llama-quantize's Q4_0 recipe; and with --head fp16) vs llama.cpp (node-llama-cpp) on
# the Q4_0 GGUF made by llama-quantize's recipe (sunny-convert --outtype q4_0 is byte-identical),
# and sunny-run on the fp16 blob vs llama.cpp on the F16 GGUF. Both sides: a 64-token prompt, then
# 64 greedy decode steps, median of RUNS runs; the engines alternate run by run so machine load hits
# both alike. Targets (issues 8, 18): INT4 >= 1.2x Q4_0, fp16 >= 1.0x F16. This bench is separate
# from bench/decode.sh (the GGUF rows, runtime engineer).
#   usage: bench/blob_decode.sh [BUILD_DIR] [RUNS]
#   env: SN_BENCH_THREADS ("1 2"), SN_BENCH_ROWS ("int4 int4h16 fp16": which rows, and which files
#        are made for them)
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${2:-5}
RUN=$B/cmd/sunny-run
CONV=$B/cmd/sunny-convert
ORACLE="node tests/tools/llama_oracle.mjs"
[[ -x $RUN && -x $CONV ]] || { echo "bench/blob_decode.sh: $B/cmd/sunny-run or sunny-convert not built" >&2; exit 1; }
[[ -d tests/node_modules/node-llama-cpp ]] || { echo "bench/blob_decode.sh: npm oracles missing (scripts/deps.sh)" >&2; exit 1; }
W=${SN_BENCH_WORK:-$B/bench/blob}
mkdir -p "$W"
src=$W/llama3-200m-bf16
if [[ ! -f $src/.done ]]; then
  rm -rf "$src"
  echo "generating $src ..."
  /usr/bin/python3 tests/fixtures/gen_model.py --family llama3 --dtype bf16 --preset 200m --out "$src" >/dev/null || exit 1
  touch "$src/.done"
fi
make_file() { # OUT ARGS... (converted once)
  local out=$1; shift
  [[ -f $out ]] && return 0
  "$CONV" "$src" -o "$out" "$@" -t 2 >/dev/null || { echo "conversion to $out failed" >&2; exit 1; }
}
ROWS=" ${SN_BENCH_ROWS:-int4 int4h16 fp16} "
has_row() { [[ $ROWS == *" $1 "* ]]; }
make_file "$W/m-q4_0.gguf" --outtype q4_0
has_row fp16 && make_file "$W/m-f16.gguf" --outtype f16
make_file "$W/m-int4.snb" --blob --dtype int4
has_row int4h16 && make_file "$W/m-int4-h16.snb" --blob --dtype int4 --head fp16
has_row fp16 && make_file "$W/m-fp16.snb" --blob --dtype fp16

PROMPT=$(seq -s, 1000 1063) # 64 tokens, as llama_oracle.mjs bench --prefill 64
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
sunny_once() { # MODEL THREADS -> decode tok/s of one run
  "$RUN" "$1" --prompt-ids "$PROMPT" -n 64 --ignore-eos --warmup -t "$2" --json 2>/dev/null |
    sed -n 's/.*"decode_tok_s":\([0-9.]*\).*/\1/p'
}
llama_once() { # GGUF THREADS -> decode tok/s of one run
  $ORACLE bench "$1" --threads "$2" --prefill 64 --decode 64 --runs 1 2>/dev/null |
    sed -n 's/.*"decode_tok_s":\([0-9.e+-]*\).*/\1/p'
}
pair() { # LABEL BLOB GGUF THREADS TARGET
  local label=$1 blob=$2 gguf=$3 t=$4 target=$5 s l r
  : >"$W/s.txt"; : >"$W/l.txt"
  sunny_once "$blob" "$t" >/dev/null; llama_once "$gguf" "$t" >/dev/null # warm the page cache
  for ((r = 0; r < RUNS; r++)); do
    sunny_once "$blob" "$t" >>"$W/s.txt"
    llama_once "$gguf" "$t" >>"$W/l.txt"
  done
  s=$(median <"$W/s.txt"); l=$(median <"$W/l.txt")
  awk -v a="$s" -v b="$l" -v lab="$label" -v t="$t" -v tg="$target" -v bl="$(basename "$blob")" -v gg="$(basename "$gguf")" \
    'BEGIN { r = b > 0 ? a / b : 0; printf "%-22s %3d %-16s %8.2f  %-12s %8.2f  %6.2fx  %s (>= %.1fx)\n", lab, t, bl, a, gg, b, r, (r >= tg ? "ok" : "BELOW"), tg }'
}

kern=$("$RUN" "$W/m-int4.snb" --prompt-ids 1 -n 1 2>&1 >/dev/null | sed -n 's/.*(\(.*kernels\).*/\1/p')
bytes() { stat -c %s "$1" 2>/dev/null || echo 0; }
echo "model: llama3 200m preset (n_embd 1024, 8 layers, n_ff 2816, vocab 128256, tied), bf16 source"
echo "files: int4 blob $(($(bytes "$W/m-int4.snb") / 1000000)) MB, int4+fp16-head blob $(($(bytes "$W/m-int4-h16.snb") / 1000000)) MB," \
  "fp16 blob $(($(bytes "$W/m-fp16.snb") / 1000000)) MB," \
  "Q4_0 GGUF $(($(bytes "$W/m-q4_0.gguf") / 1000000)) MB (Q6_K token_embd = head), F16 GGUF $(($(bytes "$W/m-f16.gguf") / 1000000)) MB"
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); sunny $kern; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "decode tok/s: 64-token prompt + 64 greedy steps, median of $RUNS runs per engine, runs interleaved"
printf "%-22s %3s %-16s %8s  %-12s %8s  %7s\n" row thr sunny tok/s llama.cpp tok/s ratio
for t in ${SN_BENCH_THREADS:-1 2}; do
  has_row int4 && pair "int4 blob vs Q4_0" "$W/m-int4.snb" "$W/m-q4_0.gguf" "$t" 1.2
  has_row int4h16 && pair "int4(fp16 head) vs Q4_0" "$W/m-int4-h16.snb" "$W/m-q4_0.gguf" "$t" 1.2
  has_row fp16 && pair "fp16 blob vs F16" "$W/m-fp16.snb" "$W/m-f16.gguf" "$t" 1.0
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
