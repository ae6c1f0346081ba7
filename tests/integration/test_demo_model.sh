#!/usr/bin/env bash
# test_demo_model.sh - the demo's model generator (scripts/demo_model.c: random-weight RWKV-7 in
# fla-hub's HF layout, written in C so `make demo` needs no Python) makes a folder the real tools
# read, at the size the demo uses.
#  1. The same arguments give the same bytes, another seed others. model.safetensors is parsed here
#     independently (struct + json) against the layout Hugging Face's safetensors library writes:
#     header length a multiple of 8, padded with spaces, compact JSON, "__metadata__" first, tensors
#     by (descending dtype alignment, name), data_offsets contiguous from 0 to the end of the file,
#     each tensor's data aligned to its element size.
#  2. llama.cpp's own converter (tests/tools/lcpp_convert.py) reads the folder and writes the same
#     keys and tensors as sunny-convert (f16; the chat template aside: with no template in the folder
#     each writes its own world template, compared by rendering in test_rwkv7.sh).
#  3. llama.cpp (node-llama-cpp) loads sunny's f16 GGUF, tokenizes the demo's prompt like sunny-run
#     and greedy-decodes the same 24 tokens (the demo's parity check); the output is diverse
#     (>= 8 distinct tokens of 24), so the parity is not a model repeating one token.
#  4. Bad arguments exit 2; an existing model is not overwritten without --force; a missing vocabulary
#     exits 1 naming it; SIGINT mid-write leaves no NAME.tmp and no partial model.safetensors.
#  5. A guard: scripts/demo.sh and the Makefile's demo recipe name no Python.
source "$(dirname "$0")/lib.sh"
need_oracle
need_py torch numpy
GEN=$SN_BUILD/scripts/demo_model
CONV=$SN_BIN/sunny-convert
RUN=$SN_BIN/sunny-run
W=$SN_WORK/demo-model
scratch "$W"
PROMPT="The quick brown fox" # scripts/demo.sh's
N=24
rm -rf "$W" && mkdir -p "$W"

# ---- 1. the generator and its safetensors layout
"$GEN" --out "$W/hf" >"$W/gen.log" 2>&1 || { bad "demo_model failed: $(tail -2 "$W/gen.log")"; finish; }
ok "demo_model (the demo's defaults): $(cat "$W/gen.log")"
"$GEN" --out "$W/again" >/dev/null 2>&1 && cmp -s "$W/hf/model.safetensors" "$W/again/model.safetensors" \
  && cmp -s "$W/hf/config.json" "$W/again/config.json" && ok "the same arguments write the same bytes" \
  || bad "two runs with the same arguments differ"
"$GEN" --out "$W/again" --seed 8 --force >/dev/null 2>&1 && ! cmp -s "$W/hf/model.safetensors" "$W/again/model.safetensors" \
  && ok "--seed 8 writes other weights" || bad "--seed 8 wrote the same weights (or failed)"
rm -rf "$W/again"
cmp -s "$W/hf/rwkv_vocab_v20230424.txt" "$SN_SRC/tests/fixtures/rwkv_vocab_v20230424.txt" \
  && ok "the folder carries the repo's RWKV world vocabulary" || bad "rwkv_vocab_v20230424.txt differs from the repo's"
if out=$($PY - "$W/hf/model.safetensors" 2>&1 <<'EOF'
import json, os, struct, sys
p = sys.argv[1]
size = os.path.getsize(p)
with open(p, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    raw = f.read(n)
assert n % 8 == 0, f"header length {n} is not a multiple of 8"
text = raw.decode("utf-8")
body = text.rstrip(" ")
assert len(text) - len(body) < 8, "more padding than needed to reach a multiple of 8"
h = json.loads(body)
assert json.dumps(h, separators=(",", ":")) == body, "header is not compact JSON"
keys = list(h)
assert keys[0] == "__metadata__" and h["__metadata__"] == {"format": "pt"}, keys[0]
# safetensors' Dtype enum order (tensor.rs), the sort key with the name
order = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"]
esize = {"F16": 2, "BF16": 2, "F32": 4}
names = keys[1:]
assert names == sorted(names, key=lambda k: (-order.index(h[k]["dtype"]), k)), "tensors not in HF's order"
off = 0
for k in names:
    t = h[k]
    b, e = t["data_offsets"]
    cnt = 1
    for d in t["shape"]:
        cnt *= d
    assert b == off and e - b == cnt * esize[t["dtype"]], f"{k}: offsets {b},{e}, expected {off},{off + cnt * esize[t['dtype']]}"
    assert (8 + n + b) % esize[t["dtype"]] == 0, f"{k}: data not aligned"
    off = e
assert 8 + n + off == size, f"data ends at {8 + n + off}, the file at {size}"
print(f"{len(names)} tensors, header {n} bytes, data {off} bytes = the file's end")
EOF
); then ok "model.safetensors has HF's layout: $out"; else bad "model.safetensors layout: $out"; fi

# ---- 2. llama.cpp's converter reads the folder as sunny-convert does
"$CONV" "$W/hf" -o "$W/sn-f16.gguf" --outtype f16 >"$W/conv.log" 2>&1 || { bad "sunny-convert f16 failed: $(tail -2 "$W/conv.log")"; finish; }
LCPP=${LLAMA_CPP_SRC:-$(llama_tree)}
if $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" "$W/hf" "$W/lc-f16.gguf" f16 >"$W/lc.log" 2>&1; then
  if out=$($PY "$SN_SRC/tests/tools/gguf_diff.py" --gguf-py "$LCPP/gguf-py" "$W/lc-f16.gguf" "$W/sn-f16.gguf" \
             --ignore-key tokenizer.chat_template 2>&1); then
    ok "llama.cpp's converter reads the folder: keys and tensors equal sunny-convert's: $(tail -1 <<<"$out")"
  else bad "llama.cpp's converter and sunny-convert differ on the demo folder:"; echo "$out" | tail -6; fi
else
  bad "llama.cpp's converter cannot read the demo folder: $(tail -3 "$W/lc.log")"
fi
rm -f "$W/lc-f16.gguf"

# ---- 3. llama.cpp runs sunny's GGUF: the same greedy tokens, and diverse ones
ids=$("$RUN" "$W/sn-f16.gguf" --tokenize -p "$PROMPT" | tr ' ' ',')
lc_ids=$(printf '"%s"\n' "$PROMPT" | $ORACLE tokenize "$W/sn-f16.gguf" 2>"$W/tok.err" | tr -d '[]')
[[ -n $ids && $ids == "$lc_ids" ]] && ok "prompt \"$PROMPT\" tokenized like llama.cpp: $ids" \
  || bad "prompt tokens: sunny $ids, llama.cpp $lc_ids $(tail -1 "$W/tok.err")"
# decode_top_logits: one controlled step per token, so an end-of-text token does not end llama.cpp's
# run early (sunny-run runs with --ignore-eos), as in scripts/demo.sh
printf '{"model":"%s","prompt_ids":[%s],"n":%d,"decode_top_logits":1}\n' "$W/sn-f16.gguf" "$ids" $N >"$W/jobs.jsonl"
# (llama.cpp on 1 thread: far below 256 cached positions its answer does not depend on the count)
if $ORACLE batch --threads 1 <"$W/jobs.jsonl" >"$W/llama.json" 2>"$W/llama.err"; then
  want=$(sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p' "$W/llama.json")
  "$RUN" "$W/sn-f16.gguf" --prompt-ids "$ids" -n $N -t 2 --ignore-eos --json >"$W/sunny.json" 2>"$W/sunny.err" \
    || bad "sunny-run failed: $(tail -1 "$W/sunny.err")"
  got=$(sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p' "$W/sunny.json")
  distinct=$(tr ',' '\n' <<<"$want" | sort -u | grep -c .)
  [[ -n $want && $got == "$want" ]] && ok "llama.cpp loads sunny's f16 GGUF and greedy-decodes the same $N tokens as sunny-run" \
    || bad "greedy tokens: sunny $got, llama.cpp $want"
  ((distinct >= 8)) && ok "greedy output is diverse: $distinct distinct tokens of $N" \
    || bad "greedy output repeats itself: $distinct distinct tokens of $N ($want)"
else
  bad "llama.cpp did not run the demo GGUF: $(tail -2 "$W/llama.err")"
fi

# ---- 4. errors and interrupts
"$GEN" --out "$W/x" --hidden 100 >/dev/null 2>"$W/e1"; rc=$?
[[ $rc == 2 && ! -e $W/x ]] && grep -q -- '--hidden' "$W/e1" && ok "--hidden 100: usage error (exit 2) naming the option" || bad "--hidden 100: rc=$rc $(cat "$W/e1")"
before=$(stat -c %Y.%s "$W/hf/model.safetensors")
"$GEN" --out "$W/hf" --seed 9 >/dev/null 2>"$W/e2"; rc=$?
[[ $rc == 1 && $(stat -c %Y.%s "$W/hf/model.safetensors") == "$before" ]] && grep -q -- '--force' "$W/e2" \
  && ok "an existing model is kept without --force (exit 1: $(cat "$W/e2"))" || bad "existing model: rc=$rc $(cat "$W/e2")"
"$GEN" --out "$W/nv" --vocab "$W/none.txt" >/dev/null 2>"$W/e3"; rc=$?
[[ $rc == 1 && ! -e $W/nv/config.json ]] && grep -q 'none.txt' "$W/e3" && ok "a missing --vocab: exit 1 naming it, no model written" \
  || bad "missing vocab: rc=$rc $(cat "$W/e3")"
# ~1.7 GB of bf16 (hidden 1024, 64 layers): long enough to interrupt mid-write; bounded so that a broken
# SIGINT handler costs a minute and 2 GB at most, not the disk (timeout kills it, and the test fails)
"$GEN" --out "$W/big" --hidden 1024 --layers 64 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s $W/big/model.safetensors.tmp ]] && break; sleep 0.05; done
kill -INT "$pid"
for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$pid" 2>/dev/null
wait "$pid"; rc=$?
left=$(ls -A "$W/big" 2>/dev/null | grep -v '^rwkv_vocab_v20230424.txt$' | tr '\n' ' ')
[[ $rc == 130 && -z $left ]] && ok "SIGINT mid-write: exit 130, no .tmp and no partial model.safetensors left" \
  || bad "SIGINT: rc=$rc, left: $left"
rm -rf "$W/big"

# ---- 5. the demo's own path names no Python (a guard; tests/tools/demo_chroot.sh runs `make demo` on
# a machine without Python/npm by hand): scripts/demo.sh and the Makefile's demo recipe
recipe=$(sed -n '/^demo:/,/^$/p' "$SN_SRC/Makefile")
if hits=$(grep -nE 'python|numpy|\$PY\b|gen_model|gen_rwkv7' "$SN_SRC/scripts/demo.sh" - <<<"$recipe"); then
  bad "the demo path calls Python: $hits"
else ok "scripts/demo.sh and the Makefile's demo recipe name no Python, numpy or Python fixture generator"; fi
finish
