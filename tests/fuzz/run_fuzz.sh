#!/usr/bin/env bash
# run_fuzz.sh NAME SECONDS [BUILD_DIR] - builds tests/fuzz/fuzz_NAME.c with clang's libFuzzer plus
# ASan/UBSan over the reader sources it needs, and fuzzes for SECONDS from the seed corpus
# tests/fuzz/corpus/NAME (its findings go to a scratch corpus in BUILD_DIR, not the tree). Prints
# libFuzzer's final stats line; exits 1 on any crash, leak or timeout (the input is saved as
# BUILD_DIR/fuzz/NAME/crash-* - copy it into tests/fuzz/regress/ as a regression input).
# Skips (exit 0 with SKIP) when clang or its libFuzzer runtime is missing.
set -uo pipefail
NAME=$1 SECS=${2:-30}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=$(realpath -m "${3:-${SN_BUILD:-$SRC/build}}/fuzz/$NAME")
CC=${SN_FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "SKIP: $CC not installed (apt-get install clang)"; exit 0; }
mkdir -p "$B/corpus"
# each harness with the sources it reaches (compiled with the fuzzer's coverage, not the libraries)
base=("$SRC/runtime/base/sn_err.c" "$SRC/runtime/base/utf8.c" "$SRC/runtime/base/mapfile.c" "$SRC/runtime/base/cpu.c" "$SRC/runtime/base/outfile.c")
formats=("$SRC"/runtime/formats/*.c "$SRC"/runtime/quants/*.c)
readers=("$SRC"/convert/readers/{safetensors,torch_ckpt,torch_zip,pickle}.c "$SRC/convert/path.c")
libs=()
case $NAME in
  pickle) srcs=("$SRC/convert/readers/pickle.c" "$SRC/runtime/base/sn_err.c") ;;
  torch_zip) srcs=("$SRC"/convert/readers/{pickle,torch_zip,torch_ckpt}.c "$SRC/runtime/base/sn_err.c" "$SRC/runtime/base/mapfile.c") ;;
  gguf|tok_encode) srcs=("${formats[@]}" "$SRC"/runtime/tokenizers/*.c "${base[@]}") ;;
  safetensors|shard_index) srcs=("${readers[@]}" "${formats[@]}" "${base[@]}") ;;
  hf_config) srcs=("$SRC/convert/readers/hf_config.c" "$SRC"/convert/archs/*.c "${readers[@]}" "${formats[@]}" "${base[@]}") ;;
  blob) srcs=("${formats[@]}" "${base[@]}") ;;
  tokenizer_json|rwkv_vocab) # the vocab code reaches the chat templates, whose data the build generates
    gen=$(realpath -m "${3:-${SN_BUILD:-$SRC/build}}")/templates/templates_data.c
    [[ -f $gen ]] || { echo "run_fuzz.sh: $gen missing: build sunny first (make build)"; exit 1; }
    srcs=("$SRC"/convert/vocab/*.c "$SRC/convert/readers/hf_config.c" "$SRC"/convert/archs/*.c "${readers[@]}"
          "$SRC"/templates/*.c "$gen" "${formats[@]}" "$SRC"/runtime/tokenizers/*.c "${base[@]}") ;;
  spm) srcs=("$SRC/convert/vocab/spm_model.c" "$SRC/runtime/base/sn_err.c") ;;
  ollama_host) srcs=("$SRC/integrate/ollama_host.c" "$SRC/runtime/base/sn_err.c") ;;
  ollama_reply) srcs=("$SRC"/integrate/{ollama_reply,ollama_host,ollama_modelfile,http,utf8_fix}.c
                      "$SRC"/runtime/tokenizers/{unicode_data,tok_pretok}.c "${base[@]}")
                libs=(-lcurl) ;;
  lmstudio_reply) srcs=("$SRC"/integrate/{lmstudio_reply,http}.c "${base[@]}") libs=(-lcurl) ;;
  lmstudio_files) srcs=("$SRC/integrate/lmstudio_home.c" "$SRC/runtime/base/sn_err.c" "$SRC/runtime/base/mapfile.c") ;;
  *) echo "run_fuzz.sh: no harness '$NAME'"; exit 2 ;;
esac
srcs=("$SRC/tests/fuzz/fuzz_$NAME.c" "${srcs[@]}")
inc=()
for d in runtime runtime/base runtime/formats runtime/quants runtime/tokenizers runtime/kernels convert convert/readers \
         convert/archs convert/vocab templates integrate; do inc+=(-I"$SRC/$d"); done
inc+=(-I/usr/include/cjson)
bin=$B/fuzz_$NAME
if [[ ! -x $bin ]] || [[ -n $(find "${srcs[@]}" "$SRC"/convert/readers/*.h "$SRC"/runtime/*/*.h -newer "$bin" 2>/dev/null | head -1) ]]; then
  "$CC" -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    "${inc[@]}" "${srcs[@]}" "${libs[@]}" -lcjson -lpcre2-8 -lz -lm -lpthread -o "$bin" 2>"$B/build.log" ||
    { grep -q "fuzzer" "$B/build.log" && { echo "SKIP: no libFuzzer runtime for $CC"; exit 0; }; cat "$B/build.log"; exit 1; }
fi
cd "$B"
# inputs that once crashed this harness run first, every time (tests/fuzz/regress/NAME-*)
for r in "$SRC/tests/fuzz/regress/$NAME"-*; do [[ -f $r ]] && cp "$r" corpus/; done
"$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
  corpus "$SRC/tests/fuzz/corpus/$NAME" >"$B/log" 2>&1
rc=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|^#[0-9]+.*DONE" "$B/log"
ls crash-* leak-* timeout-* oom-* 2>/dev/null && { tail -40 "$B/log"; exit 1; }
((rc == 0)) || { tail -40 "$B/log"; exit 1; }
echo "fuzz $NAME: $SECS s, no crash"
