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
W=$SN_WORK/gemma3-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
$PY "$SN_SRC/tests/fixtures/gen_gemma3.py" --out "$W/hf" >/dev/null || { bad "fixture generation failed"; finish; }
G=$W/gemma3-q8_0.gguf
"$SN_BIN/sunny-convert" "$W/hf" -o "$G" --outtype q8_0 --force >/dev/null 2>&1 || { bad "sunny-convert failed"; finish; }
rm -rf "$W/hf"

smoke_pair gemma3 "$G" gemma3-e2e:latest "$W"
show=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"gemma3-e2e:latest"}')
t=$($PY -c 'import json,sys; print(json.loads(sys.argv[1]).get("template",""))' "$show")
p=$($PY -c 'import json,sys; print(json.loads(sys.argv[1]).get("parameters",""))' "$show")
[[ $t == *'<start_of_turn>user'* && $t == *'$.System'* && $t != *'<bos>'* ]] &&
  ok "ollama: Gemma 3's template installed (system merged into the first user turn, no BOS in the template)" ||
  bad "ollama template: '$t'"
grep -q 'stop.*<end_of_turn>' <<<"$p" && ok "ollama: <end_of_turn> is a stop" || bad "ollama stops: '$p'"
finish
