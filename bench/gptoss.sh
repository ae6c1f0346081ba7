#!/usr/bin/env bash
# bench/gptoss.sh - sunny-run next to llama-bench on a gpt-oss-shaped model, same GGUF, same run.
#
#  1. The model: tests/fixtures/gen_gptoss.py --hidden 768 --ffn 768 --experts-n 32 --top-k 4
#     --layers 12 --heads 12 --kv 4 --window 128 (random weights in the released layout: MXFP4
#     experts, bf16 elsewhere, attention sinks and biases, YaRN, alternating 128-token sliding
#     window, the o200k_harmony vocabulary 201088, untied head: 1.01B parameters, 0.26B active per
#     token), converted by llama.cpp's own convert_hf_to_gguf.py as it converts the released
#     checkpoint (tests/tools/lcpp_convert.py, SN_LCPP_HF_TOK=gptoss): MXFP4 expert stacks, bf16
#     elsewhere.
#  2. For 1 and 2 threads, RUNS times interleaved (one llama-bench, then one sunny-run):
#       row "64":  llama-bench -p 64 -n 64 -fa on; sunny-run 64 prompt ids then 64 decode steps
#                  (--warmup evaluates the prompt once untimed first, as llama-bench warms up);
#       row "512": llama-bench -p 512 -n 0; sunny-run 512 prompt ids, one token.
#     Medians (bench/lib.sh bench_row), and decode GB/s from the ACTIVE bytes one token reads (every
#     tensor but the token embedding, the expert stacks counted 4 of 32).
#   usage: bench/gptoss.sh [BUILD_DIR] [THREADS]
#   env:   SN_BENCH_RUNS (3), SN_BENCH_WORK (BUILD_DIR/bench/gptoss)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
B=${1:-build}
THREADS=${2:-"1 2"}
RUNS=${SN_BENCH_RUNS:-3}
RUN=$B/cmd/sunny-run
PY=/usr/bin/python3
[[ -x $RUN ]] || { echo "bench/gptoss.sh: build $B first" >&2; exit 1; }
LBIN=$(nice -n 10 bash bench/build_llama_tools.sh "$B") || { echo "bench/gptoss.sh: building llama-bench failed" >&2; exit 1; }
LSRC=$(ls -d "$(dirname "$(dirname "$LBIN")")"/src-* | head -1)
W=${SN_BENCH_WORK:-$B/bench/gptoss}
mkdir -p "$W"
g=$W/gptoss-1b-mxfp4.gguf
if [[ ! -f $g ]]; then
  rm -rf "$W/hf"
  $PY tests/fixtures/gen_gptoss.py --out "$W/hf" --hidden 768 --ffn 768 --experts-n 32 --top-k 4 --layers 12 \
    --heads 12 --kv 4 --window 128 >/dev/null &&
    SN_LCPP_HF_TOK=gptoss $PY tests/tools/lcpp_convert.py "$LSRC" "$W/hf" "$g" auto >"$W/lcpp.log" 2>&1 ||
    { rm -f "$g"; echo "bench/gptoss.sh: making the model failed (see $W/lcpp.log)" >&2; exit 1; }
  rm -rf "$W/hf"
fi

active_bytes() { # GGUF -> bytes one decode step reads on average
  $PY - "$(ls -d "$LSRC"/gguf-py)" "$1" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "tests/tools")
import gguf
from gguf_fast import reader
r = reader(gguf, sys.argv[2])
f = {k: v for k, v in r.fields.items()}
n_exp, n_used = (int(f[f"gpt-oss.{k}"].parts[-1][0]) for k in ("expert_count", "expert_used_count"))
print(int(sum(int(t.n_bytes) * (n_used / n_exp if "_exps." in t.name else 1) for t in r.tensors
              if t.name != "token_embd.weight")))
PYEOF
}
ids() { $PY -c "import sys; print(','.join(str((i * 7919 + 13) % 199990) for i in range($1)))"; }

echo "bench/gptoss.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), sunny-run $(git rev-parse --short HEAD), llama.cpp $(basename "$LSRC"), runs $RUNS"
echo "model: gpt-oss 1.01B (0.26B active), 32 MXFP4 experts of 768, top-4; tok/s medians; ratio = sunny / llama-bench"
printf '%-8s %2s %4s | %7s %7s %7s %6s %6s | %7s %7s %7s %6s %6s | %s\n' type t np pf lb-pf node pf/lb pf/nd dc lb-dc node dc/lb dc/nd \
  "load | GB/s (% of machine), from the active bytes"
BENCH_BYTES=$(active_bytes "$g")
for t in $THREADS; do
  BENCH_BW=$(bench_machine_bw "$W" "$t")
  for np in 64 512; do
    ours=$W/ours-$t-$np.jsonl lb=$W/lb-$t-$np.jsonl
    : >"$ours"; : >"$lb"
    load=$(cut -d' ' -f1 /proc/loadavg)
    n=65; lbn=64; ((np == 512)) && { n=1; lbn=0; }
    for ((r = 0; r < RUNS; r++)); do
      "$LBIN/llama-bench" -m "$g" -p "$np" -n "$lbn" -r 1 -fa on -t "$t" -o jsonl 2>/dev/null >>"$lb"
      "$RUN" "$g" --prompt-ids "$(ids "$np")" -n $n --json --warmup --ignore-eos -t "$t" 2>/dev/null >>"$ours"
    done
    BENCH_BYTES=$BENCH_BYTES BENCH_BW=$BENCH_BW bench_row "$ours" "$lb" '{}' 7 \
      "$(printf '%-8s %2s %4s' mxfp4 "$t" "$np")" "load $load"
  done
done
