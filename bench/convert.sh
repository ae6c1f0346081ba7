#!/usr/bin/env bash
# bench/convert.sh - sunny-convert throughput and memory on a ~200M-parameter bf16 model.
#
# Generates the fixture once (tests/fixtures/gen_model.py --preset 200m, llama3 family, bf16), warms
# the page cache, then converts it to f16, bf16, q8_0 and q4_0 with 2 threads, REPS times each, and
# prints per type the median of: wall seconds, MB/s of source (safetensors bytes / wall seconds of
# the whole sunny-convert process, config + tokenizer + tensors + final fsync), the tensor-data
# phase alone (from --json), the fsync, CPU seconds; and the largest peak RSS (/usr/bin/time -v).
# Targets (issue 3): >= 1000 MB/s for f16/bf16, >= 500 MB/s for q8_0/q4_0, peak RSS <= 150 MB plus
# one tensor's working set. The reference point is llama.cpp's converter, which needs Python +
# torch + transformers (not available offline here), so no ratio is printed; see
# docs/PERFORMANCE.md for the conditions. Run it under `flock /tmp/sunny-bench.lock` on a shared box.
# Checkpoint row (issue 14): the same model saved by torch.save as one ~450 MB bf16 pytorch_model.bin
# (tests/fixtures/gen_torch_ckpt.py) converts to bf16 and q8_0 alternately with the safetensors
# folder, REPS times each; printed: both MB/s (of the same tensor bytes), their ratio (target >=
# 0.8x) and the .bin run's peak RSS (target <= 64 MB). WHAT=ckpt runs only this row.
# K-quant row (issue 43): the bf16 folder -> q4_k_m in one step (-t 2) against llama.cpp's way,
# convert_hf_to_gguf.py --outtype bf16 (tests/tools/lcpp_convert.py, its vocabulary step skipped:
# SN_LCPP_NO_VOCAB=1, which only makes the reference faster) then llama_model_quantize Q4_K_M with 2
# threads (tests/tools/llama_quantize_oracle.c, node-llama-cpp's libllama), REPS times each,
# alternately; printed: MB/s of source for both, the ratio, both CPU seconds and our peak RSS
# (targets >= 500 MB/s, <= 64 MB). WHAT=kquant runs only this row.
#   usage: bench/convert.sh [BUILD_DIR] [FAMILY] [REPS (default 5)] [WHAT: all (default) | ckpt | kquant]
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
FAM=${2:-llama3}
REPS=${3:-5}
WHAT=${4:-all}
BIN=$B/cmd/sunny-convert
[[ -x $BIN ]] || { echo "bench/convert.sh: $BIN not built (make first)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "bench/convert.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }
W=${SN_BENCH_WORK:-$B/bench/convert}
mkdir -p "$W"
src=$W/$FAM-200m-bf16
if [[ ! -f $src/.done ]]; then
  rm -rf "$src"
  echo "generating $src ..."
  /usr/bin/python3 tests/fixtures/gen_model.py --family "$FAM" --dtype bf16 --preset 200m --out "$src" >/dev/null || exit 1
  touch "$src/.done"
fi
src_bytes=$(cat "$src"/*.safetensors | wc -c)
cat "$src"/*.safetensors > /dev/null # page cache warm
params=$("$BIN" "$src" --dry-run --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["n_params"])')
echo "model: $FAM 200m preset, $params parameters, $((src_bytes / 1000000)) MB bf16 safetensors; threads: 2; $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "seconds, MB/s: whole run (config + tokenizer + tensors + final fsync); data: tensor streaming"
echo "into the page cache only (excludes tokenizer and fsync); fsync: the final flush to disk; cpu_s: user+sys"
echo "CPU seconds of the whole run; medians of $REPS runs per type (peak RSS: the largest)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
types="f16 bf16 q8_0 q4_0"
[[ $WHAT != all ]] && types=""
[[ -n $types ]] &&
  printf "%-6s %8s %10s %8s %10s %7s %7s %10s %10s %8s\n" type seconds "MB/s(src)" data_s "MB/s(data)" fsync cpu_s "out MB" "peakRSS" target
for ot in $types; do
  out=$W/out-$ot.gguf
  : >"$W/runs-$ot.txt"
  for ((r = 0; r < REPS; r++)); do
    rm -f "$out"
    /usr/bin/time -v "$BIN" "$src" -o "$out" --outtype "$ot" -t 2 --force --json 2> "$W/time-$ot.txt" > "$W/json-$ot.txt" ||
      { echo "$ot: conversion failed"; tail -5 "$W/time-$ot.txt"; continue 2; }
    secs=$(grep "Elapsed (wall clock)" "$W/time-$ot.txt" | awk -F': ' '{print $2}' |
           awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf("%.2f", s) }' "$W/time-$ot.txt")
    rss=$(grep "Maximum resident set size" "$W/time-$ot.txt" | awk '{print $6}')
    read -r ds fs < <(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["data_seconds"], j["sync_seconds"])' "$W/json-$ot.txt")
    echo "$secs $ds $fs $cpu $rss" >>"$W/runs-$ot.txt"
  done
  osz=$(stat -c %s "$out")
  secs=$(awk '{print $1}' "$W/runs-$ot.txt" | med)
  ds=$(awk '{print $2}' "$W/runs-$ot.txt" | med)
  fs=$(awk '{print $3}' "$W/runs-$ot.txt" | med)
  cpu=$(awk '{print $4}' "$W/runs-$ot.txt" | med)
  rss=$(awk '{print $5}' "$W/runs-$ot.txt" | sort -n | tail -1)
  mbs=$(awk -v b="$src_bytes" -v s="$secs" 'BEGIN { printf("%.0f", (s > 0) ? b / 1e6 / s : 0) }')
  dmbs=$(awk -v b="$src_bytes" -v s="$ds" 'BEGIN { printf("%.0f", (s > 0) ? b / 1e6 / s : 0) }')
  tgt=$([[ $ot == f16 || $ot == bf16 ]] && echo ">=1000" || echo ">=500")
  printf "%-6s %8.2f %10s %8.2f %10s %7.2f %7s %10.1f %7d MB %8s\n" "$ot" "$secs" "$mbs" "$ds" "$dmbs" "$fs" "$cpu" "$(awk -v o="$osz" 'BEGIN{print o/1e6}')" $((rss / 1024)) "$tgt"
  rm -f "$out"
done

# ---- K-quant row: one step vs llama.cpp's converter + llama-quantize, runs interleaved ----
kquant_row() {
  local lcpp=$W/llama.cpp lq=$B/tests/llama_quantize_oracle lib r ours ref
  lib=$(ls tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so 2>/dev/null | head -1)
  [[ -x $lq && -n $lib ]] || { echo "q4_k_m row: needs $lq and node-llama-cpp (scripts/deps.sh)"; return; }
  [[ -f $lcpp/convert_hf_to_gguf.py ]] ||
    git -c advice.detachedHead=false clone -q tests/node_modules/node-llama-cpp/llama/gitRelease.bundle "$lcpp" ||
    { echo "q4_k_m row: no llama.cpp tree"; return; }
  echo "q4_k_m row: sunny-convert HF -> q4_k_m (-t 2) vs convert_hf_to_gguf.py --outtype bf16 + llama-quantize Q4_K_M (2 threads); MB/s of the safetensors bytes"
  printf "%-7s %10s %10s %7s %9s %9s %11s %8s\n" type "ours MB/s" "lcpp MB/s" ratio "ours cpu" "lcpp cpu" "ours RSS" target
  : >"$W/kq-ours.txt"; : >"$W/kq-ref.txt"
  for ((r = 0; r < REPS; r++)); do
    /usr/bin/time -v "$BIN" "$src" -o "$W/kq.gguf" --outtype q4_k_m -t 2 --force 2>"$W/time-kq.txt" >/dev/null ||
      { echo "q4_k_m: conversion failed"; tail -3 "$W/time-kq.txt"; return; }
    echo "$(wall_s "$W/time-kq.txt") $(cpu_s "$W/time-kq.txt") $(grep "Maximum resident" "$W/time-kq.txt" | awk '{print $6}')" >>"$W/kq-ours.txt"
    rm -f "$W/kq.gguf"
    SN_LCPP_NO_VOCAB=1 /usr/bin/time -v /usr/bin/python3 tests/tools/lcpp_convert.py "$lcpp" "$src" "$W/kq-bf16.gguf" bf16 \
      >/dev/null 2>"$W/time-kq1.txt" &&
      SN_LIBLLAMA=$lib /usr/bin/time -v "$lq" "$W/kq-bf16.gguf" "$W/kq-ref.gguf" 15 >/dev/null 2>"$W/time-kq2.txt" ||
      { echo "q4_k_m: the llama.cpp reference failed"; tail -n 3 "$W/time-kq1.txt" "$W/time-kq2.txt"; return; }
    echo "$(awk -v a="$(wall_s "$W/time-kq1.txt")" -v b="$(wall_s "$W/time-kq2.txt")" 'BEGIN{print a + b}') \
$(awk -v a="$(cpu_s "$W/time-kq1.txt")" -v b="$(cpu_s "$W/time-kq2.txt")" 'BEGIN{print a + b}')" >>"$W/kq-ref.txt"
    rm -f "$W/kq-bf16.gguf" "$W/kq-ref.gguf"
  done
  ours=$(awk '{print $1}' "$W/kq-ours.txt" | med); ref=$(awk '{print $1}' "$W/kq-ref.txt" | med)
  awk -v b="$src_bytes" -v o="$ours" -v l="$ref" -v oc="$(awk '{print $2}' "$W/kq-ours.txt" | med)" \
      -v lc="$(awk '{print $2}' "$W/kq-ref.txt" | med)" -v rss="$(awk '{print $3}' "$W/kq-ours.txt" | sort -n | tail -1)" 'BEGIN {
    printf("%-7s %10.0f %10.0f %6.2fx %9.2f %9.2f %8d MB %8s\n", "q4_k_m", b / 1e6 / o, b / 1e6 / l, l / o, oc, lc, rss / 1024,
           ">=500,<=64MB") }'
}
wall_s() { grep "Elapsed (wall clock)" "$1" | awk -F': ' '{print $2}' | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }'; }
cpu_s() { awk -F': ' '/User time|System time/ { s += $2 } END { printf("%.2f", s) }' "$1"; }
if [[ $WHAT == all || $WHAT == kquant ]]; then kquant_row; fi
[[ $WHAT == kquant ]] && { echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0; }

# ---- checkpoint row: pytorch_model.bin vs safetensors, runs interleaved so they share conditions ----
bin=$W/bin/$(basename "$src") # same basename: same general.name, same GGUF
if [[ ! -f $bin/.done ]]; then
  rm -rf "$bin"
  echo "saving $bin/pytorch_model.bin with torch.save ..."
  /usr/bin/python3 tests/fixtures/gen_torch_ckpt.py repack "$src" "$bin" || exit 1
  touch "$bin/.done"
fi
cat "$bin/pytorch_model.bin" >/dev/null
echo "checkpoint row: $((src_bytes / 1000000)) MB safetensors vs $(($(stat -c %s "$bin/pytorch_model.bin") / 1000000)) MB pytorch_model.bin, same tensors; MB/s of the tensor bytes over the whole run"
printf "%-6s %10s %10s %7s %9s %9s %11s %11s %8s\n" type "st MB/s" "bin MB/s" ratio "st cpu_s" "bin cpu_s" "st peakRSS" "bin peakRSS" target
one() { # DIR OUTTYPE -> "seconds rss_kb cpu_s"
  /usr/bin/time -v "$BIN" "$1" -o "$W/ck.gguf" --outtype "$2" -t 2 --force 2>"$W/time-ck.txt" >/dev/null || { echo "fail"; return; }
  local s r
  s=$(grep "Elapsed (wall clock)" "$W/time-ck.txt" | awk -F': ' '{print $2}' |
      awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  r=$(grep "Maximum resident set size" "$W/time-ck.txt" | awk '{print $6}')
  echo "$s $r $(awk -F': ' '/User time|System time/ { s += $2 } END { printf("%.2f", s) }' "$W/time-ck.txt")"
}
for ot in bf16 q8_0; do
  : >"$W/ck-st.txt"; : >"$W/ck-bin.txt"
  for ((r = 0; r < REPS; r++)); do
    one "$src" "$ot" >>"$W/ck-st.txt"
    one "$bin" "$ot" >>"$W/ck-bin.txt"
  done
  grep -q fail "$W"/ck-*.txt && { echo "$ot: checkpoint conversion failed"; cat "$W/time-ck.txt" | tail -3; continue; }
  ss=$(awk '{print $1}' "$W/ck-st.txt" | med); bs=$(awk '{print $1}' "$W/ck-bin.txt" | med)
  sr=$(awk '{print $2}' "$W/ck-st.txt" | sort -n | tail -1); br=$(awk '{print $2}' "$W/ck-bin.txt" | sort -n | tail -1)
  sc=$(awk '{print $3}' "$W/ck-st.txt" | med); bc=$(awk '{print $3}' "$W/ck-bin.txt" | med)
  awk -v b="$src_bytes" -v ss="$ss" -v bs="$bs" -v sr="$sr" -v br="$br" -v sc="$sc" -v bc="$bc" -v ot="$ot" 'BEGIN {
    sm = b / 1e6 / ss; bm = b / 1e6 / bs
    printf("%-6s %10.0f %10.0f %6.2fx %9.2f %9.2f %8d MB %8d MB %8s\n", ot, sm, bm, bm / sm, sc, bc, sr / 1024, br / 1024, ">=0.8x,<=64MB") }'
done
rm -f "$W/ck.gguf"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
