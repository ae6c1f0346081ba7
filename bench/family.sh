#!/usr/bin/env bash
# bench/family.sh - sunny-run next to llama-bench on one model family's bench-sized model, same GGUF,
# same run: prompt 64 and 512 and decode, 1 and 2 threads, llama.cpp-made Q8_0, Q4_0, Q4_K_M.
#
#  1. The model (random bf16 weights, the family's real shapes and vocabulary), converted by llama.cpp's
#     own convert_hf_to_gguf.py (bench_lcpp_model in bench/lib.sh), then llama-quantize from that bf16
#     file (llama.cpp's recipes). Made once into WORK, reused while it exists.
#       gemma3    tests/fixtures/gen_gemma3.py --preset bench: hidden 1152, 12 layers (10 local with a
#                 256-token window, 2 global), 4 heads / 1 KV head of 256, FFN 6912, the real Gemma 3
#                 vocabulary (262,208 rows, tied head): 0.62B parameters. The converter writes the
#                 vocabulary itself (from tokenizer.model).
#       qwen35    tests/fixtures/gen_qwen35.py --preset bench: hidden 1024, 16 layers (12 Gated DeltaNet
#                 with 16 key and 16 value heads of 128, 4 gated attention with 8 heads / 2 KV heads of
#                 256), FFN 3584, one multi-token-prediction block, Qwen3's vocabulary (151,936 rows,
#                 tied head; the Qwen3.5 tokenizer is not available here): 0.52B parameters.
#       qwen35moe tests/fixtures/gen_qwen35.py --preset bench --moe: a Qwen3.6-35B-A3B-like layer at half
#                 its width, 12 layers (9 Gated DeltaNet with 8 key and 16 value heads of 128, 3 gated
#                 attention with 8 heads / 2 KV heads of 256), 32 experts of 512, top-8, a sigmoid-gated
#                 shared expert of 512, one MTP block, Qwen3's vocabulary (tied): 0.88B parameters, 0.42B
#                 read per decode step.
#       qwen3moe  tests/fixtures/gen_model.py --family qwen3moe --preset moe1b: hidden 1024, 10 layers,
#                 8 heads / 4 KV heads of 128, 32 experts of 768, top-4, Qwen3's vocabulary 151,936,
#                 untied head: 1.10B parameters, 0.28B active per token (bench/moe.sh).
#     For the Qwen vocabularies the converter's tokenizer step needs transformers, which this machine
#     lacks: the tokenizer keys are sunny's (tests/tools/vocab_only), equal to llama.cpp's by the vocab tests.
#  2. bench_table (bench/lib.sh): per type, thread count and prompt length (64: then 64 decode steps;
#     512: one token), RUNS pairs interleaved (one llama-bench -fa on, then one sunny-run), medians;
#     decode GB/s from the bytes a step reads (experts counted n_used / n_expert, no MTP block).
#   usage: bench/family.sh [BUILD_DIR] FAMILY [DTYPES (q8_0 q4_0 q4_k_m)] [THREADS (1 2)] [PROMPTS (64 512)]
#   env:   SN_BENCH_RUNS (3), SN_BENCH_WORK (BUILD_DIR/bench/FAMILY; the models take 2-4 GB)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
B=${1:-build}
FAMILY=${2:-}
DTYPES=${3:-"q8_0 q4_0 q4_k_m"}
THREADS=${4:-"1 2"}
PROMPTS=${5:-"64 512"}
RUNS=${SN_BENCH_RUNS:-3}
RUN=$B/cmd/sunny-run
case $FAMILY in
  gemma3) gen=(tests/fixtures/gen_gemma3.py --preset bench --dtype bf16) splice=0 name=gemma3-bench
    about="gemma3 0.62B: hidden 1152, 12 layers (10 local, window 256; 2 global), 4 heads / 1 KV of 256, vocab 262208 tied" ;;
  qwen35) gen=(tests/fixtures/gen_qwen35.py --preset bench --dtype bf16) splice=1 name=qwen35-bench
    about="qwen35 0.52B: hidden 1024, 16 layers (12 Gated DeltaNet 16+16 heads of 128, 4 attention 8/2 heads of 256), vocab 151936 tied" ;;
  qwen35moe) gen=(tests/fixtures/gen_qwen35.py --preset bench --moe --dtype bf16) splice=1 name=qwen35moe-bench
    about="qwen35moe 0.88B (0.42B a step): hidden 1024, 12 layers (9 Gated DeltaNet 8+16 heads of 128, 3 attention 8/2 heads of 256), 32 experts of 512, top-8, shared expert 512, vocab 151936 tied" ;;
  qwen3moe) gen=(tests/fixtures/gen_model.py --family qwen3moe --preset moe1b --dtype bf16) splice=1 name=qwen3moe-moe1b
    about="qwen3moe 1.10B (0.28B active): 32 experts of 768, top-4, vocab 151936 untied" ;;
  *) echo "usage: bench/family.sh [BUILD_DIR] gemma3|qwen35|qwen35moe|qwen3moe [DTYPES] [THREADS] [PROMPTS]" >&2; exit 2 ;;
esac
[[ -x $RUN && -x $B/tests/vocab_only ]] || { echo "bench/family.sh: build $B first" >&2; exit 1; }
LBIN=$(nice -n 10 bash bench/build_llama_tools.sh "$B") || { echo "bench/family.sh: building llama-bench failed" >&2; exit 1; }
LSRC=$(ls -d "$(dirname "$(dirname "$LBIN")")"/src-* | head -1)
W=${SN_BENCH_WORK:-$B/bench/$FAMILY}
mkdir -p "$W"
M=$W/$name
bench_lcpp_model "$B" "$LSRC" "$M-bf16.gguf" "$splice" "${gen[@]}" || exit 1
for dt in $DTYPES; do
  [[ -f $M-$dt.gguf ]] || nice -n 10 "$LBIN/llama-quantize" "$M-bf16.gguf" "$M-$dt.gguf" "${dt^^}" 2 >"$W/quant-$dt.log" 2>&1 ||
    { echo "bench/family.sh: llama-quantize $dt failed (see $W/quant-$dt.log)" >&2; exit 1; }
done
echo "bench/family.sh $FAMILY: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), sunny-run $(git rev-parse --short HEAD), llama.cpp $(basename "$LSRC"), runs $RUNS"
echo "model: $about; tok/s medians; ratio = sunny / llama-bench"
rm -f "$W"/membw.* # the machine's bandwidth is measured again in every run
for t in $THREADS; do echo "machine read bandwidth, $t thread(s): $(bench_machine_bw "$W" "$t") GB/s (bench/tools/membw.c)"; done
bench_table "$M" "$DTYPES" "$THREADS" "$PROMPTS"
