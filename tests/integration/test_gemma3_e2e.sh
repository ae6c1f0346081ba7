#!/usr/bin/env bash
# test_gemma3_e2e.sh - a Gemma 3 instruct model through the whole path: gen_gemma3.py (the real
# tokenizer_config.json, so the GGUF carries Gemma 3's chat template) -> sunny-convert q8_0 ->
# sunny-integrate ollama --template auto / lmstudio, --smoke against the fakes (llama.cpp inside) ->
# smoke OK; the Ollama install is Gemma's template (detected, system merged into the first user
# turn) with <end_of_turn> as a stop.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
need_py numpy
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/gemma3-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
$PY "$SN_SRC/tests/fixtures/gen_gemma3.py" --out "$W/hf" >/dev/null || { bad "fixture generation failed"; finish; }
G=$W/gemma3-q8_0.gguf
"$SN_BIN/sunny-convert" "$W/hf" -o "$G" --outtype q8_0 --force >/dev/null 2>&1 || { bad "sunny-convert failed"; finish; }
rm -rf "$W/hf"

start_fake_ollama "$W/f"
out=$("$SI" ollama "$G" --name gemma3-e2e:latest --host "$FAKE_URL" --smoke -n 32 --json 2>"$W/o.err"); rc=$?
if [[ $rc == 0 ]] && grep -q '\[smoke\] OK: \([0-9]*\)/\1 tokens identical' "$W/o.err"; then
  ok "ollama: $(grep -o '\[smoke\] OK.*' "$W/o.err")"
else bad "ollama: rc=$rc $(tail -5 "$W/o.err")"; fi
show=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"gemma3-e2e:latest"}')
t=$($PY -c 'import json,sys; print(json.loads(sys.argv[1]).get("template",""))' "$show")
p=$($PY -c 'import json,sys; print(json.loads(sys.argv[1]).get("parameters",""))' "$show")
[[ $t == *'<start_of_turn>user'* && $t == *'$.System'* && $t != *'<bos>'* ]] &&
  ok "ollama: Gemma 3's template installed (system merged into the first user turn, no BOS in the template)" ||
  bad "ollama template: '$t'"
grep -q 'stop.*<end_of_turn>' <<<"$p" && ok "ollama: <end_of_turn> is a stop" || bad "ollama stops: '$p'"
stop "$FAKE_PID"

M=$W/home/.lmstudio/models
mkdir -p "$W/l"
"$SN_TOOLS/fake-lmstudio" -models "$M" -port-file "$W/l/port" -worker "$SN_SRC/tests/fake-ollama/worker.mjs" 2>"$W/l/stderr" &
SN_PIDS+=("$!")
LMS_URL=http://127.0.0.1:$(wait_port "$W/l/port") || exit 1
out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" lmstudio --gguf "$G" --smoke -n 32 --host "$LMS_URL" --json 2>"$W/l.err"); rc=$?
if [[ $rc == 0 ]] && grep -q '\[smoke\] OK: \([0-9]*\)/\1 tokens identical' "$W/l.err"; then
  ok "lmstudio: $(grep -o '\[smoke\] OK.*' "$W/l.err")"
else bad "lmstudio: rc=$rc $(tail -5 "$W/l.err")"; fi
finish
