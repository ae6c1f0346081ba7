#!/usr/bin/env bash
# bench/moe.sh - sunny-run next to llama-bench on a mixture of experts (a Qwen3-MoE shape, 1.10B
# parameters, 0.28B active): bench/family.sh with family qwen3moe, which describes the model and the
# rows.
#   usage: bench/moe.sh [BUILD_DIR] [DTYPES (q8_0 q4_0 q4_k_m)] [THREADS (1 2)]
#   env:   SN_BENCH_RUNS (3), SN_BENCH_WORK (BUILD_DIR/bench/moe)
cd "$(dirname "$0")/.."
B=${1:-build}
SN_BENCH_WORK=${SN_BENCH_WORK:-$B/bench/moe} exec bash bench/family.sh "$B" qwen3moe "${2:-q8_0 q4_0 q4_k_m}" "${3:-1 2}"
