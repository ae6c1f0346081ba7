#!/usr/bin/env bash
# bench/build_llama_tools.sh - build llama.cpp's own llama-bench and llama-quantize once, CPU only.
#
# The benchmark compares sunny-run with llama.cpp the way a llama.cpp user measures it: llama-bench
# built from source for this CPU. The source is the exact llama.cpp that the npm oracle
# (node-llama-cpp) ships, as the git bundle inside its package, so the bench works on a fresh
# machine with nothing but `npm ci` in tests/. The build is cached under BUILD_DIR/llama.cpp-tools/
# keyed by the bundle's commit; a finished build is reused, an interrupted one resumes.
#   GGML_NATIVE=ON (-march=native: AVX2 / AVX-512 / VNNI / BF16 as this CPU has them), OpenMP on,
#   no GPU backends, no curl. AMX: where the CPU reports amx_* flags, ggml's AMX path is compiled
#   out (-mno-amx-*) because it faults under kernels that do not grant the tile state to the
#   process; SN_LLAMA_AMX=1 keeps it.
#   usage: bench/build_llama_tools.sh [BUILD_DIR] [JOBS]   (prints the bin directory on success)
#   Long: ~20 min at -j1 on a busy 2-core machine; run it early, e.g. `nice -n 10 bench/build_llama_tools.sh build 1 &`.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
JOBS=${2:-$(nproc)}
bundle=tests/node_modules/node-llama-cpp/llama/gitRelease.bundle
[[ -f $bundle ]] || { echo "build_llama_tools.sh: $bundle missing (run npm ci in tests/)" >&2; exit 1; }
commit=$(git bundle list-heads "$bundle" | awk '$2 == "HEAD" || NR == 1 { print $1; exit }')
[[ -n $commit ]] || { echo "build_llama_tools.sh: cannot read the head of $bundle" >&2; exit 1; }
top=$B/llama.cpp-tools
src=$top/src-${commit:0:12}
obj=$top/build-${commit:0:12}
bin=$obj/bin
if [[ -x $bin/llama-bench && -x $bin/llama-quantize && -f $obj/.sn-complete ]]; then
  echo "$bin"; exit 0
fi
mkdir -p "$top"
if [[ ! -d $src/.git ]]; then
  rm -rf "$src.tmp"
  git clone -q "$bundle" "$src.tmp" >&2
  git -C "$src.tmp" checkout -q "$commit" >&2
  mv "$src.tmp" "$src"
fi
cflags=
if grep -qw 'amx_int8\|amx_tile\|amx_bf16' /proc/cpuinfo && [[ ${SN_LLAMA_AMX:-0} != 1 ]]; then
  cflags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
fi
cmake -S "$src" -B "$obj" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CPU=ON \
  -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_OPENMP=ON -DLLAMA_CURL=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_BUILD_APP=OFF -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_CXX_FLAGS="$cflags" >&2
cmake --build "$obj" -j "$JOBS" --target llama-bench llama-quantize >&2
touch "$obj/.sn-complete"
echo "$bin"
