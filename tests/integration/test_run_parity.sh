#!/usr/bin/env bash
# test_run_parity.sh - sunny-run must produce llama.cpp's greedy tokens on the same GGUF.
#
# For each fixture family (llama3, qwen2, qwen3, mistral; random weights, real tokenizers from
# tests/fixtures/gen_model.py) x {f32, f16, bf16, q8_0, q4_0} x 3 prompts: 32 greedy tokens from
# sunny-run vs node-llama-cpp (tests/tools/llama_oracle.mjs), judged by tests/tools/parity_judge.py
# (shared with test_quant_parity.sh). A differing step passes only as a tie proven on both engines'
# logits (each one's top-2 gap < 1e-3 x its own max|logit|, the same two candidates); sunny-run
# then continues on llama.cpp's pick and the remaining tokens are still compared (printed). The
# final-step logits are compared too, as computed by the last decode step and again by evaluating
# prompt + the first 31 tokens as one batch: the max abs difference over llama.cpp's 8 largest raw
# logits (each taken relative to the largest, since sunny-run prints log-probabilities) is printed
# (~1e-6 = sunny-run's print precision when the logits are bit-identical). Then RoPE-scaled
# variants, a Q4_K_M-style GGUF (Q4_K + Q6_K, from our reference K-quantizers) on the "small"
# preset, whose widths are multiples of 256, and a Q4_K_M of the same model made by llama.cpp's own
# quantizer (llama_model_quantize through tests/tools/llama_quantize_oracle). The other GGUFs are
# written by tests/tools/rt_hf2gguf.py + rt_quantize so this test does not depend on sunny-convert.
# Three 250-token cases (llama3 f16, qwen3 q8_0, qwen2 bf16) decode past 256 cached positions.
# llama.cpp runs once for all cases (llama_oracle.mjs batch, each GGUF loaded once). Env: SN_SRC
# SN_BUILD SN_BIN SN_WORK (set by ctest); SN_PARITY_FAMILIES / SN_PARITY_TYPES narrow the matrix.
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SN_BUILD:-$SRC/build}
BIN=${SN_BIN:-$BUILD/cmd}
WORK=${SN_WORK:-$(mktemp -d)}/run_parity
PY=/usr/bin/python3
mkdir -p "$WORK"
# removed when the script passes (lib.sh's scratch rule; SN_KEEP_WORK=1 keeps it), kept when it fails
trap 'rc=$?; ((rc == 0)) && [[ ${SN_KEEP_WORK:-0} != 1 ]] && rm -rf "$WORK"; exit $rc' EXIT
RUN=$BIN/sunny-run
QUANT=$BUILD/tests/rt_quantize
ORACLE="node $SRC/tests/tools/llama_oracle.mjs"
FAMILIES=${SN_PARITY_FAMILIES:-"llama3 qwen2 qwen3 mistral"}
TYPES=${SN_PARITY_TYPES:-"f32 f16 bf16 q8_0 q4_0"}
N=32
for f in "$RUN" "$QUANT"; do [[ -x $f ]] || { echo "missing $f (build sunny-run and rt_quantize)"; exit 1; }; done

# ---- 1. fixtures and the case list: one "tag<TAB>gguf<TAB>prompt ids" line per case, grouped by GGUF
CASES=$WORK/cases.tsv
: >"$CASES"
add_cases() { # family dtype gguf [only-prompt-number]
    local bos i=0 p
    case $1 in llama3) bos=128000 ;; mistral) bos=1 ;; *) bos="" ;; esac
    for p in "791,3938,315,9822,374" "40,1093,311,3137,922,279,1917,11,323,1243,584,649,1440" "$(seq -s, 16 70)"; do
        i=$((i + 1))
        [[ -z ${4:-} || $4 == "$i" ]] && printf '%s/%s/p%d\t%s\t%s\n' "$1" "$2" $i "$3" "${bos:+$bos,}$p" >>"$CASES"
    done
    return 0
}

for fam in $FAMILIES; do
    d=$WORK/$fam-tiny
    [[ -f $d/config.json ]] || $PY "$SRC/tests/fixtures/gen_model.py" --family "$fam" --out "$d" --dtype f32 >/dev/null
    [[ -f $WORK/$fam-f32.gguf ]] || $PY "$SRC/tests/tools/rt_hf2gguf.py" "$d" "$WORK/$fam-f32.gguf"
    for dt in $TYPES; do
        g=$WORK/$fam-$dt.gguf
        [[ $dt == f32 || -f $g ]] || "$QUANT" "$WORK/$fam-f32.gguf" "$g" "$dt"
        add_cases "$fam" "$dt" "$g"
    done
done

# RoPE scaling: the llama3 fixture with YaRN (factor 4 over 2048) and the qwen2 one with linear x2,
# written as F16 with the scaling keys set (llama.cpp reads the same keys); the 55-token prompt.
if [[ -z ${SN_PARITY_SKIP_SCALING:-} ]]; then
    for spec in "llama3 yarn llama.rope.scaling.type=str:yarn llama.rope.scaling.factor=f32:4 llama.rope.scaling.original_context_length=u32:2048" \
                "qwen2 linear qwen2.rope.scaling.type=str:linear qwen2.rope.scaling.factor=f32:2"; do
        set -- $spec
        fam=$1 kind=$2
        shift 2
        [[ -f $WORK/$fam-f32.gguf ]] || continue
        g=$WORK/$fam-$kind.gguf
        [[ -f $g ]] || "$QUANT" "$WORK/$fam-f32.gguf" "$g" f16 "$@"
        add_cases "$fam" "f16-rope-$kind" "$g" 3
    done
fi

# Long context: a 250-token prompt, so decoding crosses 256 cached positions. There llama.cpp's KV
# view grows to 512 cells and its flash attention splits a single query's keys across its threads
# (both engines run 2 threads).
if [[ -z ${SN_PARITY_SKIP_LONG:-} ]]; then
    for spec in llama3/f16 qwen3/q8_0 qwen2/bf16; do
        fam=${spec%/*} dt=${spec#*/}
        g=$WORK/$fam-$dt.gguf
        [[ -f $g ]] || continue
        case $fam in llama3) ids="128000,$(seq -s, 1000 1248)" ;; *) ids=$(seq -s, 1000 1249) ;; esac
        printf '%s/%s/long\t%s\t%s\n' "$fam" "$dt" "$g" "$ids" >>"$CASES"
    done
fi

# K-quants: Q4_K_M-style mix on the small preset (widths multiple of 256)
if [[ -z ${SN_PARITY_SKIP_KQUANTS:-} ]]; then
    for fam in ${SN_PARITY_KQ_FAMILIES:-llama3 qwen3}; do
        d=$WORK/$fam-small
        [[ -f $d/config.json ]] || $PY "$SRC/tests/fixtures/gen_model.py" --family "$fam" --preset small --out "$d" --dtype f32 >/dev/null
        [[ -f $WORK/$fam-small-f32.gguf ]] || $PY "$SRC/tests/tools/rt_hf2gguf.py" "$d" "$WORK/$fam-small-f32.gguf"
        g=$WORK/$fam-small-q4_k_m.gguf
        [[ -f $g ]] || "$QUANT" "$WORK/$fam-small-f32.gguf" "$g" q4_k_m
        add_cases "$fam" q4_k_m "$g"
    done
    # One file made by llama.cpp's own quantizer, so both engines do not just read sunny's bytes:
    # llama_model_quantize from node-llama-cpp's libllama (tests/tools/llama_quantize_oracle, as in
    # test_quant_parity.sh) makes a Q4_K_M (llama_ftype 15) of the first family's small f32 file.
    fam=${SN_PARITY_KQ_FAMILIES:-llama3}; fam=${fam%% *}
    LQ=$BUILD/tests/llama_quantize_oracle
    export SN_LIBLLAMA=${SN_LIBLLAMA:-$(ls "$SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so 2>/dev/null | head -1)}
    [[ -x $LQ && -n $SN_LIBLLAMA ]] || { echo "FAIL: llama_quantize_oracle or node-llama-cpp's libllama missing"; exit 1; }
    g=$WORK/$fam-small-lq-q4_k_m.gguf
    if [[ ! -f $g ]]; then
        "$LQ" "$WORK/$fam-small-f32.gguf" "$g.tmp" 15 >"$WORK/lq.log" 2>&1 || { cat "$WORK/lq.log"; exit 1; }
        mv "$g.tmp" "$g"
    fi
    add_cases "$fam" lq-q4_k_m "$g"
fi

# ---- 2. llama.cpp: one process, each GGUF loaded once, jobs in case order. llama.cpp runs the short
# cases on 1 thread: below 256 cached positions its answers (tokens, every logit printed) are the
# same at 1 and 2 threads, byte for byte (checked on all 71 cases), and 2 threads spin at ggml's
# barriers on a busy machine. The long cases, where its attention splits across threads, run on 2,
# as sunny-run does.
sort -s -t $'\t' -k2,2 "$CASES" >"$CASES.sorted" && mv "$CASES.sorted" "$CASES"
$PY - "$CASES" "$N" >"$WORK/jobs.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    tag, gguf, ids = line.rstrip("\n").split("\t")
    print(json.dumps({"model": gguf, "prompt_ids": [int(i) for i in ids.split(",")], "n": int(sys.argv[2]), "top_logits": 8,
                      "decode_top_logits": 8, "step_top_logits": 2, "threads": 2 if tag.endswith("/long") else 1}))
EOF
$ORACLE batch --threads 2 <"$WORK/jobs.jsonl" >"$WORK/oracle.jsonl"

# ---- 3. sunny-run on every case, judged against llama.cpp's answer (the one judge, shared with
# test_quant_parity.sh: equal tokens, or a tie proven on both engines' logits, then compared on)
$PY "$SRC/tests/tools/parity_judge.py" "$CASES" "$WORK/oracle.jsonl" "$RUN" "$N" 2 || exit 1

# ---- 4. the first family's short cases again with sunny-run on 1 thread. Its decode attention
# gives each thread a range of query heads; on 2 threads each range lies in one kv head of the
# fixtures, on 1 thread the range spans all of them, which only this run reads. llama.cpp's answers
# are the 1-thread ones already (see 2.).
fam1=${FAMILIES%% *}
$PY - "$CASES" "$WORK/oracle.jsonl" "$WORK/cases1.tsv" "$WORK/oracle1.jsonl" "$fam1/" <<'PYEOF'
import sys
cases, oracle, c1, o1, pre = sys.argv[1:6]
with open(cases) as fc, open(oracle) as fo, open(c1, "w") as gc, open(o1, "w") as go:
    for c, o in zip(fc, fo):
        tag = c.split("\t")[0]
        if tag.startswith(pre) and not tag.endswith("/long"):
            gc.write(c)
            go.write(o)
PYEOF
echo "== $fam1 short cases, sunny-run on 1 thread"
$PY "$SRC/tests/tools/parity_judge.py" "$WORK/cases1.tsv" "$WORK/oracle1.jsonl" "$RUN" "$N" 1
