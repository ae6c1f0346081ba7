#!/usr/bin/env bash
# demo.sh - the main job end to end on an embedded default model, writing only under build/demo:
#   1. a small RWKV-7 in fla-hub's Hugging Face layout (config.json, model.safetensors, the RWKV world
#      vocabulary the repo carries), written by the build's own C program scripts/demo_model.c:
#      random weights, no Python, no network
#   2. sunny-convert it to GGUF (f16, q8_0, q4_0) and, streamed from the HF folder, to an INT4 blob
#   3. sunny-run each file greedily; if llama.cpp is available (the npm oracle, a test dependency),
#      check that it gives the same tokens on the f16 GGUF
#   4. if an Ollama server answers: install + smoke test; otherwise say how to start one
# Ends with a summary table: each file written, its type and size, decode tokens/s, and the checks
# that passed. The weights are random, so the generated text is gibberish by design.
# Needs only the build (scripts/deps.sh demo): bash, coreutils and sed.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
BIN=$B/cmd
D=$B/demo
HF=$D/rwkv7-demo
mkdir -p "$D"
PROMPT="The quick brown fox"
N=24

bold() { printf '\033[1m%s\033[0m\n' "$*"; }
step() { printf '\n'; bold "== $*"; }
rows=()   # summary: file|type|size|tok/s
checks=() # summary: checks that passed
size_of() { numfmt --to=iec --suffix=B "$(stat -c %s "$1")" 2>/dev/null || stat -c %s "$1"; }
# a generated text for the terminal: one line, control bytes and broken UTF-8 (a random model's byte
# tokens) dropped
show() { tr -d '\000-\011\013-\037\177' <"$1" | tr '\n' ' ' | { iconv -c -f UTF-8 -t UTF-8 2>/dev/null || cat; }; }
ids_of() { sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p' "$1" | tail -1; }
# sunny-run FILE: the text on stdout (control bytes dropped, one line), tok/s from its stderr line
run() {
  "$BIN/sunny-run" "$D/$1" -p "$PROMPT" -n $N --ignore-eos >"$D/$1.txt" 2>"$D/$1.err" || { cat "$D/$1.err" >&2; exit 1; }
  sed -n 's/.*generated [0-9]* tokens, \([0-9.]*\) tok\/s.*/\1/p' "$D/$1.err"
}

step "1. a demo model in Hugging Face layout ($HF)"
echo "Random weights (the toolkit works offline: nothing is downloaded), RWKV-7 shape, the real RWKV"
echo "world vocabulary: every step below is real, but the generated text is gibberish by design."
rm -rf "$D/hf" # the Llama-3-shaped folder older demos wrote
if [[ ! -f $HF/config.json || $B/scripts/demo_model -nt $HF/config.json ]]; then
  "$B/scripts/demo_model" --out "$HF" --force
fi
echo "ok: $(ls "$HF" | tr '\n' ' ')"

step "2. sunny-convert: HF folder -> GGUF and runtime blob"
for t in f16 q8_0 q4_0; do
  "$BIN/sunny-convert" "$HF" -o "$D/demo-$t.gguf" --outtype "$t" --name sunny-demo --force
  echo "ok: $D/demo-$t.gguf ($(size_of "$D/demo-$t.gguf"))"
done
"$BIN/sunny-convert" "$HF" --blob -o "$D/demo-int4.snb" --dtype int4 --force
echo "ok: $D/demo-int4.snb ($(size_of "$D/demo-int4.snb"), INT4 blob streamed from the HF folder)"

step "3. sunny-run (greedy, $N tokens, prompt \"$PROMPT\")"
for f in demo-f16.gguf demo-q8_0.gguf demo-q4_0.gguf demo-int4.snb; do
  ts=$(run "$f")
  printf '%-16s %7s tok/s  %s\n' "$f" "$ts" "$(show "$D/$f.txt")"
  case $f in
    *.gguf) ty=$(sed 's/demo-\(.*\)\.gguf/GGUF \1/' <<<"$f") ;;
    *) ty="sunny blob, int4" ;;
  esac
  rows+=("$D/$f|$ty|$(size_of "$D/$f")|$ts")
done
if [[ -d tests/node_modules/node-llama-cpp ]] && command -v node >/dev/null; then
  "$BIN/sunny-run" "$D/demo-f16.gguf" -p "$PROMPT" -n $N --ignore-eos --json >"$D/demo-f16.gguf.json"
  ids=$("$BIN/sunny-run" "$D/demo-f16.gguf" --tokenize -p "$PROMPT" | tr ' ' ',')
  # --decode-top-logits: one controlled step per token, so an end-of-text token does not stop
  # llama.cpp early (sunny-run runs with --ignore-eos)
  node tests/tools/llama_oracle.mjs generate "$D/demo-f16.gguf" --prompt-ids "$ids" -n $N --decode-top-logits 1 \
    >"$D/llama.json" 2>/dev/null || true
  sunny_ids=$(ids_of "$D/demo-f16.gguf.json"); llama_ids=$(ids_of "$D/llama.json")
  if [[ -n $llama_ids && $sunny_ids == "$llama_ids" ]]; then
    distinct=$(tr ',' '\n' <<<"$sunny_ids" | sort -u | wc -l)
    checks+=("sunny-run = llama.cpp on demo-f16.gguf: the same $N greedy tokens ($distinct distinct)")
    echo "ok: llama.cpp generates the same $N tokens on demo-f16.gguf"
  else
    echo "NOTE: llama.cpp's tokens differ or it did not run (sunny: $sunny_ids, llama.cpp: $llama_ids)"
  fi
else
  echo "(llama.cpp parity check skipped: the npm oracle is a test dependency, see scripts/deps.sh)"
fi
if [[ -x $B/tests/model_agree ]]; then
  "$BIN/sunny-convert" "$HF" -o "$D/demo-f32.gguf" --outtype f32 --name sunny-demo --force
  ids=$("$BIN/sunny-run" "$D/demo-f32.gguf" --tokenize -p "$PROMPT" | tr ' ' ',')
  a4=$("$B/tests/model_agree" "$D/demo-f32.gguf" "$D/demo-int4.snb" --prompt-ids "$ids" -n 64 -t 2)
  aq=$("$B/tests/model_agree" "$D/demo-f32.gguf" "$D/demo-q4_0.gguf" --prompt-ids "$ids" -n 64 -t 2)
  r() { sed -n 's/.*"top1_rate":\([0-9.]*\).*/\1/p' <<<"$1"; }
  echo "agreement with the f32 model over 64 teacher-forced steps (random weights: small differences"
  echo "flip the argmax often): INT4 blob top-1 $(r "$a4"), Q4_0 GGUF (llama.cpp's format) top-1 $(r "$aq")"
  rm -f "$D/demo-f32.gguf"
fi

step "4. Ollama"
host=${OLLAMA_HOST:-127.0.0.1:11434}
if "$BIN/sunny-integrate" doctor >/dev/null 2>&1; then
  if "$BIN/sunny-integrate" ollama "$D/demo-q8_0.gguf" --name sunny-demo:q8_0 --smoke -n 16; then
    checks+=("Ollama at $host = sunny-run: the same 16 greedy tokens (smoke test)")
  fi
else
  echo "No Ollama server answered at $host, so nothing was installed. To install the demo model:"
  echo "  ollama serve &   # or set OLLAMA_HOST"
  echo "  $BIN/sunny-integrate ollama $D/demo-q8_0.gguf --name sunny-demo:q8_0 --smoke"
fi

step "done: the demo worked"
printf '%-30s %-18s %9s %9s\n' file type size "tok/s"
for row in "${rows[@]}"; do
  IFS='|' read -r f ty sz ts <<<"$row"
  printf '%-30s %-18s %9s %9s\n' "$f" "$ty" "$sz" "$ts"
done
if ((${#checks[@]})); then
  echo "checks passed:"
  for c in "${checks[@]}"; do echo "  - $c"; done
fi
echo "(decode tokens/s on this machine, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg); text is gibberish: random weights)"
