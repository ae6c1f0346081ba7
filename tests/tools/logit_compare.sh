#!/usr/bin/env bash
# logit_compare.sh - the runtime before and after a refactor: same converted bytes, same logits.
#
# Usage: tests/tools/logit_compare.sh BASE_BUILD NEW_BUILD WORKDIR
#   BASE_BUILD, NEW_BUILD: CMake build dirs (cmd/sunny-convert, runtime/libsunny.so,
#   tests/llama_quantize_oracle) of the code before and after.
# Makes the fixtures (tests/fixtures/gen_*.py), converts each with both converters to every GGUF
# outtype and blob dtype (the bytes must be equal), quantizes the llama3 small one with
# llama.cpp's own quantizer (K-quants, IQ4, Q4_1/Q5_x), then runs tests/tools/logit_dump.c linked
# against each libsunny on every file under each kernel configuration (SN_CPU, lanes, the far-stream
# / page-kick / F16-mm choices) x 1 and 2 threads and compares every logit with cmp. Prints one
# line per difference and a summary; exit 1 if anything differs. Outputs of the base build are kept
# in WORKDIR and reused. Set SN_CMP_FAST=1 for the GGUF/blob subset of one llama fixture.
set -u
BASE=$(realpath "$1") NEW=$(realpath "$2") W=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-/usr/bin/python3}
mkdir -p "$W"/fx "$W"/base "$W"/new "$W"/out
fail=0 n=0
differ() { echo "DIFF - $*"; fail=$((fail + 1)); }

# the dump tool, once per library
for b in base new; do
  lib=$BASE; [[ $b == new ]] && lib=$NEW
  gcc -O2 -I"$SRC/runtime" "$SRC/tests/tools/logit_dump.c" -L"$lib/runtime" -lsunny -Wl,-rpath,"$lib/runtime" \
    -o "$W/dump_$b" || exit 1
done

# fixtures
fams="llama3 qwen2 qwen3 mistral"
[[ ${SN_CMP_FAST:-0} == 1 ]] && fams=llama3
for f in $fams; do
  [[ -d $W/fx/$f-tiny ]] || $PY "$SRC/tests/fixtures/gen_model.py" --family $f --preset tiny --dtype bf16 --out "$W/fx/$f-tiny" >/dev/null || exit 1
done
if [[ ${SN_CMP_FAST:-0} != 1 ]]; then
  [[ -d $W/fx/llama3-small ]] || $PY "$SRC/tests/fixtures/gen_model.py" --family llama3 --preset small --dtype f16 --out "$W/fx/llama3-small" >/dev/null || exit 1
  [[ -f $W/fx/rwkv7/fla/model.safetensors ]] || $PY "$SRC/tests/fixtures/gen_rwkv7.py" --out "$W/fx/rwkv7" >/dev/null || exit 1
  [[ -f $W/fx/mamba2/model.safetensors ]] || $PY "$SRC/tests/fixtures/gen_mamba2.py" --out "$W/fx/mamba2" --groups 2 --dtype f32 >/dev/null || exit 1
fi
srcs=()
for d in "$W"/fx/*-tiny "$W"/fx/llama3-small "$W"/fx/rwkv7/fla "$W"/fx/mamba2; do [[ -d $d ]] && srcs+=("$d"); done

# conversions, by both converters; the base's file is the one run
models=()
conv() { # NAME SRC ARGS... -> converts with both, compares, appends the base's file to models
  local name=$1 src=$2; shift 2
  for b in base new; do
    local bin=$BASE; [[ $b == new ]] && bin=$NEW
    [[ $b == base && -f $W/$b/$name ]] && continue
    "$bin/cmd/sunny-convert" "$src" -o "$W/$b/$name" --force "$@" >/dev/null 2>&1 || { differ "$name: $b convert failed"; return; }
  done
  n=$((n + 1))
  cmp -s "$W/base/$name" "$W/new/$name" || differ "$name: converted bytes differ"
  models+=("$W/base/$name")
}
for s in "${srcs[@]}"; do
  tag=$(basename "$s"); [[ $tag == fla ]] && tag=rwkv7
  for ot in f32 f16 bf16 q8_0 q4_0; do conv "$tag-$ot.gguf" "$s" --outtype $ot; done
  for dt in int4 fp16 fp32; do conv "$tag-$dt.snb" "$s" --blob --dtype $dt -t 2; done
done
echo "converted: $n files, $fail differ"

# llama.cpp's quantizer on the llama3 small f16 GGUF (tests/integration/test_quant_parity.sh's recipes)
if [[ ${SN_CMP_FAST:-0} != 1 ]]; then
  export SN_LIBLLAMA=$(ls "$SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so 2>/dev/null | head -1)
  declare -A FT=([q4_1]=3 [q5_0]=8 [q5_1]=9 [q2_k]=10 [q3_k_m]=12 [q4_k_s]=14 [q4_k_m]=15 [q5_k_m]=17 [q6_k]=18 [iq4_nl]=25 [iq4_xs]=30)
  for ft in "${!FT[@]}"; do
    g=$W/base/llama3-small-lq-$ft.gguf
    [[ -f $g ]] || "$BASE/tests/llama_quantize_oracle" "$W/base/llama3-small-f16.gguf" "$g" "${FT[$ft]}" >/dev/null 2>&1 ||
      { differ "llama-quantize $ft failed"; continue; }
    models+=("$g")
  done
fi

# logits
configs=("SN_CPU=scalar" "SN_CPU=avx2" "SN_CPU=avx512" "SN_CPU=avx2 SN_GGML_LANES=8"
         "SN_CPU=avx512 SN_MV_QUARTERS=0 SN_MV_PAGES=0 SN_MM_F16=widen"
         "SN_CPU=avx512 SN_MV_QUARTERS=1 SN_MV_PAGES=0 SN_MM_F16=convert SN_Q4_0_REPACK=0 SN_Q4_K_REPACK=0")
runs=0 same=0
for g in "${models[@]}"; do
  for c in "${configs[@]}"; do
    for t in 1 2; do
      key=$(basename "$g")-$(echo "$c" | tr ' =' '_-')-t$t
      if [[ ! -f $W/out/$key.base ]]; then
        env $c "$W/dump_base" "$g" $t "$W/out/$key.base.tmp" 2>"$W/out/err" && mv "$W/out/$key.base.tmp" "$W/out/$key.base" ||
          { differ "$key: base run failed: $(cat "$W/out/err")"; continue; }
      fi
      env $c "$W/dump_new" "$g" $t "$W/out/$key.new" 2>"$W/out/err" || { differ "$key: new run failed: $(cat "$W/out/err")"; continue; }
      runs=$((runs + 1))
      if cmp -s "$W/out/$key.base" "$W/out/$key.new"; then same=$((same + 1)); else differ "$key: logits differ"; fi
      rm -f "$W/out/$key.new"
    done
  done
done
echo "logits: ${#models[@]} files x ${#configs[@]} configurations x 2 thread counts: $same of $runs runs bit-identical"
((fail == 0)) && { echo "all equal"; exit 0; }
echo "$fail difference(s)"; exit 1
