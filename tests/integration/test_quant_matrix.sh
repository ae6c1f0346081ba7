#!/usr/bin/env bash
# test_quant_matrix.sh - every quantized tensor type x every family sunny converts runs as llama.cpp does.
#
# The 15 file types (--outtype q2_k ... iq4_xs) write 12 tensor types: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
# Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, IQ4_XS (the K types where a row is a multiple of 256,
# llama-quantize's fallbacks Q4_0 / Q5_0 / Q5_1 / Q8_0 / IQ4_NL where it is not). What runtime parity
# has to prove is each tensor type's kernels inside each family's forward pass, so the matrix is
# (family x tensor type), 14 x 12 pairs, covered by the cheapest set of files (family, fixture, file
# type) below: fixtures whose rows are 256 in some matrices (hidden 256: the K types) and not in
# others (an ffn of 320, expert widths of 32-64: the fallbacks), so that one file holds several
# types. The cover was chosen from sunny-convert --dry-run's plans (equal to llama-quantize's:
# test_convert_quant) as the fewest files per family, and preferring the tiny fixtures (hidden 64-128)
# where they hold the type. A pair counts only where the type is a matrix the forward pass multiplies
# with (token_embd only when it is the tied output head), read from the written files' headers; the
# test fails if any pair is uncovered.
# Each file is written by sunny-convert in one step from the HF folder (its bytes are llama-quantize's:
# test_convert_quant), then sunny-run and llama.cpp (node-llama-cpp, one process for all cases, 1
# thread) run 32 greedy tokens on the same file, judged by tests/tools/parity_judge.py
# (equal tokens or a proven tie; final-step logits within 1e-5 on AVX-512).
# Cost: one prompt per file, the family's three prompts taken in turn over its files, so a pair held
# by one file (Q2_K, Q4_1, IQ4_XS) runs 1 prompt x 32 tokens and a pair held by three or more files
# (Q6_K, Q8_0, Q3_K, ...) all three; SN_QMATRIX_ALL_PROMPTS=1 runs all 3 prompts on every file (3x
# the cases). SN_QMATRIX_FAMILIES narrows the families (space-separated).
source "$(dirname "$0")/lib.sh"
need_oracle
need_py numpy
W=$SN_WORK/quant_matrix
scratch "$W"
mkdir -p "$W"
CONV=$SN_BIN/sunny-convert
RUN=$SN_BIN/sunny-run
N=32
ALL_PROMPTS=${SN_QMATRIX_ALL_PROMPTS:-0}
CTX=512 # both engines at one context (phi3's LongRoPE picks its factors by the context: the long ones here)

# family -> "fixture:type ..." (the cover). The five-file pattern: q2_k (Q2_K, Q3_K, Q4_0 fallback),
# q3_k_m (Q3_K, Q4_K, Q5_K, Q5_0 fallback), q5_k_m (Q5_K, Q6_K, Q5_1 / Q8_0 fallbacks), q4_1 (only
# file type writing Q4_1), iq4_xs (IQ4_XS, IQ4_NL fallback); Q6_K is also every file's output head.
FIVE="q2_k q3_k_m q5_k_m q4_1 iq4_xs"
declare -A COVER=(
  [llama3]="mix:$FIVE" [mistral]="mix:$FIVE" [qwen2]="mix:$FIVE" [qwen3]="mix:$FIVE"
  [smollm3]="mix4:$FIVE" [granitehybrid]="w256:$FIVE" [lfm2]="w256:$FIVE"
  [gptoss]="w256:q2_k q3_k_l q4_k_m q4_1 iq4_xs"
  # the recurrent families' tiny fixtures already mix rows of 256 and 128, but one K type per file
  [rwkv7]="tiny:q2_k q3_k_l q4_k_m q5_k_m q6_k q4_1 iq4_xs" [mamba2]="tiny:q2_k q3_k_l q4_k_m q5_k_m q6_k q4_1 iq4_xs"
  # tiny (hidden 64/128: every type but the ones needing hidden rows of 256) + one or three wide files
  [gemma3]="tiny:q3_k_m q3_k_l q4_1 iq4_xs w256:q2_k" [phi3]="tiny:q3_k_m q3_k_l q4_1 iq4_xs w256:q2_k"
  [qwen35]="tiny:q3_k_m q4_1 iq4_nl wide:q2_k q3_k_m iq4_xs"
  [qwen35moe]="tiny:q3_k_m q4_1 iq4_nl wide:q2_k q3_k_m iq4_xs"
)
FAMILIES=${SN_QMATRIX_FAMILIES:-"llama3 mistral qwen2 qwen3 smollm3 rwkv7 mamba2 gemma3 phi3 qwen35 qwen35moe granitehybrid lfm2 gptoss"}
L3="128000,40,1093,311,3137,922 128000,791,3938,315,9822,374 128000,9906,1917,11,1268,527"
QW="9906,1917,11,1234,5678,42 785,3974,13876,38835,11 40,1075,311,3291,911,2272"
MI="1,415,2936,9060,285,1142 1,851,349,264,1369,28723 1,22557,28725,910,1141"
declare -A PROMPTS=([llama3]=$L3 [smollm3]=$L3 [granitehybrid]=$L3 [lfm2]=$L3 [mistral]=$MI [phi3]=$MI
  [qwen2]=$QW [qwen3]=$QW [mamba2]=$QW [qwen35]=$QW [qwen35moe]=$QW [gptoss]=$QW
  [rwkv7]="33155,45,4811,2580 11,33,2319,49,1006 261,4960,3319,28,59"
  [gemma3]="2,9259,1902,236764,1217,236743 2,818,5279,236764,22281,21 2,3048,48750,563,15311,8339")

hf_of() { # hf_of FAMILY FIXTURE -> HF folder
  local d=$W/$1-$2 args=()
  case $1/$2 in
    rwkv7/*) [[ -f $d/fla/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_rwkv7.py" --out "$d" --preset "$2" >/dev/null || return 1
      echo "$d/fla"; return ;;
    mamba2/*) args=(--preset "$2" --groups 2) ;;
    phi3/*) args=(--lcpp "$(llama_tree)") ;;&
    qwen35moe/wide) args=(--moe --wide --layout vl) ;; # tied: half the 152k-row matrices
    qwen35moe/*) args=(--moe) ;;
    */wide) args+=(--wide) ;;
    */w256) args+=(--hidden 256) ;;&
    gptoss/*) args+=(--experts bf16 --layers 2 --gate-gain 4) ;;
    gemma3/* | phi3/* | qwen35*/* | granitehybrid/* | lfm2/*) ;;
    *) fixture "$1" bf16 "$2"; return ;;
  esac
  [[ -f $d/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_${1%moe}.py" --out "$d" "${args[@]}" >/dev/null || return 1
  echo "$d"
}

: >"$W/cases.tsv"
: >"$W/files.tsv"
for fam in $FAMILIES; do
  fx= nf=0
  for item in ${COVER[$fam]}; do
    [[ $item == *:* ]] && { fx=${item%%:*}; item=${item#*:}; }
    hf=$(hf_of "$fam" "$fx") || { bad "$fam/$fx: fixture generation failed"; continue; }
    g=$W/$fam-$fx-$item.gguf
    "$CONV" "$hf" -o "$g" --outtype "$item" --force >/dev/null 2>"$W/err" ||
      { bad "$fam/$fx/$item: sunny-convert failed: $(cat "$W/err")"; continue; }
    printf '%s\t%s/%s/%s\t%s\n' "$fam" "$fam" "$fx" "$item" "$g" >>"$W/files.tsv"
    ps=(${PROMPTS[$fam]})
    ((ALL_PROMPTS)) || ps=(${ps[nf % 3]})
    nf=$((nf + 1))
    for ids in "${ps[@]}"; do printf '%s/%s/%s\t%s\t%s\t-c %s\n' "$fam" "$fx" "$item" "$g" "$ids" $CTX >>"$W/cases.tsv"; done
  done
done

# the matrix: which tensor types each family's files multiply with (from the GGUF headers)
$PY - "$W/files.tsv" "$FAMILIES" <<'PYEOF' || bad "the (family x tensor type) matrix has uncovered pairs"
import collections, struct, sys
NAMES = {2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 10: "Q2_K", 11: "Q3_K", 12: "Q4_K", 13: "Q5_K",
         14: "Q6_K", 20: "IQ4_NL", 23: "IQ4_XS"}
TYPES = ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "IQ4_NL", "IQ4_XS"]
def tensors(path):
    f = open(path, "rb")
    rd = lambda fmt: struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))
    def skip_val(t):
        sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
        if t == 8: f.read(rd("Q")[0])
        elif t == 9:
            at, n = rd("IQ")
            for _ in range(n): skip_val(at)
        else: f.read(sizes[t])
    _, _, nt, nkv = rd("4sIQQ")
    for _ in range(nkv):
        f.read(rd("Q")[0]); skip_val(rd("I")[0])
    out = []
    for _ in range(nt):
        name = f.read(rd("Q")[0]).decode(); nd = rd("I")[0]; rd("Q" * nd); out.append((name, rd("I")[0])); rd("Q")
    return out
seen = collections.defaultdict(dict)  # family -> type -> the files holding it
for line in open(sys.argv[1]):
    fam, tag, path = line.rstrip("\n").split("\t")
    ts = tensors(path)
    tied = not any(n == "output.weight" for n, _ in ts)
    for n, t in ts:
        if t in NAMES and (n != "token_embd.weight" or tied):
            held = seen[fam].setdefault(NAMES[t], [])
            if tag.split("/", 1)[1] not in held: held.append(tag.split("/", 1)[1])
missing = 0
print("family x tensor type -> the first file (fixture/file type) holding it (in how many files)")
for fam in sys.argv[2].split():
    row = [f"{t}:{seen[fam][t][0]}({len(seen[fam][t])})" if t in seen[fam] else f"{t}:MISSING" for t in TYPES]
    missing += sum(t not in seen[fam] for t in TYPES)
    print(f"  {fam:14s} " + " ".join(row))
print(f"{sum(len(v) for v in seen.values())} of {12 * len(sys.argv[2].split())} pairs covered")
sys.exit(1 if missing else 0)
PYEOF
echo "$(wc -l <"$W/files.tsv") files, $(wc -l <"$W/cases.tsv") cases (prompts x $N greedy tokens)"
$PY - "$W/cases.tsv" "$N" "$CTX" >"$W/jobs.jsonl" <<'PYEOF'
import json, sys
for line in open(sys.argv[1]):
    tag, gguf, ids, _ = line.rstrip("\n").split("\t")
    print(json.dumps({"model": gguf, "prompt_ids": [int(i) for i in ids.split(",")], "n": int(sys.argv[2]),
                      "ctx": int(sys.argv[3]),
                      "top_logits": 8, "decode_top_logits": 8, "step_top_logits": 2}))
PYEOF
if $ORACLE batch --threads 1 <"$W/jobs.jsonl" >"$W/oracle.jsonl" 2>"$W/oracle.err"; then
  $PY "$SN_SRC/tests/tools/parity_judge.py" "$W/cases.tsv" "$W/oracle.jsonl" "$RUN" "$N" 2 || sn_fail=$((sn_fail + 1))
else bad "llama.cpp oracle failed: $(tail -2 "$W/oracle.err")"; fi
finish
