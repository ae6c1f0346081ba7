#!/usr/bin/env bash
# test_qwen35_e2e.sh - Qwen3.5 models (qwen35, and the mixture of experts qwen35moe) through the whole
# path: gen_qwen35.py with the real Qwen3.5 chat template (thinking, XML tool calls; llama.cpp's
# models/templates/Qwen3.5-4B.jinja, in tests/fixtures/templates) -> sunny-convert q8_0 ->
# sunny-integrate ollama / lmstudio --smoke against the fakes (llama.cpp inside) -> smoke OK.
#  - Ollama >= 0.30 renders the GGUF's own Jinja when no TEMPLATE is sent (--template jinja): the raw
#    smoke must pass and the server's rendered prompt (_debug_render_only) must equal sunny's Jinja
#    rendering byte for byte (dense and MoE);
#  - a fake Ollama serving another model makes the smoke fail;
#  - LM Studio: placed under ~/.lmstudio/models, smoke OK (dense and MoE).
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
need_py numpy
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/qwen35-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
$PY "$SN_SRC/tests/fixtures/gen_qwen35.py" --out "$W/hf" \
  --chat-template "$SN_SRC/tests/fixtures/templates/llamacpp-Qwen3.5-4B.jinja" >/dev/null || { bad "fixture"; finish; }
$PY "$SN_SRC/tests/fixtures/gen_qwen35.py" --out "$W/hf-moe" --moe \
  --chat-template "$SN_SRC/tests/fixtures/templates/llamacpp-Qwen3.5-4B.jinja" >/dev/null || { bad "fixture"; finish; }
$PY "$SN_SRC/tests/fixtures/gen_qwen35.py" --out "$W/hf-other" --seed 7 >/dev/null || { bad "fixture"; finish; }
G=$W/qwen35-q8_0.gguf GM=$W/qwen35moe-q8_0.gguf G2=$W/other-q8_0.gguf
"$SN_BIN/sunny-convert" "$W/hf" -o "$G" --outtype q8_0 --force >/dev/null 2>&1 &&
  "$SN_BIN/sunny-convert" "$W/hf-moe" -o "$GM" --outtype q8_0 --force >/dev/null 2>&1 &&
  "$SN_BIN/sunny-convert" "$W/hf-other" -o "$G2" --outtype q8_0 --force >/dev/null 2>&1 || { bad "sunny-convert failed"; finish; }

# ---- Ollama: the GGUF's Jinja (Ollama >= 0.30), one fake server for both models
start_fake_ollama "$W/o1"
for m in "qwen35 $G" "qwen35moe $GM"; do
  set -- $m
  out=$("$SI" ollama "$2" --name $1-e2e:latest --host "$FAKE_URL" --template jinja --smoke -n 32 2>&1); rc=$?
  echo "$out" >"$W/o1-$1.out"
  [[ $rc == 0 ]] && grep -q '^\[smoke\] OK: \([0-9]*\)/\1 tokens identical' <<<"$out" \
    && grep -q "^render  : the server's prompt (_debug_render_only) is byte-identical to the GGUF's Jinja" <<<"$out" \
    && ok "$1: ollama --template jinja: smoke OK, the server's rendering of the Qwen3.5 Jinja equals sunny's byte for byte" \
    || bad "$1: ollama jinja smoke rc=$rc: $(grep -E 'smoke|error|template' <<<"$out" | head -5)"
done
stop "$FAKE_PID"
start_fake_ollama "$W/o2" -serve-gguf "$G2"
out=$("$SI" ollama "$G" --name qwen35-div --host "$FAKE_URL" --template jinja --smoke -n 32 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q '\[smoke\] DIVERGED' <<<"$out" && ok "ollama serving another Qwen3.5: smoke fails" \
  || bad "divergent rc=$rc: $(grep smoke <<<"$out" | head -3)"
stop "$FAKE_PID"

# ---- LM Studio
mkdir -p "$W/l"
"$SN_TOOLS/fake-lmstudio" -models "$W/home/.lmstudio/models" -port-file "$W/l/port" \
  -worker "$SN_SRC/tests/fake-ollama/worker.mjs" 2>"$W/l/stderr" &
SN_PIDS+=("$!")
LMS_URL=http://127.0.0.1:$(wait_port "$W/l/port") || exit 1
for m in "qwen35 $G" "qwen35moe $GM"; do
  set -- $m
  out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" lmstudio --gguf "$2" --smoke -n 32 --host "$LMS_URL" 2>&1); rc=$?
  [[ $rc == 0 ]] && grep -q '\[smoke\] OK: \([0-9]*\)/\1 tokens identical' <<<"$out" \
    && ok "$1: lmstudio: $(grep -o '\[smoke\] OK.*' <<<"$out")" || bad "$1: lmstudio smoke: rc=$rc $(tail -3 <<<"$out")"
  placed=""  # named after general.name: the copy equal to this file
  for f in $(find "$W/home/.lmstudio/models" -name '*.gguf'); do cmp -s "$f" "$2" && placed=$f; done
  [[ -n $placed ]] && ok "$1: lmstudio: placed as $(sed "s|$W/home/||" <<<"$placed")" \
    || bad "$1: lmstudio placement: '$placed'"
done
finish
