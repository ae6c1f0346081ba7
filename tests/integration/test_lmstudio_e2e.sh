#!/usr/bin/env bash
# test_lmstudio_e2e.sh - fixture HF model -> sunny-convert -> sunny-integrate lmstudio (temporary
# HOME with ~/.lmstudio) --smoke against the fake LM Studio (llama.cpp inside) -> OK for llama3 and
# qwen3 in f16 and q8_0, both quants of a family in one repo folder (LM Studio's @quant variants);
# a server answering with another model must fail. Skips when the converter cannot produce them yet.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/lmstudio-e2e
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
build_go "$SN_SRC/tests/tools/proxy_trap" proxy_trap
declare -A GG
ggufs_of GG "llama3 qwen3" "f16 q8_0"
start_proxy_trap "$W/trap"
proxy_env_on
M=$W/home/.lmstudio/models
start_lms() {
  local d=$1; shift
  mkdir -p "$d"
  "$SN_TOOLS/fake-lmstudio" -models "$M" -port-file "$d/port" -worker "$SN_SRC/tests/fake-ollama/worker.mjs" "$@" 2>"$d/stderr" &
  LMS_PID=$!; SN_PIDS+=("$LMS_PID")
  LMS_URL=http://127.0.0.1:$(wait_port "$d/port") || exit 1
}
start_lms "$W/l"
for k in llama3-f16 llama3-q8_0 qwen3-f16 qwen3-q8_0; do
  out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" lmstudio --gguf "${GG[$k]}" --smoke -n 32 --host "$LMS_URL" --json 2>"$W/$k.err"); rc=$?
  echo "$out" > "$W/$k.json"
  if [[ $rc == 0 ]] && grep -q '\[smoke\] OK: \([0-9]*\)/\1 tokens identical' "$W/$k.err"; then
    ok "$k: $(grep -o '\[smoke\] OK.*' "$W/$k.err")"
  else
    bad "$k: rc=$rc $(tail -5 "$W/$k.err")"
  fi
  p=$(jget "$W/$k.json" 'j["path"]')
  [[ $p == $M/sunny-local/*-GGUF/*.gguf && -f $p ]] && ok "$k: placed at $p" || bad "$k: path $p"
done
n=$(curl -sS --noproxy '*' "$LMS_URL/api/v0/models" | $PY -c 'import json,sys; print(sum("@" in m["id"] for m in json.load(sys.stdin)["data"]))')
[[ $n -ge 4 ]] && ok "two quants per repo folder are listed as @quant variants ($n)" || bad "variants: $n"
stop "$LMS_PID"
start_lms "$W/l2" -serve-gguf "${GG[qwen3-q8_0]}"
out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" lmstudio --gguf "${GG[llama3-f16]}" --force --smoke -n 32 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q 'DIVERGED\|different model' <<<"$out" && ok "server with another model: smoke fails" || bad "divergent rc=$rc: $out"
[[ $(cat "$TRAP_COUNT") == 0 ]] && ok "proxy trap recorded 0 requests" || bad "proxy trap saw $(cat "$TRAP_COUNT")"
finish
