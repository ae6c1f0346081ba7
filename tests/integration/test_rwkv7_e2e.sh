#!/usr/bin/env bash
# test_rwkv7_e2e.sh - RWKV-7 into Ollama and LM Studio (fake servers running llama.cpp), and the
# BlinkDL .pth with its world vocabulary given by --vocab.
#
# Fixture: tests/fixtures/gen_rwkv7.py (random weights, the real world vocab), converted to q8_0.
#  1. Ollama 0.33, --template auto: the rwkv-world TEMPLATE ("User: ...\n\nAssistant:") and the stop
#     list ("\n\n", "\nUser:") are stored (read back with /api/show); the smoke gate passes on the raw
#     prompt and on a chat turn through the installed template.
#  2. The server's built-in template instead: Ollama < 0.30 with no TEMPLATE stored renders a chat
#     turn with its default {{ .Prompt }} (the bare text, no User:/Assistant:) - the chat half of the
#     gate must fail; on the same server sunny's explicit world TEMPLATE passes.
#  3. LM Studio: placed, loaded, smoke OK.
#  4. --vocab: a BlinkDL .pth alone in a folder is refused with a message naming --vocab (nothing
#     written); with --vocab tests/fixtures/rwkv_vocab_v20230424.txt the GGUF is byte-identical to
#     the one converted with the vocabulary beside the file.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
need_py torch numpy
SI=$SN_BIN/sunny-integrate
CONV=$SN_BIN/sunny-convert
W=$SN_WORK/rwkv7-e2e
scratch "$W"
FX=$W/fx
mkdir -p "$W"
find "$W" -mindepth 1 -maxdepth 1 ! -name fx -exec rm -rf {} + # a rerun starts clean (the fixture is kept)
[[ -f $FX/fla/model.safetensors && -f $FX/blinkdl/model.pth ]] || $PY "$SN_SRC/tests/fixtures/gen_rwkv7.py" --out "$FX" >/dev/null \
  || { bad "fixture generator failed"; finish; }
G=$W/rwkv7-q8_0.gguf
"$CONV" "$FX/fla" -o "$G" --outtype q8_0 --force >"$W/conv.log" 2>&1 || { bad "sunny-convert failed: $(tail -2 "$W/conv.log")"; finish; }
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
WORLD=$'{{- range .Messages }}\n{{- if eq .Role "user" }}User: {{ .Content }}\n\n{{ else if eq .Role "assistant" }}Assistant: {{ .Content }}\n\n{{ else if eq .Role "system" }}System: {{ .Content }}\n\n{{ end }}\n{{- end }}Assistant:'

# ---- 1. Ollama 0.33, the detected world template
start_fake_ollama "$W/o1"
out=$("$SI" ollama "$G" --name rwkv7-e2e:latest --host "$FAKE_URL" --smoke -n 32 --json 2>"$W/o1.err"); rc=$?
echo "$out" >"$W/o1.json"
grep -q 'template: rwkv-world (detected from gguf, proven byte-identical' "$W/o1.err" && ok "ollama: rwkv-world template detected and proven" \
  || bad "ollama: template: $(grep template: "$W/o1.err")"
curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"rwkv7-e2e:latest"}' >"$W/show.json"
$PY - "$W/show.json" "$WORLD" <<'EOF' && ok "ollama: the stored TEMPLATE is the world template, stops include \"\\n\\n\" and \"\\nUser:\"" || bad "ollama: stored template/stops: $(cat "$W/show.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["template"] == sys.argv[2], repr(j["template"])
stops = [l.split(None, 1)[1] for l in j["parameters"].splitlines() if l.startswith("stop")]
assert '"\\n\\n"' in stops and '"\\nUser:"' in stops, stops
EOF
[[ $rc == 0 ]] && grep -q '^\[smoke\] OK: \([0-9]*\)/\1 tokens identical' "$W/o1.err" \
  && grep -q '^\[smoke\] chat ("What is 2+2?" through the installed template): OK: ' "$W/o1.err" \
  && ok "ollama: smoke OK, raw and through the world template: $(grep -o '^\[smoke\] chat .*' "$W/o1.err")" || bad "ollama smoke rc=$rc: $(grep smoke "$W/o1.err")"
stop "$FAKE_PID"

# ---- 2. the server's own template: no TEMPLATE on Ollama 0.24 -> {{ .Prompt }}; the gate must fail
start_fake_ollama "$W/o2" -version 0.24.0
out=$("$SI" ollama "$G" --name rwkv7-builtin:latest --host "$FAKE_URL" --template jinja --smoke -n 32 2>&1); rc=$?
echo "$out" >"$W/o2.out"
[[ $rc == 1 ]] && grep -q '^\[smoke\] OK: ' <<<"$out" && grep -q '^\[smoke\] chat (.*): DIVERGED' <<<"$out" \
  && ok "server's built-in template ({{ .Prompt }}): the chat gate fails: $(grep -o 'DIVERGED before generation: .*' <<<"$out")" \
  || bad "built-in template: rc=$rc $(grep smoke <<<"$out")"
out=$("$SI" ollama "$G" --name rwkv7-world:latest --host "$FAKE_URL" --smoke -n 32 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '^\[smoke\] chat (.*): OK: ' <<<"$out" && ok "same server, sunny's explicit world TEMPLATE: the chat gate passes" \
  || bad "explicit world template on 0.24: rc=$rc $(grep smoke <<<"$out")"
stop "$FAKE_PID"

# ---- 3. LM Studio
mkdir -p "$W/home/.lmstudio/models" "$W/l"
"$SN_TOOLS/fake-lmstudio" -models "$W/home/.lmstudio/models" -port-file "$W/l/port" \
  -worker "$SN_SRC/tests/fake-ollama/worker.mjs" 2>"$W/l/stderr" &
LMS_PID=$!; SN_PIDS+=("$LMS_PID")
LMS_URL=http://127.0.0.1:$(wait_port "$W/l/port") || exit 1
out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" lmstudio --gguf "$G" --smoke -n 32 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '\[smoke\] OK: \([0-9]*\)/\1 tokens identical' <<<"$out" \
  && ok "lmstudio: $(grep -o '\[smoke\] OK.*' <<<"$out")" || bad "lmstudio smoke: rc=$rc $(tail -3 <<<"$out")"
stop "$LMS_PID"

# ---- 4. BlinkDL .pth without its vocabulary beside it: --vocab
mkdir -p "$W/pth-alone"
ln -sf "$FX/blinkdl/model.pth" "$W/pth-alone/model.pth"
rm -f "$W/alone.gguf"
out=$("$CONV" "$W/pth-alone/model.pth" -o "$W/alone.gguf" --outtype q8_0 2>&1); rc=$?
[[ $rc == 1 && ! -e $W/alone.gguf ]] && grep -q 'give it with --vocab FILE' <<<"$out" && grep -q 'rwkv_vocab_v20230424.txt' <<<"$out" \
  && ok "BlinkDL .pth alone: refused, names the missing vocabulary and --vocab, nothing written" || bad "pth without vocab: rc=$rc $out"
"$CONV" "$FX/blinkdl/model.pth" --name rwkv7-pth -o "$W/beside.gguf" --outtype q8_0 --force >/dev/null 2>&1 || bad "convert .pth (vocab beside) failed"
out=$("$CONV" "$W/pth-alone/model.pth" --vocab "$SN_SRC/tests/fixtures/rwkv_vocab_v20230424.txt" --name rwkv7-pth \
      -o "$W/alone.gguf" --outtype q8_0 --force 2>&1); rc=$?
[[ $rc == 0 ]] && cmp -s "$W/beside.gguf" "$W/alone.gguf" \
  && ok "--vocab FILE: the .pth converts to a GGUF byte-identical to the one with the vocabulary beside it" || bad "--vocab rc=$rc: $out"
out=$("$CONV" "$FX/fla" --vocab "$W/none.txt" -o "$W/x.gguf" --outtype q8_0 --force 2>&1); rc=$?
[[ $rc == 1 && ! -e $W/x.gguf ]] && grep -q 'none.txt' <<<"$out" && ok "--vocab naming a missing file: exit 1 naming it" || bad "--vocab missing file rc=$rc: $out"
finish
