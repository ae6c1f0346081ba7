#!/usr/bin/env bash
# bench/cpu_ratio.sh - CPU time (not wall time) per 64-token prompt and per 64 decode steps, sunny-run
# vs llama-bench on the same GGUF, 1 thread: a comparison that a shared, loaded machine does not
# distort (wall-time ratios there mostly measure each engine's share of the cores).
#
# Both engines are timed by the kernel (perf stat task-clock of the whole process), and start-up
# (mapping, tokenizer, warm-up) is removed by differencing two runs that differ only in the work:
#   llama-bench -p 64 -n 0 -r 6  minus  -r 1   -> 5 prompt evaluations of 64 tokens
#   llama-bench -p 0 -n 64 -r 6  minus  -r 1   -> 5 x 64 decode steps
#   sunny-run --prompt-ids (64 ids) -n 1   minus  --prompt-ids (1 id) -n 1   -> one 64-token prompt
#             (minus one single-token step, which is ~1/64 of it), and
#   sunny-run --prompt-ids (64 ids) -n 65  minus  -n 1                      -> 64 decode steps
# Each difference is the median of RUNS pairs; prints ms per 64 tokens and the ratio of tok/s per
# CPU-second (sunny / llama-bench; > 1 means sunny needs less CPU for the same work).
#   usage: bench/cpu_ratio.sh BUILD_DIR GGUF... (env SN_BENCH_RUNS, default 3)
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
shift
RUNS=${SN_BENCH_RUNS:-3}
RUN=$B/cmd/sunny-run
LBIN=$(nice -n 10 bash bench/build_llama_tools.sh "$B") || { echo "bench/cpu_ratio.sh: no llama-bench" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench/cpu_ratio.sh: needs perf (linux-perf)" >&2; exit 1; }
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tc() { # task-clock in ms of the command
  perf stat -x, -e task-clock -o "$T/stat" "$@" >/dev/null 2>"$T/err" || { tail -2 "$T/err" >&2; echo nan; return; }
  awk -F, '/task-clock/ { print $1; exit }' "$T/stat"
}
printf '%-40s | %9s %9s %6s | %9s %9s %6s | %s\n' file "ours pp" "bench pp" ratio "ours tg" "bench tg" ratio load
for g in "$@"; do
  ids=$($PY -c "print(','.join(str(300 + (i * 7919) % 49600) for i in range(64)))") # < every bench vocab
  one=${ids%%,*}
  cat "$g" >/dev/null
  load=$(cut -d' ' -f1 /proc/loadavg)
  : >"$T/rows"
  for r in $(seq "$RUNS"); do
    lp1=$(tc "$LBIN/llama-bench" -m "$g" -t 1 -p 64 -n 0 -r 1)
    lp6=$(tc "$LBIN/llama-bench" -m "$g" -t 1 -p 64 -n 0 -r 6)
    lt1=$(tc "$LBIN/llama-bench" -m "$g" -t 1 -p 0 -n 64 -r 1)
    lt6=$(tc "$LBIN/llama-bench" -m "$g" -t 1 -p 0 -n 64 -r 6)
    s0=$(tc "$RUN" "$g" --prompt-ids "$one" -n 1 -t 1 --ignore-eos)
    s1=$(tc "$RUN" "$g" --prompt-ids "$ids" -n 1 -t 1 --ignore-eos)
    s65=$(tc "$RUN" "$g" --prompt-ids "$ids" -n 65 -t 1 --ignore-eos)
    echo "$lp1 $lp6 $lt1 $lt6 $s0 $s1 $s65" >>"$T/rows"
  done
  load="$load-$(cut -d' ' -f1 /proc/loadavg)"
  $PY - "$T/rows" "$g" "$load" <<'EOF'
import statistics, sys, os
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
med = lambda xs: statistics.median(xs)
lpp = med([(r[1] - r[0]) / 5 for r in rows]); ltg = med([(r[3] - r[2]) / 5 for r in rows])
spp = med([r[5] - r[4] for r in rows]); stg = med([r[6] - r[5] for r in rows])
print("%-40s | %7.1fms %7.1fms %5.2fx | %7.1fms %7.1fms %5.2fx | %s" % (
    os.path.basename(sys.argv[2]), spp, lpp, lpp / spp, stg, ltg, ltg / stg, sys.argv[3]))
EOF
done
