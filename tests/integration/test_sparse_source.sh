#!/usr/bin/env bash
# test_sparse_source.sh - HF sources whose weights lie past 4 GiB convert right (issue 49).
# tests/tools/sparse_big_source.py rewrites the llama3 tiny fixture as model.safetensors and as a
# zip64 pytorch_model.bin with a 4.5 GiB F32 rotary_emb.inv_freq first in the data (a hole: both
# converters drop that tensor unread), so every real tensor starts past 4 GiB and the folder costs
# what the fixture costs on disk. Expected results come from the fixture itself, read at offsets below
# 4 GiB: its BF16 GGUF (the one test_convert_parity checks against llama.cpp's converter) and the fp16
# blob of that GGUF.
#  * sunny-convert writes, from either sparse source, that GGUF byte for byte;
#  * --blob streams, from either sparse source, the fixture GGUF's blob tensors (data section equal).
# The tensor values past 4 GiB in a GGUF, a split part and a blob: tests/unit/test_sparse4g.c.
source "$(dirname "$0")/lib.sh"
SC=$SN_BIN/sunny-convert
W=$SN_WORK/sparse_source
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
src=$(fixture llama3 bf16) && U=$(gguf_of llama3 bf16) || { echo "FAIL - fixture"; exit 1; }
for fmt in safetensors bin; do
  $PY "$SN_SRC/tests/tools/sparse_big_source.py" "$src" "$W/$fmt/$(basename "$src")" $fmt || bad "sparse $fmt source"
done
f=$W/safetensors/$(basename "$src")/model.safetensors
size=$(stat -c %s "$f") used=$(($(stat -c %b "$f") * $(stat -c %B "$f")))
((size > 4800000000 && used < 100000000)) && ok "sparse source: $size bytes, $used on disk" || bad "sparse source: $size bytes, $used on disk"

# the data section of a blob (from its data_offset, header offset 40): the tensors without the metadata,
# which names the source file
data_of() { tail -c +$(($(od -An -t u8 -j 40 -N 8 "$1") + 1)) "$1"; }
"$SC" "$U" --blob -o "$W/ref.snb" --dtype fp16 >/dev/null 2>&1 || bad "blob of the fixture GGUF"
for fmt in safetensors bin; do
  d=$W/$fmt/$(basename "$src")
  out=$("$SC" "$d" -o "$W/$fmt.gguf" --outtype bf16 2>&1); rc=$?
  [[ $rc == 0 ]] && cmp -s "$W/$fmt.gguf" "$U" && ok "$fmt past 4 GiB -> BF16: the fixture's GGUF byte for byte" \
    || bad "$fmt convert rc=$rc: $out"
  out=$("$SC" "$d" --blob -o "$W/$fmt.snb" --dtype fp16 2>&1); rc=$?
  [[ $rc == 0 ]] && cmp -s <(data_of "$W/$fmt.snb") <(data_of "$W/ref.snb") \
    && ok "$fmt past 4 GiB --blob: the fixture GGUF's blob tensors" || bad "$fmt blob rc=$rc: $out"
done
finish
