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
  smoke_ollama "$1: ollama --template jinja" "$2" $1-e2e:latest "$W/o1-$1.out" --template jinja
  grep -q "^render  : the server's prompt (_debug_render_only) is byte-identical to the GGUF's Jinja" "$W/o1-$1.out" \
    && ok "$1: ollama --template jinja: the server's rendering of the Qwen3.5 Jinja equals sunny's byte for byte" \
    || bad "$1: ollama jinja render: $(grep -E 'render|error|template' "$W/o1-$1.out" | head -5)"
done
stop "$FAKE_PID"
start_fake_ollama "$W/o2" -serve-gguf "$G2"
smoke_diverges "ollama serving another Qwen3.5: smoke fails" "$G" "$W/div.out" --template jinja
stop "$FAKE_PID"

# ---- LM Studio
start_fake_lmstudio "$W/home" "$W/l"
for m in "qwen35 $G" "qwen35moe $GM"; do
  set -- $m
  smoke_lmstudio "$1: lmstudio" "$2" "$W/home" "$W/l-$1.out"
  placed=""  # named after general.name: the copy equal to this file
  for f in $(find "$W/home/.lmstudio/models" -name '*.gguf'); do cmp -s "$f" "$2" && placed=$f; done
  [[ -n $placed ]] && ok "$1: lmstudio: placed as $(sed "s|$W/home/||" <<<"$placed")" \
    || bad "$1: lmstudio placement: '$placed'"
done
finish
