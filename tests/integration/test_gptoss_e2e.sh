#!/usr/bin/env bash
# test_gptoss_e2e.sh - a gpt-oss model installed into the fake Ollama and LM Studio, and what each
# server does with its harmony template.
#
# Fixture: tests/fixtures/gen_gptoss.py (MXFP4 experts, the o200k_harmony tokenizer, the published
# harmony chat_template.jinja) -> sunny-convert q8_0 (the experts stay MXFP4).
#  - Ollama (fake, 0.33) with no TEMPLATE (--template jinja): shouldUseHarmony (server/routes.go) is
#    false, the server renders the GGUF's harmony Jinja, and its prompt (_debug_render_only) must equal
#    sunny's rendering of that Jinja byte for byte; sunny says harmony is not used and why.
#  - Ollama with a harmony Go TEMPLATE (<|start|> ... <|end|>): shouldUseHarmony is true, so the
#    server renders with that TEMPLATE although the Jinja exposes more capabilities (without the rule
#    the fake would pick the Jinja: shouldPreferChatTemplate); sunny says so, and its render check
#    reports that the server's prompt is not the Jinja's; the prompt is the TEMPLATE's (Go's
#    text/template through tests/tools/render_go).
#  - the smoke gate (raw generate through the server's llama.cpp, token by token against sunny-run)
#    passes, and fails when the server serves another gpt-oss;
#  - LM Studio: placed under <models>/<publisher>/<repo>/, smoke OK; doctor --lmstudio names the
#    harmony template's own "Cannot pass both content and thinking" check (lmstudio-bug-tracker #842).
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
need_py numpy
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/gptoss-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
build_go "$SN_SRC/tests/tools/render_go" render_go
$PY "$SN_SRC/tests/fixtures/gen_gptoss.py" --out "$W/hf" >/dev/null &&
  $PY "$SN_SRC/tests/fixtures/gen_gptoss.py" --out "$W/hf-other" --seed 7 >/dev/null || { bad "fixture"; finish; }
G=$W/gptoss-q8_0.gguf G2=$W/other-q8_0.gguf
"$SN_BIN/sunny-convert" "$W/hf" -o "$G" --outtype q8_0 --force >/dev/null 2>&1 &&
  "$SN_BIN/sunny-convert" "$W/hf-other" -o "$G2" --outtype q8_0 --force >/dev/null 2>&1 || { bad "sunny-convert failed"; finish; }

# ---- Ollama, no TEMPLATE: the GGUF's harmony Jinja, rendered by the server
start_fake_ollama "$W/o1"
smoke_ollama "ollama, no TEMPLATE (raw generate against sunny-run)" "$G" gptoss-jinja "$W/o1.out" --template jinja
grep -q "^render  : the server's prompt (_debug_render_only) is byte-identical to the GGUF's Jinja" "$W/o1.out" \
  && grep -q '^harmony : not used: .*shouldUseHarmony.*the server renders the GGUF.s own harmony Jinja' "$W/o1.out" \
  && ok "ollama, no TEMPLATE: the server's rendering of the harmony Jinja equals sunny's byte for byte; harmony not used, said so" \
  || bad "ollama --template jinja: $(grep -E 'render|harmony|error' "$W/o1.out" | head -5)"

# ---- Ollama, a harmony Go TEMPLATE: shouldUseHarmony -> the TEMPLATE renders
cat >"$W/harmony.gotmpl" <<'EOF'
<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.
Knowledge cutoff: 2024-06

Reasoning: medium

# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>
{{- range .Messages }}
{{- if eq .Role "system" }}<|start|>developer<|message|># Instructions

{{ .Content }}<|end|>
{{- else if eq .Role "user" }}<|start|>user<|message|>{{ .Content }}<|end|>
{{- else if eq .Role "assistant" }}<|start|>assistant<|channel|>final<|message|>{{ .Content }}<|end|>
{{- end }}
{{- end }}<|start|>assistant
EOF
out=$("$SI" ollama "$G" --name gptoss-harmony --host "$FAKE_URL" --template "$W/harmony.gotmpl" 2>&1); rc=$?
echo "$out" >"$W/o2.out"
[[ $rc == 0 ]] && grep -q '^harmony : this TEMPLATE holds <|start|> and <|end|>, so Ollama runs this gpt-oss model as harmony (server/routes.go shouldUseHarmony)' <<<"$out" \
  && grep -q "the server renders the prompt differently from the GGUF's Jinja" <<<"$out" \
  && ok "ollama, harmony TEMPLATE: installed; sunny says the TEMPLATE renders (harmony) and that it is not the Jinja" \
  || bad "ollama harmony TEMPLATE rc=$rc: $(grep -E 'render|harmony|error' <<<"$out" | head -5)"
curl -s "$FAKE_URL/api/generate" -d '{"model":"gptoss-harmony","prompt":"What is 2+2?","stream":false,"_debug_render_only":true}' \
  | $PY -c "import json, sys; sys.stdout.write(json.load(sys.stdin)['_debug_info']['rendered_template'])" >"$W/srv.txt" 2>/dev/null
printf '%s' '{"conversations":[{"name":"q","messages":[{"role":"user","content":"What is 2+2?"}]}]}' >"$W/conv.json"
mkdir -p "$W/go"
"$SN_TOOLS/render_go" -template "$W/harmony.gotmpl" -conversations "$W/conv.json" -out "$W/go" 2>"$W/go.err"
cp "$W/go/q.txt" "$W/go.txt" 2>/dev/null
if [[ -s $W/srv.txt ]] && cmp -s "$W/srv.txt" "$W/go.txt"; then
  ok "ollama, harmony TEMPLATE: the server's prompt is the TEMPLATE's (Go text/template), $(wc -c <"$W/go.txt") bytes"
else bad "ollama harmony prompt: server '$(head -c 120 "$W/srv.txt")' vs Go '$(head -c 120 "$W/go.txt")' $(head -2 "$W/go.err")"; fi
stop "$FAKE_PID"
start_fake_ollama "$W/o3" -serve-gguf "$G2"
smoke_diverges "ollama serving another gpt-oss: the smoke gate fails" "$G" "$W/div.out" --template jinja
stop "$FAKE_PID"

# ---- LM Studio: placed, smoke gate; doctor names the harmony template's own check (#842)
start_fake_lmstudio "$W/home" "$W/l"
smoke_lmstudio lmstudio "$G" "$W/home" "$W/l.out" --user-repo sunny/gptoss-GGUF; rc=$?
placed=$(find "$W/home/.lmstudio/models" -name '*.gguf' | head -1)
[[ $rc == 0 && -n $placed ]] && cmp -s "$placed" "$G" && ok "lmstudio: placed as $(sed "s|$W/home/||" <<<"$placed")" ||
  bad "lmstudio placement: $(tail -3 "$W/l.out")"
out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" doctor --lmstudio "$placed" 2>&1)
grep -q 'note: a harmony (gpt-oss) template: it raises "Cannot pass both content and thinking in an assistant message with tool calls!".*lmstudio-bug-tracker #842' <<<"$out" \
  && ok "doctor --lmstudio: the harmony template's #842 check named" || bad "doctor --lmstudio: $(head -c 600 <<<"$out")"
finish
