#!/usr/bin/env bash
# test_sample_parity.sh - with --temp > 0, sunny-run must sample llama.cpp's tokens for the same seed.
#
# node-llama-cpp's evaluate() builds the chain top-k -> top-p -> min-p -> temperature -> dist(seed)
# (no repeat penalty; top-k 0 means the whole vocabulary; defaults top-k 40, top-p 0.95, min-p 0),
# the same order as runtime/sampler.c. On tiny random-weight fixtures (llama3 f32, mistral f16; both
# engines on 1 thread, where greedy parity is bit-exact) 32 tokens of
#   sunny-run GGUF --prompt-ids ... -n 32 --temp T [--top-k K] [--top-p P] --seed S --json --ignore-eos
# must equal llama_oracle.mjs sample's for each setting. So that a sampler that ignores a knob cannot
# pass, the test also asserts that changing only the seed, only top-p or only top-k changes llama.cpp's
# tokens (and therefore ours), and that seed 4294967295 (LLAMA_DEFAULT_SEED) is random, as there.
# The repetition penalties (--repeat-penalty, --repeat-last-n, --presence-penalty,
# --frequency-penalty) against llama.cpp's own penalties sampler, which node-llama-cpp puts first in
# the chain over the last N tokens, prompt included (as llama-cli accepts the prompt): sampled and
# greedy, each shown to change llama.cpp's tokens.
# GGUFs are written by tests/tools/rt_hf2gguf.py (+ rt_quantize for f16) so sunny-convert is not involved.
source "$(dirname "$0")/lib.sh"
need_oracle
W=$SN_WORK/sample_parity
scratch "$W"
mkdir -p "$W"
RUN=$SN_BIN/sunny-run
QUANT=$SN_BUILD/tests/rt_quantize
[[ -x $RUN ]] || { echo "missing $RUN"; exit 1; }
N=32

gguf() { # family dtype -> path
    local d g=$W/$1-$2.gguf f32=$W/$1-f32.gguf
    if [[ ! -f $g ]]; then
        d=$(fixture "$1" f32) || return 1
        [[ -f $f32 ]] || $PY "$SN_SRC/tests/tools/rt_hf2gguf.py" "$d" "$f32" >/dev/null || return 1
        if [[ $2 != f32 ]]; then
            [[ -x $QUANT ]] || { echo "missing $QUANT" >&2; return 1; }
            "$QUANT" "$f32" "$g" "$2" >/dev/null || return 1
        fi
    fi
    echo "$g"
}

# tag  family dtype  temp top_k top_p seed min_p [repeat/last_n/presence/frequency]
# ("-" = flag omitted on both sides: each side's default)
CASES="
a        llama3 f32 0.7 40 0.9 42 -
seed     llama3 f32 0.7 40 0.9 43 -
topp     llama3 f32 0.7 40 1 42 -
hot      llama3 f32 1.5 0 1 7 -
topk     llama3 f32 1.5 5 1 7 -
ponly    llama3 f32 1.0 0 0.5 1234 -
cold     llama3 f32 0.3 5 1 0 -
defaults llama3 f32 0.8 - - 4294967294 -
m-a      mistral f16 0.7 40 0.9 42 -
m-hot    mistral f16 1.5 0 1 7 -
m-seed   mistral f16 1.5 0 1 8 -
"
CASES+="
minp     llama3 f32 2.0 0 1 11 0.02
minp0    llama3 f32 2.0 0 1 11 0
minp-all llama3 f32 1.5 40 0.95 7 0.1
pen      llama3 f32 1.0 40 1 42 - 1.3/16/0.5/0.3
pen0     llama3 f32 1.0 40 1 42 -
pen-g    llama3 f32 0 - - 42 - 0.5/64/-1/0
pen-g0   llama3 f32 0 - - 42 -
"
P_LLAMA3="128000,791,3938,315,9822,374"
P_MISTRAL="1,$(seq -s, 300 320)"

declare -A G
for fd in "llama3 f32" "mistral f16"; do
    set -- $fd
    G[$1-$2]=$(gguf "$1" "$2") || { bad "could not build the $1 $2 fixture GGUF"; finish; }
done

# llama.cpp: one oracle process per GGUF, jobs in case order
declare -A OURS THEIRS
for key in llama3-f32 mistral-f16; do
    jobs=$W/$key.jobs.jsonl
    : >"$jobs"
    while read -r tag fam dt t k p s m pen; do
        [[ -z $tag || $fam-$dt != "$key" ]] && continue
        [[ $fam == llama3 ]] && ids=$P_LLAMA3 || ids=$P_MISTRAL
        $PY -c 'import json,sys; t,k,p,s,m,ids,n,tag,pen=sys.argv[1:]
j={"tag":tag,"prompt_ids":[int(i) for i in ids.split(",")],"n":int(n),"temp":float(t),"seed":int(s)}
if k!="-": j["top_k"]=int(k)
if p!="-": j["top_p"]=float(p)
if m!="-": j["min_p"]=float(m)
if pen:
    r,l,pr,fr=pen.split("/")
    j.update(repeat_penalty=float(r),repeat_last_n=int(l),presence_penalty=float(pr),frequency_penalty=float(fr))
print(json.dumps(j))' "$t" "$k" "$p" "$s" "$m" "$ids" $N "$tag" "${pen:-}" >>"$jobs"
    done <<<"$CASES"
    $ORACLE sample "${G[$key]}" --threads 1 <"$jobs" >"$W/$key.oracle.jsonl" || { bad "llama_oracle.mjs sample failed on ${G[$key]}"; finish; }
    while read -r line; do
        tag=$($PY -c 'import json,sys; print(json.loads(sys.argv[1])["tag"])' "$line")
        THEIRS[$tag]=$($PY -c 'import json,sys; print(",".join(map(str, json.loads(sys.argv[1])["ids"])))' "$line")
    done <"$W/$key.oracle.jsonl"
done

# sunny-run, same settings
while read -r tag fam dt t k p s m pen; do
    [[ -z $tag ]] && continue
    [[ $fam == llama3 ]] && ids=$P_LLAMA3 || ids=$P_MISTRAL
    flags=(--temp "$t" --seed "$s")
    [[ $k != - ]] && flags+=(--top-k "$k")
    [[ $p != - ]] && flags+=(--top-p "$p")
    [[ $m != - ]] && flags+=(--min-p "$m")
    if [[ -n ${pen:-} ]]; then
        IFS=/ read -r pr pl pp pf <<<"$pen"
        flags+=(--repeat-penalty "$pr" --repeat-last-n "$pl" --presence-penalty "$pp" --frequency-penalty "$pf")
    fi
    if ! out=$("$RUN" "${G[$fam-$dt]}" --prompt-ids "$ids" -n $N -t 1 "${flags[@]}" --json --ignore-eos); then
        bad "$tag: sunny-run failed"
        continue
    fi
    OURS[$tag]=$($PY -c 'import json,sys; print(",".join(map(str, json.loads(sys.argv[1])["ids"])))' "$out")
    theirs=${THEIRS[$tag]:-}
    desc="$tag ($fam $dt: temp $t top-k $k top-p $p seed $s$([[ $m != - ]] && echo " min-p $m")$([[ -n ${pen:-} ]] && echo " penalties $pen"))"
    if [[ -z $theirs ]]; then
        bad "$desc: no answer from llama.cpp"
    elif [[ ${OURS[$tag]} == "$theirs" ]]; then
        n=$(tr ',' '\n' <<<"$theirs" | wc -l)
        distinct=$(tr ',' '\n' <<<"$theirs" | sort -u | wc -l)
        if ((n == N)); then ok "$desc: $n tokens equal llama.cpp's ($distinct distinct)"
        else bad "$desc: only $n tokens"; fi
    else
        $PY - "${OURS[$tag]}" "$theirs" "$desc" <<'EOF'
import sys
a, b = sys.argv[1].split(","), sys.argv[2].split(",")
i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
print(f"  {sys.argv[3]}: first difference at step {i}: ours {a[i:i+4]} llama.cpp {b[i:i+4]}")
EOF
        bad "$desc: sampled tokens differ from llama.cpp's"
    fi
done <<<"$CASES"

# Each knob must matter to llama.cpp's sampler on these settings, or the matches above prove little.
differs() { # tagA tagB what
    if [[ -n ${THEIRS[$1]:-} && ${THEIRS[$1]} != "${THEIRS[$2]:-}" ]]; then ok "$3 changes llama.cpp's tokens ($1 vs $2)"
    else bad "$3 does not change llama.cpp's tokens ($1 vs $2): the comparison cannot catch a sampler ignoring it"; fi
}
differs a seed "the seed"
differs a topp "top-p"
differs hot topk "top-k"
differs m-hot m-seed "the seed (mistral)"
differs minp minp0 "min-p"
differs pen pen0 "the penalties (sampled)"
differs pen-g pen-g0 "the repeat penalty (greedy)"

# Seed 4294967295 is llama.cpp's LLAMA_DEFAULT_SEED, "seed from the clock": two runs must differ.
r1=$("$RUN" "${G[llama3-f32]}" --prompt-ids "$P_LLAMA3" -n 8 --temp 1 --top-k 0 --seed 4294967295 --json --ignore-eos)
r2=$("$RUN" "${G[llama3-f32]}" --prompt-ids "$P_LLAMA3" -n 8 --temp 1 --top-k 0 --seed 4294967295 --json --ignore-eos)
if [[ -n $r1 && $r1 != "$r2" ]]; then ok "seed 4294967295 is random, as llama.cpp's LLAMA_DEFAULT_SEED"
else bad "seed 4294967295 gave the same tokens twice (llama.cpp seeds from the clock)"; fi
finish
