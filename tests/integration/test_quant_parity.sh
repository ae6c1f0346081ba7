#!/usr/bin/env bash
# test_quant_parity.sh - sunny-run on files made by llama.cpp's own quantizer gives llama.cpp's tokens.
#
# The files people download come from llama-quantize, whose recipes mix tensor types (e.g. Q4_K_M:
# Q4_K + Q6_K for attn_v / ffn_down / output; Q3_K_M: Q3_K + Q4_K + Q5_K; ...) and fall back to
# Q4_0 / Q5_0 / Q5_1 / Q8_0 for rows whose length is not a multiple of 256. So: three fixtures
# (random weights, real tokenizers, tests/fixtures/gen_model.py) -
#   llama3 tiny (hidden 128, ffn 384: every K-quant tensor falls back), from a BF16 GGUF,
#   qwen2 tiny (q/k/v biases, same widths), from an F16 GGUF,
#   llama3 small (hidden 256, ffn 768: the K-quant recipes as written), from an F16 GGUF -
# each quantized by libllama's llama_model_quantize (tests/tools/llama_quantize_oracle.c, the
# prebuilt library node-llama-cpp ships, i.e. llama-quantize's recipe) to Q2_K, Q3_K_S/M/L, Q4_0,
# Q4_1, Q5_0, Q5_1, Q4_K_S/M, Q5_K_S/M, Q6_K, Q8_0: 42 GGUFs (those that are the same file but for
# general.file_type run once: the tiny fixtures' fallbacks), one 13-token prompt each, 32 greedy
# tokens from sunny-run vs llama.cpp (node-llama-cpp, one process for all cases), judged by
# tests/tools/parity_judge.py (exact tokens or a proven tie; final-step logits within 1e-5 on
# AVX-512). SN_QPARITY_FTYPES / SN_QPARITY_FIXTURES narrow the matrix (and may name iq4_nl / iq4_xs,
# which test_iq4_parity.sh runs), SN_QPARITY_WORK names the work dir.
source "$(dirname "$0")/lib.sh"
need_oracle
WORK=$SN_WORK/${SN_QPARITY_WORK:-quant_parity}
scratch "$WORK"
mkdir -p "$WORK"
RUN=$SN_BIN/sunny-run
QUANT=$SN_BUILD/tests/rt_quantize
LQ=$SN_BUILD/tests/llama_quantize_oracle
for f in "$RUN" "$QUANT" "$LQ"; do [[ -x $f ]] || { echo "missing $f"; exit 1; }; done
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so 2>/dev/null | head -1)
[[ -n $SN_LIBLLAMA ]] || skip "node-llama-cpp's libllama not found"
N=32
# llama_ftype numbers (llama.h)
declare -A FT=([q4_0]=2 [q4_1]=3 [q8_0]=7 [q5_0]=8 [q5_1]=9 [q2_k]=10 [q3_k_s]=11 [q3_k_m]=12 [q3_k_l]=13
               [q4_k_s]=14 [q4_k_m]=15 [q5_k_s]=16 [q5_k_m]=17 [q6_k]=18 [iq4_nl]=25 [iq4_xs]=30)
FTYPES=${SN_QPARITY_FTYPES:-"q2_k q3_k_s q3_k_m q3_k_l q4_0 q4_1 q5_0 q5_1 q4_k_s q4_k_m q5_k_s q5_k_m q6_k q8_0"}
FIXTURES=${SN_QPARITY_FIXTURES:-"llama3/tiny/bf16 qwen2/tiny/f16 llama3/small/f16"}
CASES=$WORK/cases.tsv
: >"$CASES"
for fx in $FIXTURES; do
  IFS=/ read -r fam preset src <<<"$fx"
  base=$WORK/$fam-$preset
  if [[ ! -f $base-f32.gguf ]]; then
    $PY "$SN_SRC/tests/fixtures/gen_model.py" --family "$fam" --preset "$preset" --dtype f32 --out "$base" >/dev/null || exit 1
    $PY "$SN_SRC/tests/tools/rt_hf2gguf.py" "$base" "$base-f32.gguf.tmp" && mv "$base-f32.gguf.tmp" "$base-f32.gguf" || exit 1
  fi
  [[ -f $base-$src.gguf ]] || "$QUANT" "$base-f32.gguf" "$base-$src.gguf" "$src" || exit 1
  case $fam in llama3) bos=128000, ;; *) bos= ;; esac
  for ft in $FTYPES; do
    g=$base-$ft.gguf
    if [[ ! -f $g ]]; then
      "$LQ" "$base-$src.gguf" "$g.tmp" "${FT[$ft]}" >"$WORK/quantize.log" 2>&1 || { cat "$WORK/quantize.log"; exit 1; }
      mv "$g.tmp" "$g"
    fi
    printf '%s-%s/%s\t%s\t%s\n' "$fam" "$preset" "$ft" "$g" "${bos}40,1093,311,3137,922,279,1917,11,323,1243,584,649,1440" >>"$CASES"
  done
done
# On the tiny fixtures (rows not a multiple of 256) several recipes fall back to the same types and
# write the same file but for general.file_type (e.g. Q2_K = Q3_K_S = Q4_0 there): such a file is run
# once, for the first recipe that made it (tests/tools/gguf_sig.py: hash with file_type zeroed).
$PY "$SN_SRC/tests/tools/gguf_sig.py" $(cut -f2 "$CASES") >"$WORK/sig.tsv" || { echo "gguf_sig.py failed"; exit 1; }
$PY - "$CASES" "$WORK/sig.tsv" <<'PYEOF' || exit 1
import sys
sig = dict(l.rstrip("\n").split("\t")[::-1] for l in open(sys.argv[2]))
seen, keep = {}, []
for line in open(sys.argv[1]):
    tag, gguf, ids = line.rstrip("\n").split("\t")
    first = seen.setdefault((sig[gguf], ids), tag)
    if first == tag:
        keep.append(line)
    else:
        print(f"info - {tag}: the same file as {first} but for general.file_type (same tensors and keys): run once")
open(sys.argv[1], "w").writelines(keep)
print(f"{len(keep)} distinct llama-quantize files to run")
PYEOF
# which tensor types the recipes produced (read from the GGUF headers), so coverage is visible
$PY - "$CASES" <<'PYEOF'
import collections, struct, sys
NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 10: "Q2_K", 11: "Q3_K",
         12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 20: "IQ4_NL", 23: "IQ4_XS", 30: "BF16"}
def tensor_types(path):
    f = open(path, "rb")
    rd = lambda fmt: struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))
    def skip_val(t):
        sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
        if t == 8: f.read(rd("Q")[0])
        elif t == 9:
            at, n = rd("IQ")
            for _ in range(n): skip_val(at)
        else: f.read(sizes[t])
    magic, ver, nt, nkv = rd("4sIQQ")
    for _ in range(nkv):
        f.read(rd("Q")[0]); skip_val(rd("I")[0])
    out = []
    for _ in range(nt):
        f.read(rd("Q")[0]); nd = rd("I")[0]; rd("Q" * nd); out.append(rd("I")[0]); rd("Q")
    return out
total = collections.Counter()
for line in open(sys.argv[1]):
    total.update(NAMES.get(t, str(t)) for t in tensor_types(line.split("\t")[1]))
print("tensor types in the llama-quantize files:", ", ".join(f"{k} x{v}" for k, v in sorted(total.items())))
PYEOF
$PY - "$CASES" "$N" >"$WORK/jobs.jsonl" <<'PYEOF'
import json, sys
for line in open(sys.argv[1]):
    tag, gguf, ids = line.rstrip("\n").split("\t")
    print(json.dumps({"model": gguf, "prompt_ids": [int(i) for i in ids.split(",")], "n": int(sys.argv[2]),
                      "top_logits": 8, "decode_top_logits": 8, "step_top_logits": 2}))
PYEOF
# llama.cpp on 1 thread (sunny-run runs 2): a 13-token prompt + 32 steps stays far below the 256 cached
# positions past which its attention splits across threads, so its answers do not depend on the thread
# count (18 of the 34 cases compared at 1 and 2 threads: byte-identical), and 2 threads only spin at
# ggml's barriers when the other ctest job holds the second core.
$ORACLE batch --threads 1 <"$WORK/jobs.jsonl" >"$WORK/oracle.jsonl" || { echo "oracle failed"; exit 1; }
$PY "$SN_SRC/tests/tools/parity_judge.py" "$CASES" "$WORK/oracle.jsonl" "$RUN" "$N" 2
