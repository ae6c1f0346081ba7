#!/usr/bin/env bash
# test_convert_metadata.sh - every metadata key and value of sunny-convert's GGUFs (outside tokenizer.*,
# which test_vocab_llamacpp.sh compares with the converter's vocab code) against llama.cpp's converter
# itself: for each fixture family x outtype, the model class convert_hf_to_gguf.py picks for the
# architecture runs prepare_metadata() on the same HF folder (tests/tools/meta_converter_diff.py, one
# python process), and sunny's GGUF must hold exactly its keys with the same types and values. The
# GGUFs are the cached ones test_convert_parity.sh uses (lib.sh gguf_of), so this adds seconds.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py torch
tree=$(llama_tree) || { echo "FAIL - cannot unpack llama.cpp's source bundle"; exit 1; }
args=()
for fam in ${SN_META_FAMILIES:-llama3 qwen2 qwen3 mistral}; do
  src=$(fixture "$fam" bf16) || { bad "$fam: fixture generation failed"; continue; }
  for ot in ${SN_META_TYPES:-f32 f16 bf16 q8_0 q4_0}; do
    g=$(gguf_of "$fam" "$ot") || { bad "$fam/$ot: sunny-convert failed"; continue; }
    args+=("$src" "$g" "$ot")
  done
done
if out=$($PY "$SN_SRC/tests/tools/meta_converter_diff.py" "$tree" "${args[@]}" 2>&1); then
  echo "$out"
  ok "metadata of $(grep -c '^ok' <<<"$out") GGUFs equals llama.cpp's converter's, key by key"
else
  echo "$out"; bad "metadata differs from llama.cpp's converter"
fi
finish
