#!/usr/bin/env bash
# test_convert_parity.sh - sunny-convert's GGUFs against llama.cpp, for every fixture family x outtype:
#  * tensor bytes equal llama.cpp's converter math (gguf-py quants from the llama.cpp tree that
#    node-llama-cpp ships) for f32/f16/bf16/q8_0, and the q4_0 file equals what llama.cpp's own
#    llama_model_quantize (MOSTLY_Q4_0) writes from our f32 GGUF;
#  * llama.cpp loads each GGUF and greedy-decodes 32 tokens (f32 twice: deterministic); q8_0/q4_0
#    are reported as top-1 agreement with f32 (informational: quantization changes the model).
source "$(dirname "$0")/lib.sh"
need_oracle

tree=$(llama_tree) || { echo "FAIL - cannot unpack llama.cpp's source bundle"; exit 1; }
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
jobs=$SN_WORK/convert_parity_jobs.jsonl
: >"$jobs"

for fam in llama3 qwen2 qwen3 mistral; do
  src=$(fixture "$fam" bf16) || { bad "$fam: fixture generation failed"; continue; }
  args=()
  for ot in f32 f16 bf16 q8_0 q4_0; do
    g=$(gguf_of "$fam" "$ot") || { bad "$fam/$ot: sunny-convert failed"; continue; }
    [[ $ot != q4_0 ]] && args+=("$g" "$ot")
    prompt=$( [[ $fam == mistral ]] && echo '[1,415,2936,9060,285,1142]' || echo '[9906,1917,11,1234,5678,42]' )
    echo "{\"model\":\"$g\",\"prompt_ids\":$prompt,\"n\":32,\"tag\":\"$fam/$ot\"}" >>"$jobs"
    [[ $ot == f32 ]] && echo "{\"model\":\"$g\",\"prompt_ids\":$prompt,\"n\":32}" >>"$jobs"
  done
  if out=$($PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" "$src" "${args[@]}" 2>&1); then
    ok "$fam: tensor bytes equal llama.cpp converter's for f32/f16/bf16/q8_0 ($(grep -c mismatches <<<"$out") files)"
  else bad "$fam: tensor bytes differ:"; echo "$out" | head -20; fi
  ref=$SN_WORK/gguf/$fam-llamacpp-q4_0.gguf
  if "$SN_BUILD/tests/llama_quantize_oracle" "$(gguf_of "$fam" f32)" "$ref" 2 >/dev/null 2>&1; then
    cmp -s "$(gguf_of "$fam" q4_0)" "$ref" && ok "$fam/q4_0: file equals llama-quantize MOSTLY_Q4_0 byte for byte" ||
      { bad "$fam/q4_0 differs from llama-quantize:";
        $PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" --same "$(gguf_of "$fam" q4_0)" "$ref" | head -20; }
  else bad "$fam: llama_model_quantize failed"; fi
done

# The tiny fixtures' rows (128) are not a multiple of 256, so their q4_0 output/embedding goes to
# Q8_0: the "small" preset (hidden 256) puts it in Q6_K, once as output.weight (mistral) and once
# as the tied token_embd.weight (llama3), against llama-quantize again.
for fam in mistral llama3; do
  q=$(gguf_of "$fam" q4_0 bf16 small) && f=$(gguf_of "$fam" f32 bf16 small) ||
    { bad "$fam/small: sunny-convert failed"; continue; }
  ref=$SN_WORK/gguf/$fam-small-llamacpp-q4_0.gguf
  if "$SN_BUILD/tests/llama_quantize_oracle" "$f" "$ref" 2 >/dev/null 2>&1; then
    n6=$(node "$SN_SRC/tests/tools/gguf_inspect.mjs" --brief "$q" | $PY -c 'import json,sys; print(sum(t["dtype"] == 14 for t in json.load(sys.stdin)["tensors"]))')
    if [[ $n6 != 1 ]]; then bad "$fam/small q4_0: $n6 Q6_K tensors, expected 1"
    elif cmp -s "$q" "$ref"; then ok "$fam/small q4_0 (Q6_K head): file equals llama-quantize MOSTLY_Q4_0 byte for byte"
    else bad "$fam/small q4_0 differs from llama-quantize:"
      $PY "$SN_SRC/tests/tools/ref_tensors.py" "$tree/gguf-py" --same "$q" "$ref" | head -20; fi
  else bad "$fam/small: llama_model_quantize failed"; fi
done

# An independent reader (@huggingface/gguf) reads every key of every converted GGUF with the type
# llama.cpp's converter gives it. The expected types are gguf-py's (gguf/gguf_writer.py: e.g.
# add_context_length -> add_uint32, add_sampling_top_k -> add_int32, add_rope_freq_base ->
# add_float32); a key missing from the table fails too, so a new key needs its type stated here.
# Tensor infos: as many as the header says, and each dtype one the outtype's recipe can produce.
# One node process reads all 20 files (gguf_inspect.mjs --brief: array values parsed, not printed).
cat >"$SN_WORK/hf_gguf_types.py" <<'PYEOF'
import json, re, sys
U32, I32, F32, BOOL, STR, ARR = 4, 5, 6, 7, 8, 9
def check(d, ot):
    arch = next(kv["value"] for kv in d["kv"] if kv["key"] == "general.architecture")
    A = re.escape(arch)
    table = [
        (r"general\.(architecture|type|name|organization|basename|finetune|version|size_label|description|author"
         r"|quantized_by|license|license\.name|license\.link|source\.(url|repo_url|doi|uuid)|sampling\.sequence)", (STR,)),
        (r"general\.(tags|languages)", (ARR, STR)),
        (r"general\.(base_model|dataset)\.count", (U32,)),
        (r"general\.(base_model|dataset)\.\d+\.(name|version|organization|repo_url|description|url|doi|uuid)", (STR,)),
        (r"general\.(file_type|quantization_version)", (U32,)),
        (r"general\.sampling\.(top_k|penalty_last_n|mirostat)", (I32,)),
        (r"general\.sampling\.(top_p|min_p|temp|xtc_probability|xtc_threshold|penalty_repeat|mirostat_tau|mirostat_eta)", (F32,)),
        (A + r"\.(vocab_size|context_length|embedding_length|block_count|feed_forward_length|attention\.head_count"
         r"|attention\.head_count_kv|attention\.key_length|attention\.value_length|rope\.dimension_count"
         r"|rope\.scaling\.original_context_length)", (U32,)),
        (A + r"\.(rope\.freq_base|attention\.layer_norm_rms_epsilon|attention\.layer_norm_epsilon|rope\.scaling\.factor"
         r"|rope\.scaling\.yarn_(ext_factor|attn_factor|beta_fast|beta_slow))", (F32,)),
        (A + r"\.rope\.scaling\.type", (STR,)),
        (A + r"\.attention\.causal", (BOOL,)),
        (r"tokenizer\.ggml\.(model|pre)|tokenizer\.chat_template(\..+)?", (STR,)),
        (r"tokenizer\.ggml\.(tokens|merges)|tokenizer\.chat_templates", (ARR, STR)),
        (r"tokenizer\.ggml\.scores", (ARR, F32)),
        (r"tokenizer\.ggml\.token_type", (ARR, I32)),
        (r"tokenizer\.ggml\.\w+_token_id", (U32,)),
        (r"tokenizer\.ggml\.(add_\w+|normalizer\.\w+)", (BOOL,)),
    ]
    bad = []
    for kv in d["kv"]:
        want = next((w for pat, w in table if re.fullmatch(pat, kv["key"])), None)
        got = (kv["type"],) if kv["type"] != ARR else (ARR, kv.get("subType"))
        if want != got:
            bad.append(f"{kv['key']}: read as {got}, expected {want or 'no such key'}")
    if int(d["kv_count"]) != len(d["kv"]):
        bad.append(f"kv_count {d['kv_count']} but {len(d['kv'])} keys read")
    allowed = {"f32": {0}, "f16": {0, 1}, "bf16": {0, 30}, "q8_0": {0, 1, 8}, "q4_0": {0, 1, 2, 8, 14}}[ot]
    if int(d["tensor_count"]) != len(d["tensors"]) or not d["tensors"]:
        bad.append(f"tensor_count {d['tensor_count']} but {len(d['tensors'])} tensor infos read")
    odd = sorted({t["dtype"] for t in d["tensors"]} - allowed)
    if odd:
        bad.append(f"tensor types {odd} outside the {ot} recipe")
    return f"{len(d['kv'])} keys, {len(d['tensors'])} tensor infos" if not bad else "; ".join(bad[:8]), not bad
want = dict(zip(sys.argv[1::3], zip(sys.argv[2::3], sys.argv[3::3])))  # file -> (tag, outtype)
seen, fail = set(), 0
for line in sys.stdin:
    d = json.loads(line)
    tag, ot = want[d["file"]]
    seen.add(d["file"])
    msg, good = check(d, ot) if "error" not in d else (d["error"], False)
    print(f"ok   - {tag}: @huggingface/gguf reads {msg} with the expected types" if good else f"FAIL - {tag}: @huggingface/gguf: {msg}")
    fail += not good
for f in set(want) - seen:
    print(f"FAIL - {want[f][0]}: @huggingface/gguf gave no answer for {f}"); fail += 1
sys.exit(1 if fail else 0)
PYEOF
files=() want=()
for fam in llama3 qwen2 qwen3 mistral; do
  for ot in f32 f16 bf16 q8_0 q4_0; do
    g=$(gguf_of "$fam" "$ot") || continue
    files+=("$g"); want+=("$g" "$fam/$ot" "$ot")
  done
done
node "$SN_SRC/tests/tools/gguf_inspect.mjs" --brief "${files[@]}" | $PY "$SN_WORK/hf_gguf_types.py" "${want[@]}" ||
  sn_fail=$((sn_fail + 1))

# One llama.cpp process for every greedy run, on 1 thread: at 6 + 32 positions, far below the 256 past
# which its attention splits across threads, its answers do not depend on the thread count (as on
# test_run_parity's 71 short cases of the same families and types), and 2 threads only spin at ggml's
# barriers when the other ctest job holds the second core.
$ORACLE batch --threads 1 <"$jobs" >"$SN_WORK/convert_parity_results.jsonl" 2>/dev/null || bad "llama.cpp oracle failed"
$PY - "$jobs" "$SN_WORK/convert_parity_results.jsonl" <<'PY' || sn_fail=$((sn_fail + 1))
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
res = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
bad = 0
if len(res) != len(jobs):
    print(f"FAIL - llama.cpp answered {len(res)} of {len(jobs)} runs"); sys.exit(1)
ids, prev = {}, None
for j, r in zip(jobs, res):
    if "tag" not in j:  # the repeated f32 run
        if r["ids"] != prev:
            print(f"FAIL - {j['model']}: llama.cpp greedy output not deterministic"); bad += 1
        continue
    prev = r["ids"]
    n, distinct = len(r["ids"]), len(set(r["ids"]))
    ids[j["tag"]] = r["ids"]
    if n != 32:
        print(f"FAIL - {j['tag']}: {n} tokens"); bad += 1
    else:
        print(f"ok   - {j['tag']}: llama.cpp loads it and greedy-decodes 32 tokens ({distinct} distinct)")
for fam in ("llama3", "qwen2", "qwen3", "mistral"):
    ref = ids.get(fam + "/f32")
    for ot in ("f16", "bf16", "q8_0", "q4_0"):
        c = ids.get(f"{fam}/{ot}")
        if ref and c:
            k = next((i for i, (a, b) in enumerate(zip(ref, c)) if a != b), len(ref))
            print(f"info - {fam}: {ot} follows f32 for {k}/32 greedy steps before the first different token")
sys.exit(1 if bad else 0)
PY
finish
