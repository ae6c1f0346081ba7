#!/usr/bin/env bash
# bench/moe.sh - sunny-run next to llama-bench on a mixture of experts, same GGUF, same run.
#
#  1. The model: tests/fixtures/gen_model.py --family qwen3moe --preset moe1b (random bf16 weights:
#     hidden 1024, 10 layers, 8 heads / 4 KV heads of 128, 32 experts of 768, top-4, qwen3's
#     vocabulary 151936, untied head: 1.10B parameters, 0.28B active per token), converted by
#     llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py; its vocabulary step needs
#     transformers, which this machine lacks, so the tokenizer keys are sunny's, tests/tools/vocab_only,
#     equal to llama.cpp's by the vocab tests: llama-bench needs a vocabulary), then llama-quantize
#     from that bf16 file: Q8_0, Q4_0, Q4_K_M (llama.cpp's recipes).
#  2. For each type and 1 and 2 threads, RUNS times interleaved (one llama-bench, then one sunny-run):
#       row "64":  llama-bench -p 64 -n 64 -fa on; sunny-run 64 prompt ids then 64 decode steps
#                  (--warmup evaluates the prompt once untimed first, as llama-bench warms up);
#       row "512": llama-bench -p 512 -n 0; sunny-run 512 prompt ids, one token.
#     Medians (bench/lib.sh bench_row), and decode GB/s from the ACTIVE bytes one token reads: every
#     tensor but the token embedding (untied head), the expert stacks counted n_used / n_expert
#     (4 of 32 experts a layer), against this machine's read bandwidth at that thread count.
#   usage: bench/moe.sh [BUILD_DIR] [DTYPES] [THREADS]
#   env:   SN_BENCH_RUNS (3), SN_BENCH_WORK (BUILD_DIR/bench/moe)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
B=${1:-build}
DTYPES=${2:-"q8_0 q4_0 q4_k_m"}
THREADS=${3:-"1 2"}
RUNS=${SN_BENCH_RUNS:-3}
RUN=$B/cmd/sunny-run
PY=/usr/bin/python3
[[ -x $RUN && -x $B/tests/vocab_only ]] || { echo "bench/moe.sh: build $B first" >&2; exit 1; }
LBIN=$(nice -n 10 bash bench/build_llama_tools.sh "$B") || { echo "bench/moe.sh: building llama-bench failed" >&2; exit 1; }
LSRC=$(ls -d "$(dirname "$(dirname "$LBIN")")"/src-* | head -1)
W=${SN_BENCH_WORK:-$B/bench/moe}
mkdir -p "$W"
M=$W/qwen3moe-moe1b

if [[ ! -f $M-bf16.gguf ]]; then
  rm -rf "$M-hf"
  $PY tests/fixtures/gen_model.py --family qwen3moe --preset moe1b --dtype bf16 --out "$M-hf" >/dev/null &&
    SN_LCPP_NO_VOCAB=1 $PY tests/tools/lcpp_convert.py "$LSRC" "$M-hf" "$M-novocab.gguf" bf16 >"$W/lcpp.log" 2>&1 &&
    "$B/tests/vocab_only" "$M-hf" "$M-vocab.gguf" >/dev/null &&
    $PY - "$M-novocab.gguf" "$M-vocab.gguf" "$M-bf16.gguf" <<'PYEOF' || { echo "bench/moe.sh: making the model failed (see $W/lcpp.log)" >&2; exit 1; }
import sys
sys.path.insert(0, "tests/tools")
import gguf_split
ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(sys.argv[1])
tok = [kv for kv in gguf_split.read_gguf(sys.argv[2])[1] if kv[0].startswith("tokenizer.")]
gguf_split.write_shard(sys.argv[3], [kv for kv in kvs if not kv[0].startswith("tokenizer.")] + tok, tensors, size_of, b,
                       data_start, align)
PYEOF
  rm -rf "$M-hf" "$M-novocab.gguf" "$M-vocab.gguf"
fi
for dt in $DTYPES; do
  [[ -f $M-$dt.gguf ]] || nice -n 10 "$LBIN/llama-quantize" "$M-bf16.gguf" "$M-$dt.gguf" "${dt^^}" 2 >"$W/quant-$dt.log" 2>&1 ||
    { echo "bench/moe.sh: llama-quantize $dt failed" >&2; exit 1; }
done

active_bytes() { # GGUF -> bytes one decode step reads on average
  $PY - "$(ls -d "$LSRC"/gguf-py)" "$1" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "tests/tools")
import gguf
from gguf_fast import reader
r = reader(gguf, sys.argv[2])
f = {k: v for k, v in r.fields.items()}
arch = bytes(f["general.architecture"].parts[-1]).decode()
n_exp, n_used = (int(f[f"{arch}.{k}"].parts[-1][0]) for k in ("expert_count", "expert_used_count"))
names = {t.name for t in r.tensors}
total = 0.0
for t in r.tensors:
    if t.name == "token_embd.weight" and "output.weight" in names:
        continue
    total += int(t.n_bytes) * (n_used / n_exp if "_exps." in t.name else 1)
print(int(total))
PYEOF
}
ids() { $PY -c "import sys; print(','.join(str((i * 7919 + 13) % 150000) for i in range($1)))"; }

echo "bench/moe.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), sunny-run $(git rev-parse --short HEAD), llama.cpp $(basename "$LSRC"), runs $RUNS"
echo "model: qwen3moe 1.10B (0.28B active), 32 experts of 768, top-4; tok/s medians; ratio = sunny / llama-bench"
printf '%-8s %2s %4s | %7s %7s %7s %6s %6s | %7s %7s %7s %6s %6s | %s\n' type t np pf lb-pf node pf/lb pf/nd dc lb-dc node dc/lb dc/nd \
  "load | GB/s (% of machine), from the active bytes"
for dt in $DTYPES; do
  g=$M-$dt.gguf
  BENCH_BYTES=$(active_bytes "$g")
  for t in $THREADS; do
    BENCH_BW=$(bench_machine_bw "$W" "$t")
    for np in 64 512; do
      ours=$W/ours-$dt-$t-$np.jsonl lb=$W/lb-$dt-$t-$np.jsonl
      : >"$ours"; : >"$lb"
      load=$(cut -d' ' -f1 /proc/loadavg)
      n=65; lbn=64; ((np == 512)) && { n=1; lbn=0; }
      for ((r = 0; r < RUNS; r++)); do
        "$LBIN/llama-bench" -m "$g" -p "$np" -n "$lbn" -r 1 -fa on -t "$t" -o jsonl 2>/dev/null >>"$lb"
        "$RUN" "$g" --prompt-ids "$(ids "$np")" -n $n --json --warmup --ignore-eos -t "$t" 2>/dev/null >>"$ours"
      done
      BENCH_BYTES=$BENCH_BYTES BENCH_BW=$BENCH_BW bench_row "$ours" "$lb" '{}' 7 \
        "$(printf '%-8s %2s %4s' "$dt" "$t" "$np")" "load $load"
    done
  done
done
