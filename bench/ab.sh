#!/usr/bin/env bash
# bench/ab.sh - one build against another in the same run: is a refactor speed-neutral?
#
# For a change that must not move speed (issue 13's seams and layout), the two sunny builds are run
# interleaved - old, new, old, new, ... - on the same files, so both see the same load, and the
# medians are compared as new / old (1.00x = unchanged):
#   - sunny-run on the 200m Llama-3-shaped bench model (bench/decode.sh's files: F16, and Q8_0 /
#     Q4_0 made by llama-quantize), 64 prompt ids then 64 greedy decode steps, 1 thread;
#   - sunny-convert of the 200m bf16 HF fixture (bench/convert.sh's) to f16 and q8_0, 2 threads,
#     MB/s of source over the whole process.
# Both engines' absolute numbers move with the load of a shared machine; only the ratio is meant.
# Noise: the spread of the old build's own runs is printed next to each ratio (max/min of its RUNS).
#   usage: bench/ab.sh OLD_BUILD NEW_BUILD [RUNS (default 5)]
#   env:   SN_BENCH_WORK (NEW_BUILD/bench), SN_AB_TYPES ("f16 q8_0 q4_0"), SN_AB_CONVERT=0 skips convert,
#          SN_AB_PROMPT=N prompt ids (default 64)
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: bench/ab.sh OLD_BUILD NEW_BUILD [RUNS]}
NEW=${2:?usage: bench/ab.sh OLD_BUILD NEW_BUILD [RUNS]}
RUNS=${3:-5}
W=${SN_BENCH_WORK:-$NEW/bench}
PY=/usr/bin/python3
for b in "$OLD" "$NEW"; do
  for f in cmd/sunny-run cmd/sunny-convert; do [[ -x $b/$f ]] || { echo "bench/ab.sh: $b/$f not built" >&2; exit 1; }; done
done
TYPES=${SN_AB_TYPES:-"f16 q8_0 q4_0"}
# the decode files, as bench/decode.sh makes them (it is run once with no timed rows if any is missing)
for dt in $TYPES; do
  [[ -f $W/decode/llama3-200m-$dt.gguf ]] && continue
  SN_BENCH_RUNS=1 SN_BENCH_NODE=0 SN_BENCH_BLOB=0 SN_BENCH_WORK=$W/decode bash bench/decode.sh "$NEW" "$dt" 1 >/dev/null
done
NP=${SN_AB_PROMPT:-64}
ids=$($PY -c 'import sys; print(",".join(str(100 + (i * 7919) % (128256 - 200)) for i in range(int(sys.argv[1]))))' "$NP")
echo "bench/ab.sh: old $OLD ($(git -C "$(dirname "$OLD")" log -1 --format=%h 2>/dev/null || echo ?)) vs new $NEW, median of $RUNS interleaved runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s | %9s %9s %7s %7s | %9s %9s %7s %7s\n' row "old pf" "new pf" new/old spread "old dec" "new dec" new/old spread
for dt in $TYPES; do
  g=$W/decode/llama3-200m-$dt.gguf
  cat "$g" >/dev/null
  : >"$W/ab-old.txt"; : >"$W/ab-new.txt"
  for r in $(seq "$RUNS"); do
    "$OLD/cmd/sunny-run" "$g" --prompt-ids "$ids" -n 65 -t 1 --json --ignore-eos >>"$W/ab-old.txt"
    "$NEW/cmd/sunny-run" "$g" --prompt-ids "$ids" -n 65 -t 1 --json --ignore-eos >>"$W/ab-new.txt"
  done
  $PY - "$W/ab-old.txt" "$W/ab-new.txt" "sunny-run $dt 1T p$NP" <<'EOF'
import json, statistics, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
def m(rows, k): return statistics.median(r[k] for r in rows)
def sp(rows, k): return max(r[k] for r in rows) / min(r[k] for r in rows)
print("%-22s | %9.1f %9.1f %6.2fx %6.2fx | %9.1f %9.1f %6.2fx %6.2fx" % (sys.argv[3],
      m(o, "prefill_tok_s"), m(n, "prefill_tok_s"), m(n, "prefill_tok_s") / m(o, "prefill_tok_s"), sp(o, "prefill_tok_s"),
      m(o, "decode_tok_s"), m(n, "decode_tok_s"), m(n, "decode_tok_s") / m(o, "decode_tok_s"), sp(o, "decode_tok_s")))
EOF
done
[[ ${SN_AB_CONVERT:-1} == 0 ]] && exit 0
src=$W/convert/llama3-200m-bf16
if [[ ! -f $src/model.safetensors && ! -f $src/model.safetensors.index.json ]]; then
  mkdir -p "$W/convert"
  $PY tests/fixtures/gen_model.py --family llama3 --dtype bf16 --preset 200m --out "$src" >/dev/null
fi
mb=$(du -smL "$src" | cut -f1)
cat "$src"/* >/dev/null
for ot in f16 q8_0; do
  : >"$W/ab-conv.txt"
  for r in $(seq "$RUNS"); do
    for side in old new; do
      b=$OLD; [[ $side == new ]] && b=$NEW
      s=$(date +%s.%N)
      "$b/cmd/sunny-convert" "$src" -o "$W/ab-$side.gguf" --outtype "$ot" -t 2 --force >/dev/null 2>&1
      e=$(date +%s.%N)
      echo "$side $s $e" >>"$W/ab-conv.txt"
    done
  done
  cmp -s "$W/ab-old.gguf" "$W/ab-new.gguf" && same="same bytes" || same="BYTES DIFFER"
  $PY - "$W/ab-conv.txt" "$mb" "sunny-convert $ot" "$same" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
mb = float(sys.argv[2])
v = {s: [mb / (float(e) - float(b)) for side, b, e in rows if side == s] for s in ("old", "new")}
mo, mn = statistics.median(v["old"]), statistics.median(v["new"])
print("%-22s | %9.0f %9.0f %6.2fx %6.2fx | MB/s of source, 2 threads; %s" % (sys.argv[3], mo, mn, mn / mo,
      max(v["old"]) / min(v["old"]), sys.argv[4]))
EOF
done
rm -f "$W/ab-old.gguf" "$W/ab-new.gguf"
