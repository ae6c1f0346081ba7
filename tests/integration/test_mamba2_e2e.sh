#!/usr/bin/env bash
# test_mamba2_e2e.sh - a Mamba-2 base model (no chat template) through the whole path:
# gen_mamba2.py -> sunny-convert q8_0 -> sunny-integrate ollama / lmstudio --smoke against the fakes
# (llama.cpp inside) -> smoke OK; a server answering with another model makes the smoke fail. Also the
# recurrent state through sn_abi (tests/tools/abi_state) for n_groups 1 and 2.
# The GGUF has no chat template: sunny-integrate ollama --template auto refuses it and says to pass
# one (checked), so the install gives the raw completion template {{ .Prompt }} as a file.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
need_py numpy
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/mamba2-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
F=$W # its own fixtures: test_mamba2 removes its dir when it passes
mkdir -p "$F"
( flock 9; [[ -f $F/hf-g2/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_mamba2.py" --out "$F/hf-g2" --groups 2 >/dev/null ) 9>"$F/.lock"
G=$F/e2e-g2-q8_0.gguf
"$SN_BIN/sunny-convert" "$F/hf-g2" -o "$G" --outtype q8_0 --force >/dev/null || { bad "sunny-convert failed"; finish; }
G1=$F/e2e-g1-q8_0.gguf
( flock 9; [[ -f $F/hf-g1/model.safetensors ]] || $PY "$SN_SRC/tests/fixtures/gen_mamba2.py" --out "$F/hf-g1" --groups 1 >/dev/null ) 9>"$F/.lock"
"$SN_BIN/sunny-convert" "$F/hf-g1" -o "$G1" --outtype q8_0 --force >/dev/null || { bad "sunny-convert failed"; finish; }

# sn_abi (tests/tools/abi_state, a client of sn_abi.h only): A then B leaves the state bytes and last
# logits of A+B at once (bitwise), the state moved over B, a state saved after A and restored after a
# detour continues with the same logits and 16 greedy tokens, and a corrupt or short state is refused
for g in "$G1" "$G"; do
  if out=$("$SN_BUILD/tests/abi_state" "$g" 9707,11,1879,0,576,3974,13876,38835,35308 916,279,15678,5562,13,16,17 2>&1); then
    ok "sn_abi state $(basename "$g" .gguf): $(tr '\n' ';' <<<"$out")"
  else bad "sn_abi state $(basename "$g" .gguf): $out"; fi
done

printf '{{ .Prompt }}' >"$W/raw.gotmpl"
smoke_pair mamba2 "$G" mamba2-e2e:latest "$W" --template "$W/raw.gotmpl"
out=$("$SI" ollama "$G" --name mamba2-auto:latest --host "$FAKE_URL" 2>&1); rc=$?
# A base model (no tokenizer.chat_template) installs with an explicit raw {{ .Prompt }} TEMPLATE, said so.
[[ $rc == 0 ]] && grep -q 'template: {{ .Prompt }} (raw completion' <<<"$out" && ok "ollama --template auto: a base model gets the raw completion template, said so" ||
  bad "auto template on a base model: rc=$rc $out"
t=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"mamba2-e2e:latest"}' | $PY -c 'import json,sys; print(json.load(sys.stdin).get("template",""))')
[[ $t == '{{ .Prompt }}' ]] && ok "ollama: base model installed with the raw completion template" || bad "ollama template: '$t'"
stop "$FAKE_PID"
start_fake_ollama "$W/f2" -serve-gguf "$G1"
smoke_diverges "ollama serving another Mamba-2: smoke fails" "$G" "$W/div.out" --template "$W/raw.gotmpl"

finish
