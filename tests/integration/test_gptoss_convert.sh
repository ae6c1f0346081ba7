#!/usr/bin/env bash
# test_gptoss_convert.sh - gpt-oss (GptOssForCausalLM -> "gpt-oss") against llama.cpp: the converter
# and the o200k tokenizer.
#
# Fixtures: tests/fixtures/gen_gptoss.py, 4 layers (sliding and full attention alternating), hidden
# 64, 8 experts of 64 (top 4), sinks, q/k/v/o and expert biases, YaRN, the real o200k_harmony
# tokenizer and harmony template; "mx" holds the experts as the released checkpoint does (MXFP4
# *_blocks / *_scales), "bf" as fine-tunes save them (bf16 gate_up_proj [E, D, 2F], down_proj).
#  1. Converter: llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py, its AutoTokenizer
#     answered by the HF tokenizers port: SN_LCPP_HF_TOK) writes whole files, vocabulary and chat
#     template included; sunny-convert's must be identical byte for byte: mx f16 and q8_0 (experts
#     stay MXFP4, file type MOSTLY_MXFP4_MOE for f16), mx f32, bf f32 and bf16 (each outtype once;
#     all eight pairs were equal when this was written). Q4_K_M (from the HF folder) and Q8_0 (from
#     our f32 GGUF) must equal llama-quantize's on the bf f32 file; the MXFP4 experts into Q4_K_M with
#     --allow-requantize equal llama-quantize --allow-requantize on the mx f32 file.
#  2. --verify on an MXFP4 file (the written blocks are the repack of the source) and a q8_0 one.
#  3. Bad input: exit 1, the config field or tensor named, nothing written.
#  4. Tokenizer: sunny's (tests/tools/tok_dump, sunny-run's tokenizer) on the corpus and on harmony
#     texts, with and without special-token parsing, and detokenized, equal to llama.cpp's; the
#     token attributes, EOG set and special ids too, but for the EOT id (docs/TOKENIZER.md) (one node
#     process).
source "$(dirname "$0")/lib.sh"
need_oracle
need_py numpy torch
LCPP=$(llama_tree)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/gptoss-convert
scratch "$W"
mkdir -p "$W"
CONV=$SN_BIN/sunny-convert

mk() { # mk NAME ARGS... -> HF dir
  local d=$W/$1; shift
  ( flock 9; [[ -f $d/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_gptoss.py" --out "$d" "$@" >/dev/null ) 9>"$W/.lock"
  echo "$d"
}
conv() { # conv SRC OUTTYPE [NAME] -> GGUF (redone when sunny-convert is newer)
  local g=${3:-$1-$2}.gguf
  if [[ ! -f $g || $CONV -nt $g ]]; then "$CONV" "$1" -o "$g" --outtype "$2" --force >/dev/null 2>"$g.log" || return 1; fi
  echo "$g"
}
mx=$(mk mx --experts mxfp4) && bf=$(mk bf --experts bf16) || { bad "fixture generation failed"; finish; }

# ---- 1. converter
pairs="$mx:f16 $mx:q8_0 $mx:f32 $bf:f32 $bf:bf16"
: >"$W/lcpp-jobs.tsv"
for pr in $pairs; do
  d=${pr%:*} ot=${pr##*:}
  [[ -f $d-llamacpp-$ot.gguf ]] || printf '%s\t%s\t%s\n' "$d" "$d-llamacpp-$ot.gguf" "$ot" >>"$W/lcpp-jobs.tsv"
done
[[ -s $W/lcpp-jobs.tsv ]] && { SN_LCPP_HF_TOK=gptoss $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" \
  >"$W/lcpp.log" 2>&1 || echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for pr in $pairs; do
  d=${pr%:*} ot=${pr##*:} n=$(basename "${pr%:*}")
  ref=$d-llamacpp-$ot.gguf
  ours=$(conv "$d" "$ot") || { bad "$n/$ot: sunny-convert failed"; continue; }
  [[ -f $ref ]] || { bad "$n/$ot: llama.cpp's converter failed: $(grep -F "FAILED $d -> $ref" "$W/lcpp.log" | cut -c1-300)"; continue; }
  if cmp -s "$ref" "$ours"; then ok "$n/$ot: the whole file equals llama.cpp's converter's ($(stat -c %s "$ours") bytes)"
  else bad "$n/$ot: differs from llama.cpp's converter:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head -20; fi
done
if $PY - "$LCPP/gguf-py" "$mx-f16.gguf" <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
r = gguf.GGUFReader(sys.argv[2]); v = lambda k: r.fields[k].contents()
t = {x.name: x for x in r.tensors}
assert v("general.file_type") == 38 and v("gpt-oss.attention.sliding_window") == 16, "file type / window"
assert v("gpt-oss.rope.scaling.type") == "yarn" and v("gpt-oss.rope.scaling.factor") == 32.0
assert v("tokenizer.ggml.pre") == "gpt-4o" and "<|start|>" in v("tokenizer.chat_template")
assert t["blk.0.ffn_gate_exps.weight"].tensor_type == gguf.GGMLQuantizationType.MXFP4
assert list(t["blk.1.attn_sinks.weight"].shape) == [4] and list(t["blk.1.ffn_up_exps.bias"].shape) == [64, 8]
assert r.tensors[0].name == "blk.0.ffn_down_exps.weight", "MXFP4 stacks first, as the reference writes them"
PYEOF
then ok "mx/f16: MXFP4 experts first, MOSTLY_MXFP4_MOE, window, YaRN, sinks, gpt-4o pre-tokenizer, harmony template"
else bad "mx/f16 layout checks"; fi
f32=$W/bf-f32.gguf
for q in "q4_k_m 15 $bf" "q8_0 7 $f32"; do
  set -- $q
  ours=$(conv "$3" "$1" "$W/bf-sunny-$1") || { bad "bf/$1: sunny-convert failed"; continue; }
  if "$SN_BUILD/tests/llama_quantize_oracle" "$f32" "$W/bf-llamaquant-$1.gguf" "$2" >/dev/null 2>&1; then
    cmp -s "$ours" "$W/bf-llamaquant-$1.gguf" && ok "bf/$1 (from $(basename "$3")): equals llama-quantize's file byte for byte" ||
      { bad "bf/$1 differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$W/bf-llamaquant-$1.gguf" "$ours" | head; }
  else bad "llama_model_quantize $1 failed"; fi
done
# MXFP4 experts into Q4_K_M: llama-quantize only with --allow-requantize (refused below without it)
"$CONV" "$mx" -o "$W/mx-sunny-q4_k_m.gguf" --outtype q4_k_m --allow-requantize --force >/dev/null 2>&1 || bad "mx/q4_k_m --allow-requantize: sunny-convert failed"
if SN_ALLOW_REQUANTIZE=1 "$SN_BUILD/tests/llama_quantize_oracle" "$mx-f32.gguf" "$W/mx-llamaquant-q4_k_m.gguf" 15 >/dev/null 2>&1; then
  cmp -s "$W/mx-sunny-q4_k_m.gguf" "$W/mx-llamaquant-q4_k_m.gguf" &&
    ok "mx/q4_k_m --allow-requantize: equals llama-quantize --allow-requantize on the mx f32 file byte for byte" ||
    bad "mx/q4_k_m --allow-requantize differs from llama-quantize's"
else bad "llama_model_quantize --allow-requantize on MXFP4 failed"; fi

# ---- 2. --verify
for pr in "$mx:f16" "$bf:q8_0"; do
  out=$("$CONV" "${pr%:*}" -o "$W/verify.gguf" --outtype "${pr##*:}" --verify --force 2>&1) &&
    ok "$(basename "${pr%:*}")/${pr##*:} --verify: $(grep -c ' ok ' <<<"$out") tensors ok, $(grep -c 'exact' <<<"$out") exact" ||
    bad "$(basename "${pr%:*}")/${pr##*:} --verify: $out"
done
rm -f "$W/verify.gguf"

# ---- 3. bad input: exit 1, the problem named, nothing written
variant() { # variant NAME DIR PYTHON (edits cfg, or tensors: a dict of the safetensors header) -> DIR copy
  local d=$W/bad-$1; rm -rf "$d"; mkdir -p "$d"
  for x in "$2"/*; do ln -s "$x" "$d/"; done
  $PY - "$2" "$d" "$3" <<'PYEOF' || return 1
import json, os, struct, sys
src, dst, edit = sys.argv[1:4]
cfg = json.load(open(os.path.join(src, "config.json")))
raw = open(os.path.join(src, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
old = json.dumps(hdr)
exec(edit)
os.remove(os.path.join(dst, "config.json"))
json.dump(cfg, open(os.path.join(dst, "config.json"), "w"))
if json.dumps(hdr) != old:  # the same data, a header edited (renamed or dropped tensors)
    os.remove(os.path.join(dst, "model.safetensors"))
    h = json.dumps(hdr).encode(); h += b" " * (-len(h) % 8)
    open(os.path.join(dst, "model.safetensors"), "wb").write(struct.pack("<Q", len(h)) + h + raw[8 + n:])
PYEOF
  echo "$d"
}
expect_fail() { # expect_fail NAME DIR PATTERN [OUTTYPE]
  local out=$W/bad-$1.gguf
  rm -f "$out"
  "$CONV" "$2" -o "$out" --outtype "${4:-f16}" >/dev/null 2>"$W/bad-$1.err"; local rc=$?
  if ((rc == 1)) && grep -Eq "$3" "$W/bad-$1.err" && [[ ! -e $out && -z $(leftovers "$out") ]]; then
    ok "$1: exit 1, $(head -c 260 "$W/bad-$1.err")"
  else bad "$1: exit $rc, want 1 and /$3/ and no output: $(head -c 300 "$W/bad-$1.err")"; fi
}
expect_fail experts "$(variant experts "$mx" 'cfg["num_local_experts"] = 16')" \
  "tensor 'model.layers.0.mlp.experts.down_proj_[a-z]+' has shape \[8, [0-9, ]+\] but config.json implies \[16, "
expect_fail ffn "$(variant ffn "$bf" 'cfg["intermediate_size"] = 128')" \
  "tensor 'model.layers.0.mlp.experts.down_proj' has shape \[8, 64, 64\] but config.json implies \[8, 128, 64\]"
expect_fail top-k "$(variant topk "$mx" 'cfg["num_experts_per_tok"] = 9')" \
  "config.json: num_experts_per_tok 9 exceeds num_local_experts 8"
expect_fail window "$(variant window "$mx" 'del cfg["sliding_window"]')" "config.json: \"sliding_window\" is missing"
expect_fail no-scales "$(variant scales "$mx" 'del hdr["model.layers.2.mlp.experts.gate_up_proj_scales"]')" \
  "tensor 'model.layers.2.mlp.experts.gate_up_proj_blocks' has no scales: 'model.layers.2.mlp.experts.gate_up_proj_scales' is missing"
expect_fail no-sinks "$(variant sinks "$bf" 'del hdr["model.layers.3.self_attn.sinks"]')" "no tensor maps to blk.3.attn_sinks.weight"
expect_fail mxfp4-requantize "$mx" "tensor blk.0.ffn_down_exps.weight is MXFP4 in the checkpoint .*llama-quantize refuses it" q4_k_m

# ---- 4. tokenizer: sunny's against llama.cpp's on one converted file
G=$mx-q8_0.gguf
TOK=$SN_BUILD/tests/tok_dump
CORPUS=$SN_SRC/tests/fixtures/tokenizer_corpus.txt
$PY - >"$W/harmony.jsonl" <<'PYEOF'
import json
for s in ["<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n\nReasoning: medium<|end|><|start|>user<|message|>What's 12345+678?<|end|><|start|>assistant",
          "<|channel|>analysis<|message|>We need to add: 12345 + 678 = 13023.<|end|><|start|>assistant<|channel|>final<|message|>13023<|return|>",
          "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Zürich\"}<|call|>",
          "I'M SURE they'LL say HE'S right; we'VE 3.14159 and 1000000 reasons", "東京は晴れ。 Привет, мир! مرحبا 👋🏽 café",
          "def f(x):\n\treturn x**2  # square\n\n\n    \r\n", "<|endoftext|><|startoftext|><|reserved_200013|> <|constrain|>json"]:
    print(json.dumps(s))
PYEOF
: >"$W/each.tsv"
for mode in "" --no-parse-special --decode; do
  tag=tok${mode//-/_}
  printf '%s\tllama\t--corpus\t%s%s\n' "$W/$tag.exp" "$CORPUS" "${mode:+	$mode}" >>"$W/each.tsv"
  printf '%s\tllama\t--json\t%s%s\n' "$W/$tag-h.exp" "$W/harmony.jsonl" "${mode:+	$mode}" >>"$W/each.tsv"
  "$TOK" "$G" --corpus $mode "$CORPUS" >"$W/$tag.got" && "$TOK" "$G" --json $mode "$W/harmony.jsonl" >"$W/$tag-h.got" ||
    bad "tok_dump failed ($mode)"
done
"$TOK" "$G" --info >"$W/info.json" || bad "tok_dump --info failed"
printf '%s\tinfo\t%s\n' "$W/info.out" "$W/info.json" >>"$W/each.tsv"
(cd "$SN_SRC/tests" && node tools/tok_oracle.mjs each "$G" "$W/each.tsv" 2>"$W/each.err") || bad "tok_oracle each failed: $(tail -2 "$W/each.err")"
for mode in "" --no-parse-special --decode; do
  tag=tok${mode//-/_}
  for s in "" -h; do
    if [[ -s $W/$tag$s.got ]] && cmp -s "$W/$tag$s.exp" "$W/$tag$s.got"; then
      ok "tokenizer ${mode:-parse-special}: $(wc -l <"$W/$tag$s.got") $([[ $s ]] && echo harmony || echo corpus) texts equal llama.cpp's"
    else bad "tokenizer ${mode:-parse-special}${s}: differs from llama.cpp"; diff "$W/$tag$s.exp" "$W/$tag$s.got" | head -4; fi
  done
done
# One known difference (docs/TOKENIZER.md): the EOT id llama.cpp finds first in its hash map's order
# is <|endoftext|>, sunny's name list finds <|end|>; the EOG sets (what stops a generation) agree.
if [[ $(head -1 "$W/info.out" 2>/dev/null) == "eot: llama.cpp 199999, ours 200007 (shown as -1)" &&
      $(sed -n 2p "$W/info.out") == "differences: 1 "* ]]; then
  ok "token attributes, EOG set, BOS/EOS, add_bos/add_eos equal llama.cpp's (EOT id: the known hash-order difference)"
else bad "token info differs from llama.cpp: $(head -5 "$W/info.out" 2>/dev/null)"; fi
finish
