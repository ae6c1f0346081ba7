#!/usr/bin/env bash
# demo.sh - the main job end to end on an embedded default model, writing only under build/:
#   1. generate a small Llama-3-shaped model in Hugging Face layout (random weights, real tokenizer)
#   2. sunny-convert it to GGUF (f16 and q8_0)
#   3. sunny-run it (greedy) and show the tokens
#   3b. write an INT4 runtime blob (docs/BLOB.md), run it, and print how closely it follows fp32
#   4. if an Ollama server answers at $OLLAMA_HOST (default 127.0.0.1:11434): install + smoke test;
#      otherwise say how to start one.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
BIN=$B/cmd
D=$B/demo
mkdir -p "$D"
PY=/usr/bin/python3

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "1. demo model in HF layout ($D/hf)"
if [[ ! -f $D/hf/config.json ]]; then
  $PY tests/fixtures/gen_model.py --family llama3 --preset small --dtype bf16 --out "$D/hf"
fi
ls -la "$D/hf"

step "2. sunny-convert -> GGUF"
for t in f16 q8_0; do
  "$BIN/sunny-convert" "$D/hf" -o "$D/demo-$t.gguf" --outtype "$t" --name sunny-demo --force
done
ls -la "$D"/*.gguf

step "3. sunny-run (greedy, 24 tokens)"
"$BIN/sunny-run" "$D/demo-f16.gguf" -p "The quick brown fox" -n 24 --json

step "3b. INT4 runtime blob: sunny-convert --blob, sunny-run, agreement with fp32"
"$BIN/sunny-convert" "$D/hf" -o "$D/demo-f32.gguf" --outtype f32 --name sunny-demo --force
"$BIN/sunny-convert" "$D/demo-f32.gguf" --blob -o "$D/demo-int4.snb" --dtype int4 --force
ls -la "$D/demo-int4.snb"
"$BIN/sunny-run" "$D/demo-int4.snb" -p "The quick brown fox" -n 24 --json
ids=$("$BIN/sunny-run" "$D/demo-f32.gguf" --tokenize -p "The quick brown fox" | tr ' ' ',')
if [[ -x $B/tests/model_agree ]]; then
  echo "teacher-forced agreement with the f32 GGUF over 64 greedy steps (random weights: errors compound)"
  echo -n "  INT4 blob:                 "
  "$B/tests/model_agree" "$D/demo-f32.gguf" "$D/demo-int4.snb" --prompt-ids "$ids" -n 64 -t 2
  "$BIN/sunny-convert" "$D/hf" -o "$D/demo-q4_0.gguf" --outtype q4_0 --name sunny-demo --force
  echo -n "  llama.cpp Q4_0, same bits: "
  "$B/tests/model_agree" "$D/demo-f32.gguf" "$D/demo-q4_0.gguf" --prompt-ids "$ids" -n 64 -t 2
else # free-running comparison through sunny-run
  a=$("$BIN/sunny-run" "$D/demo-f32.gguf" --prompt-ids "$ids" -n 64 --ignore-eos --json | sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p')
  b=$("$BIN/sunny-run" "$D/demo-int4.snb" --prompt-ids "$ids" -n 64 --ignore-eos --json | sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p')
  same=$(paste -d' ' <(tr ',' '\n' <<<"$a") <(tr ',' '\n' <<<"$b") | awk '$1 != $2 { exit } { n++ } END { print n + 0 }')
  echo "INT4 blob and f32 GGUF generate the same first $same of 64 greedy tokens"
fi

step "4. Ollama"
host=${OLLAMA_HOST:-127.0.0.1:11434}
if "$BIN/sunny-integrate" doctor >/dev/null 2>&1; then
  "$BIN/sunny-integrate" ollama "$D/demo-q8_0.gguf" --name sunny-demo:q8_0 --smoke -n 16
else
  echo "No Ollama server answered at $host - skipping install."
  echo "Start one with 'ollama serve' (or set OLLAMA_HOST), then run:"
  echo "  $BIN/sunny-integrate ollama $D/demo-q8_0.gguf --name sunny-demo:q8_0 --smoke"
fi
step "done"
