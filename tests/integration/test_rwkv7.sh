#!/usr/bin/env bash
# test_rwkv7.sh - RWKV-7 end to end against llama.cpp: converter, tokenizer, runtime, state.
#
# Fixture: tests/fixtures/gen_rwkv7.py (random weights scaled for diverse greedy output, the real
# world vocab, head size 64) in the fla-hub and RWKV-HF layouts.
#  1. sunny-convert fla -> f32/f16/bf16/q8_0/q4_0; the RWKV-HF layout and the BlinkDL .pth (no
#     config.json: every hyperparameter from tensor shapes) give byte-identical tensors;
#     with llama.cpp's source (LLAMA_CPP_SRC, else the git bundle node-llama-cpp ships) its own
#     convert_hf_to_gguf.py (tests/tools/lcpp_convert.py: transformers/tqdm shims) must write the
#     same keys and tensors (tests/tools/gguf_diff.py), and our q4_0 must equal llama-quantize's
#     (tests/tools/llama_quantize_oracle) run on llama.cpp's f32 file.
#  2. tokenizer: tok_dump on the corpus equals node-llama-cpp with and without special-token
#     parsing, detokenized text too, and an independent greedy-longest-match reference in Python.
#  3. runtime: 5 types x 3 prompts x 32 greedy tokens + one 300-token run vs node-llama-cpp (a
#     divergence passes only as a proven tie: our top-2 gap < 1e-3 x max|logit|, printed); where the
#     tokens are equal the final-step logits (llama.cpp's decode logits, relative to the top one)
#     must be within 1e-5, for every type.
#  4. state: A then B == A+B bitwise, save/restore through sn_abi (tests/tools/abi_state).
#  Ollama / LM Studio (the rwkv-world TEMPLATE and stops, both halves of the smoke gate, the server's
#  default template failing it) and --vocab: tests/integration/test_rwkv7_e2e.sh.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py torch numpy
W=$SN_WORK/rwkv7
scratch "$W"
mkdir -p "$W"
FX=$W/fx
CONV=$SN_BIN/sunny-convert
RUN=$SN_BIN/sunny-run
DIFF="$PY $SN_SRC/tests/tools/gguf_diff.py"
[[ -f $FX/fla/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_rwkv7.py" --out "$FX" >/dev/null \
  || { bad "fixture generator failed"; finish; }
TYPES="f32 f16 bf16 q8_0 q4_0"

# ---- 1. converter
for t in $TYPES; do
  g=$W/sn-$t.gguf
  [[ -f $g ]] || "$CONV" "$FX/fla" -o "$g" --outtype "$t" >"$W/conv-$t.log" 2>&1 || bad "sunny-convert $t failed: $(tail -2 "$W/conv-$t.log")"
done
"$CONV" "$FX/rwkvhf" -o "$W/sn-rwkvhf-f32.gguf" --outtype f32 --force >/dev/null 2>&1 || bad "sunny-convert rwkvhf failed"
# the BlinkDL .pth through the PyTorch reader, no config.json: hyperparameters from tensor shapes
"$CONV" "$FX/blinkdl/model.pth" -o "$W/sn-blinkdl-f32.gguf" --outtype f32 --force \
  >"$W/conv-blinkdl.log" 2>&1 || bad "sunny-convert BlinkDL .pth failed: $(tail -2 "$W/conv-blinkdl.log")"
grep -q '^config (no config.json; derived from tensor shapes): .*"head_size": 64.*"_derived_from"' "$W/conv-blinkdl.log" \
  && ok "BlinkDL .pth: hyperparameters derived from tensor shapes and reported" || bad "BlinkDL .pth: no derived config reported"

# the source tree unpacked once per work dir for every test (lib.sh llama_tree), unless given
LCPP=${LLAMA_CPP_SRC:-$(llama_tree)}
[[ -f $LCPP/convert_hf_to_gguf.py ]] || bad "no llama.cpp source tree for its converter (LLAMA_CPP_SRC)"
DIFF="$DIFF --gguf-py $LCPP/gguf-py"
# a .pth ships no chat template: sunny writes its own world template, which must render what the one
# llama.cpp's converter writes in that case renders (jinja2, sunny's probes + held-out conversations)
"$SN_BUILD/tests/claim_corpus" --probes >"$W/probes.json" || bad "claim_corpus --probes"
if out=$($PY "$SN_SRC/tests/tools/world_template_check.py" "$SN_SRC/templates/data/rwkv-world-default.jinja" \
           "$LCPP/models/templates/llama-cpp-rwkv-world.jinja" "$W/probes.json" "$SN_SRC/tests/fixtures/claim_heldout.json" \
           --gguf "$W/sn-blinkdl-f32.gguf" --gguf-py "$LCPP/gguf-py" 2>&1); then
  ok "BlinkDL .pth: the GGUF carries sunny's world chat template; it renders like llama.cpp's default: $(tail -1 <<<"$out")"
else bad "world chat template:"; echo "$out" | tail -5; fi
for v in rwkvhf blinkdl; do
  if out=$($DIFF "$W/sn-f32.gguf" "$W/sn-$v-f32.gguf" --tensors-only 2>&1); then ok "$v layout -> byte-identical tensors to fla's: $(tail -1 <<<"$out")"
  else bad "$v layout tensors differ from fla's:"; echo "$out" | tail -5; fi
done
# llama.cpp's converter writes the four references in one python process (torch imported once)
: >"$W/lc-jobs.tsv"
for t in f32 f16 bf16 q8_0; do [[ -f $W/lc-$t.gguf ]] || printf '%s\t%s\t%s\n' "$FX/fla" "$W/lc-$t.gguf" $t >>"$W/lc-jobs.tsv"; done
[[ -s $W/lc-jobs.tsv ]] && { $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lc-jobs.tsv" >"$W/lc.log" 2>&1 ||
  echo "info - llama.cpp's converter failed on some jobs (each is reported below)"; }
for t in f32 f16 bf16 q8_0; do
  g=$W/lc-$t.gguf
  [[ -f $g ]] || { bad "llama.cpp's converter failed ($t): $(grep -F "FAILED $FX/fla -> $g" "$W/lc.log" 2>/dev/null | cut -c1-300)"; continue; }
  if out=$($DIFF "$g" "$W/sn-$t.gguf" 2>&1); then ok "$t: keys and tensors equal llama.cpp's converter: $(tail -1 <<<"$out")"
  else bad "$t: differs from llama.cpp's converter:"; echo "$out" | tail -6; fi
done
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
[[ -f $W/lq-q4_0.gguf ]] || "$SN_BUILD/tests/llama_quantize_oracle" "$W/lc-f32.gguf" "$W/lq-q4_0.gguf" 2 >"$W/lq.log" 2>&1 \
  || bad "llama-quantize failed: $(tail -2 "$W/lq.log")"
if out=$($DIFF "$W/lq-q4_0.gguf" "$W/sn-q4_0.gguf" 2>&1); then ok "q4_0: equals llama-quantize's: $(tail -1 <<<"$out")"
else bad "q4_0: differs from llama-quantize's:"; echo "$out" | tail -6; fi

# ---- 2. tokenizer
TO="node $SN_SRC/tests/tools/tok_oracle.mjs"
CORPUS=$SN_SRC/tests/fixtures/tokenizer_corpus.txt
G=$W/sn-f32.gguf
for mode in "" --no-parse-special --decode; do
  tag=tok${mode//-/_}
  $TO llama "$G" --corpus $mode "$CORPUS" >"$W/$tag.exp" 2>/dev/null || bad "node-llama-cpp tokenize failed ($mode)"
  "$SN_BUILD/tests/tok_dump" "$G" --corpus $mode "$CORPUS" >"$W/$tag.got" || bad "tok_dump failed ($mode)"
  if cmp -s "$W/$tag.exp" "$W/$tag.got"; then ok "tokenizer ${mode:-parse-special}: $(wc -l <"$W/$tag.got") corpus strings equal llama.cpp's"
  else bad "tokenizer ${mode:-parse-special}: differs from llama.cpp"; diff "$W/$tag.exp" "$W/$tag.got" | head -4; fi
done
$PY "$SN_SRC/tests/tools/rwkv_ref_tok.py" "$SN_SRC/tests/fixtures/rwkv_vocab_v20230424.txt" "$CORPUS" >"$W/tok.ref"
cmp -s "$W/tok.ref" "$W/tok__no_parse_special.got" && ok "tokenizer equals the Python greedy-longest-match reference" \
  || bad "tokenizer differs from the Python reference"

# ---- 3. runtime parity
P1=24281,59,38685,39934,45,21835,21286,22799,64,261,5585,41693,59
P2=$(seq -s, 300 340)
P3=0,33,3319,22590,4811,11,46,1247,6091,10769,4600,25,57,261
JOBS=$W/jobs.jsonl
: >"$JOBS"
for t in $TYPES; do for p in "$P1" "$P2" "$P3"; do
  printf '{"model":"%s","prompt_ids":[%s],"n":32,"decode_top_logits":8}\n' "$W/sn-$t.gguf" "$p" >>"$JOBS"
done; done
printf '{"model":"%s","prompt_ids":[%s],"n":300,"decode_top_logits":8}\n' "$W/sn-f32.gguf" "$P1" >>"$JOBS"
# llama.cpp on 1 thread (sunny-run runs 2): no op of this graph splits a sum across threads (matrix rows
# and WKV heads are split, there is no attention); the 15 32-token jobs gave byte-identical answers at
# 1 and 2 threads. 2 threads only spin at ggml's barriers when the other ctest job holds the second core.
$ORACLE batch --threads 1 <"$JOBS" >"$W/oracle.jsonl" 2>"$W/oracle.err" || bad "node-llama-cpp batch failed: $(tail -2 "$W/oracle.err")"
i=0
while read -r job && read -r res <&3; do
  i=$((i + 1))
  model=$($PY -c 'import json,sys; print(json.loads(sys.argv[1])["model"])' "$job")
  ids=$($PY -c 'import json,sys; j=json.loads(sys.argv[1]); print(",".join(map(str,j["prompt_ids"])), j["n"])' "$job")
  "$RUN" "$model" --prompt-ids "${ids% *}" -n "${ids#* }" -t 2 --json --ignore-eos >"$W/run-$i.json" 2>"$W/run-$i.err" \
    || { bad "sunny-run failed on case $i: $(tail -1 "$W/run-$i.err")"; continue; }
  t=$(basename "$model" .gguf); t=${t#sn-}
  out=$($PY - "$W/run-$i.json" "$res" "$t" "$RUN" "$model" <<'PYEOF'
import json, subprocess, sys
s = json.load(open(sys.argv[1])); r = json.loads(sys.argv[2]); t = sys.argv[3]
n = len(r["ids"])
if s["ids"] != r["ids"]:
    # a divergence passes only as a proven tie: our top-2 gap there < 1e-3 x max|logit|
    k = next(i for i, (a, b) in enumerate(zip(s["ids"], r["ids"])) if a != b)
    ids = r["prompt_ids"] + r["ids"][:k]
    j = json.loads(subprocess.run([sys.argv[4], sys.argv[5], "--prompt-ids", ",".join(map(str, ids)), "-n", "1",
                                   "-t", "2", "--json", "--ignore-eos"], capture_output=True, text=True).stdout)
    gap = j["top_logprobs"][0][1] - j["top_logprobs"][1][1]
    tie = gap < 1e-3 * j["max_abs_logit"]
    print(f"{'ok' if tie else 'FAIL'} diverged at step {k} of {n}: top-2 gap {gap:.2e} vs max|logit| "
          f"{j['max_abs_logit']:.2f} ({'a tie' if tie else 'not a tie'})")
    sys.exit(0 if tie else 1)
ours = dict((i, lp) for i, lp in s["top_logprobs"]); top = s["top_logprobs"][0][1]
tl = r["decode_top_logits"]; ref = tl[0][1]
d = max(abs((ours[i] - top) - (l - ref)) for i, l in tl if i in ours)
ok = d <= 1e-5
print(f"{'ok' if ok else 'FAIL'} {n} tokens equal ({len(set(r['ids']))} distinct); final-step logits max diff {d:.1e}"
      " (limit 1e-5)")
sys.exit(0 if ok else 1)
PYEOF
) && ok "parity $t case $i: $out" || bad "parity $t case $i: $out"
done <"$JOBS" 3<"$W/oracle.jsonl"

# ---- 4. recurrent state through the ABI
for t in f32 q8_0; do
  if out=$("$SN_BUILD/tests/abi_state" "$W/sn-$t.gguf" "$P1,$P2" "$P3" 2>&1); then ok "state $t: $(tr '\n' ';' <<<"$out")"
  else bad "state $t: $out"; fi
done

finish
