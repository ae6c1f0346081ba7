#!/usr/bin/env bash
# test_gguf_interop.sh - sunny's GGUF writer and reader agree with an independent implementation
# (@huggingface/gguf). gguf_write_sample writes a file using every KV type, arrays (empty ones too)
# and several tensor types and prints what it wrote; gguf_inspect.mjs parses the file with
# @huggingface/gguf and compares every key, type, value and tensor info. In the other direction,
# @huggingface/gguf's own serializer writes the same KVs and sunny's reader (gguf_write_sample
# --dump) must see exactly them, and re-encoding them with our typed setters must give the same
# bytes. Run for the default alignment and for general.alignment = 64.
# (Loading in llama.cpp is covered by the converter tests.)
set -euo pipefail
: "${SN_SRC:?SN_SRC must point at the source tree}" "${SN_BUILD:?SN_BUILD must point at the build dir}"
: "${SN_WORK:?SN_WORK must name a scratch dir}"

if [ ! -d "$SN_SRC/tests/node_modules/@huggingface/gguf" ]; then
    echo "FAIL - oracle @huggingface/gguf missing in $SN_SRC/tests/node_modules (run scripts/deps.sh)"
    exit 1
fi
command -v node >/dev/null || { echo "FAIL: node is not installed but tests/node_modules is"; exit 1; }
sample="$SN_BUILD/tests/gguf_write_sample"
[ -x "$sample" ] || { echo "FAIL: $sample not built"; exit 1; }

work="$SN_WORK/gguf_interop"
rm -rf "$work"
mkdir -p "$work"
cd "$SN_SRC/tests" # node resolves @huggingface/gguf from tests/node_modules

for align in 32 64; do
    args=()
    [ "$align" = 32 ] || args=(--align "$align")
    "$sample" "$work/x$align.gguf" "${args[@]}" > "$work/x$align.expected.json"
    [ ! -e "$work/x$align.gguf.tmp" ] || { echo "FAIL: writer left $work/x$align.gguf.tmp behind"; exit 1; }
    # 1. our writer -> their reader
    node tools/gguf_inspect.mjs "$work/x$align.gguf" --expect "$work/x$align.expected.json"
    # 2. our writer -> our reader
    "$sample" --dump "$work/x$align.gguf" > "$work/x$align.ours.json"
    node tools/gguf_inspect.mjs --same "$work/x$align.ours.json" "$work/x$align.expected.json"
    # 3. their writer -> our reader
    node tools/gguf_inspect.mjs --serialize "$work/x$align.expected.json" "$work/hf$align.gguf" \
        > "$work/hf$align.expected.json"
    "$sample" --dump "$work/hf$align.gguf" > "$work/hf$align.ours.json"
    node tools/gguf_inspect.mjs --same "$work/hf$align.ours.json" "$work/hf$align.expected.json"
    # 4. their writer's bytes == ours for the same KVs (every type encoded and padded identically)
    "$sample" --reencode "$work/hf$align.gguf" "$work/hf$align.ours.gguf"
    cmp "$work/hf$align.gguf" "$work/hf$align.ours.gguf" ||
        { echo "FAIL: sunny's writer encodes the KVs differently from @huggingface/gguf"; exit 1; }
    echo "OK: sunny's writer reproduces @huggingface/gguf's serialization byte for byte"
    # the comparison can fail: a one-byte change in the expectation must be caught
    sed 's/"s.u16", "type": 2, "value": "65535"/"s.u16", "type": 2, "value": "65534"/' \
        "$work/x$align.expected.json" > "$work/x$align.wrong.json"
    if node tools/gguf_inspect.mjs "$work/x$align.gguf" --expect "$work/x$align.wrong.json" 2>/dev/null; then
        echo "FAIL: gguf_inspect.mjs accepted a wrong expectation"
        exit 1
    fi
done
echo "PASS: @huggingface/gguf and sunny agree on every key and tensor info, in both directions"
