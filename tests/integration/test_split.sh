#!/usr/bin/env bash
# test_split.sh - split GGUFs end to end.
#  * sunny-convert --split-max-tensors / --split-max-size write, byte for byte, the shards llama.cpp's
#    gguf-py GGUFWriter writes for the same options (what convert_hf_to_gguf.py uses;
#    tests/tools/gguf_py_split.py re-writes sunny's unsplit file through it);
#  * llama.cpp loads the 3-part model by its first part with the same greedy tokens as the unsplit
#    file, and so does sunny-run (a later part is refused, a missing part named);
#  * sunny-convert --blob reads the split model by its first part;
#  * the fake Ollama (create.go's naming and split.no/split.count rules) accepts the split install, and
#    LM Studio gets all parts placed together.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SC=$SN_BIN/sunny-convert
SR=$SN_BIN/sunny-run
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/split
scratch "$W"
rm -rf "$W"; mkdir -p "$W/s" "$W/ref" "$W/z"
tree=$(llama_tree) || { echo "FAIL - cannot unpack llama.cpp's source bundle"; exit 1; }
src=$(fixture llama3 bf16) && U=$(gguf_of llama3 q8_0) || { echo "FAIL - fixture"; exit 1; }

# --- bytes: gguf-py's writer is the reference
out=$("$SC" "$src" -o "$W/s/q.gguf" --outtype q8_0 --split-max-tensors 8 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "the first of 3 shards" <<<"$out" && [[ ! -e $W/s/q.gguf ]] && ok "--split-max-tensors 8: 3 shards" || bad "split rc=$rc: $out"
refs=$($PY "$SN_SRC/tests/tools/gguf_py_split.py" "$tree" "$U" "$W/ref/q.gguf" --split-max-tensors 8) || bad "gguf_py_split"
n=0; for r in $refs; do cmp -s "$r" "$W/s/$(basename "$r")" && n=$((n + 1)) || bad "$(basename "$r") differs from gguf-py's"; done
[[ $n == 3 ]] && ok "the 3 shards equal gguf-py's GGUFWriter(split_max_tensors=8) byte for byte" || bad "$n of 3 shards equal"
out=$("$SC" "$src" -o "$W/z/q.gguf" --outtype q8_0 --split-max-size 10M 2>&1); rc=$?
refs=$($PY "$SN_SRC/tests/tools/gguf_py_split.py" "$tree" "$U" "$W/ref/z.gguf" --split-max-size 10000000) || bad "gguf_py_split size"
n=0; k=0; for r in $refs; do k=$((k + 1)); b=$(basename "$r"); cmp -s "$r" "$W/z/${b/#z-/q-}" && n=$((n + 1)); done
[[ $rc == 0 && $n == "$k" && $k -gt 1 ]] && ok "--split-max-size 10M: $k shards equal gguf-py's (split_max_size=10000000)" || bad "size split rc=$rc $n/$k: $out"
out=$("$SC" "$src" -o "$W/one.gguf" --outtype q8_0 --split-max-tensors 1000 2>&1)
[[ -f $W/one.gguf ]] && cmp -s "$W/one.gguf" "$U" && ok "a limit nothing reaches: one plain file, as gguf-py" || bad "no split: $out"
out=$("$SC" "$src" -o "$W/x.gguf" --split-max-size 2X 2>&1); rc=$?
[[ $rc == 2 ]] && ok "--split-max-size 2X: usage error" || bad "bad size rc=$rc: $out"

# --- loads: llama.cpp and sunny-run by the first part, same greedy tokens as the unsplit file
F=$W/s/q-00001-of-00003.gguf
printf '%s\n' "{\"model\":\"$U\",\"prompt\":\"The capital of France is\",\"n\":8,\"threads\":1}" \
              "{\"model\":\"$F\",\"prompt\":\"The capital of France is\",\"n\":8,\"threads\":1}" >"$W/jobs.jsonl"
$ORACLE batch --threads 1 <"$W/jobs.jsonl" >"$W/oracle.jsonl" || bad "llama.cpp oracle"
ids() { $PY -c 'import json,sys; print(json.loads(sys.stdin.readlines()[int(sys.argv[1])])["ids"])' "$1" <"$W/oracle.jsonl"; }
lu=$(ids 0); ls_=$(ids 1)
[[ -n $lu && $lu == "$ls_" ]] && ok "llama.cpp: the split model (first part) gives the unsplit file's 8 greedy tokens" || bad "llama.cpp split $ls_ vs $lu"
sids() { "$SR" -m "$1" -p "The capital of France is" -n 8 --temp 0 -t 1 --json 2>/dev/null | $PY -c 'import json,sys; print(json.load(sys.stdin)["ids"])'; }
su=$(sids "$U"); ss=$(sids "$F")
[[ -n $ss && $ss == "$su" && ${ss// /} == "${lu// /}" ]] && ok "sunny-run: the split model's tokens equal the unsplit file's and llama.cpp's" || bad "sunny-run split $ss vs $su vs $lu"
out=$("$SR" -m "$W/s/q-00002-of-00003.gguf" -p hi -n 1 2>&1); rc=$?
[[ $rc != 0 ]] && grep -q "pass the first part" <<<"$out" && ok "sunny-run on part 2: refused, asks for the first" || bad "part 2 rc=$rc: $out"
mkdir -p "$W/miss"; cp "$W/s/q-00001-of-00003.gguf" "$W/s/q-00002-of-00003.gguf" "$W/miss/"
out=$("$SR" -m "$W/miss/q-00001-of-00003.gguf" -p hi -n 1 2>&1); rc=$?
[[ $rc != 0 ]] && grep -q "split part 3 of 3" <<<"$out" && ok "a missing part: named" || bad "missing part rc=$rc: $out"

# --- --blob from the split model: the unsplit file's blob in tokens (the same dequantized weights)
out=$("$SC" "$F" --blob -o "$W/q.snb" --dtype fp32 2>&1); rc=$?
"$SC" "$U" --blob -o "$W/u.snb" --dtype fp32 >/dev/null 2>&1 || bad "blob of the unsplit file"
sb=$(sids "$W/q.snb"); ub=$(sids "$W/u.snb")
[[ $rc == 0 && -n $sb && $sb == "$ub" ]] && ok "--blob reads the split model by its first part: the unsplit file's blob tokens" || bad "blob rc=$rc: $out ($sb vs $ub)"

# --- installs: every part, by the naming the servers check
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
start_fake_ollama "$W/f"
out=$("$SI" ollama "$F" --host "$FAKE_URL" --json 2>"$W/o.err"); rc=$?
[[ $rc == 0 && $(jget <(echo "$out") 'j["split_parts"]') == 3 ]] && grep -q "shard 3 :" "$W/o.err" \
  && ok "Ollama: 3 parts in files under their -0000i-of-00003.gguf names, accepted by create.go's rules" || bad "ollama split rc=$rc: $(tail -5 "$W/o.err")"
stop "$FAKE_PID"
mkdir -p "$W/lms"
out=$("$SI" lmstudio "$F" --models-dir "$W/lms" 2>&1); rc=$?
[[ $rc == 0 && $(ls "$W"/lms/sunny-local/*/ | grep -c -- '-0000[123]-of-00003.gguf$') == 3 ]] \
  && ok "LM Studio: the 3 parts placed together" || bad "lmstudio split rc=$rc: $out"
finish
