#!/usr/bin/env bash
# test_lmstudio_e2e.sh - fixture HF model -> sunny-convert -> sunny-integrate lmstudio (temporary
# HOME with ~/.lmstudio) --smoke against the fake LM Studio (llama.cpp inside) -> OK for llama3 and
# qwen3 in f16 and q8_0 and the mixture of experts qwen3moe in q8_0, both quants of a family in one
# repo folder (LM Studio's @quant variants);
# a server answering with another model must fail, and one answering with the same model with a late
# weight perturbed must fail at the byte/token llama.cpp says the two texts part.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/lmstudio-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W/home/.lmstudio/models"
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
build_go "$SN_SRC/tests/tools/proxy_trap" proxy_trap
declare -A GG
ggufs_of GG "llama3 qwen3" "f16 q8_0"
ggufs_of GG qwen3moe q8_0 # a mixture of experts (16 experts, top-4)
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
for k in llama3-f16 llama3-q8_0 qwen3-f16 qwen3-q8_0 qwen3moe-q8_0; do
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
stop "$LMS_PID"
# A server whose model diverges late: the same llama3 f16 with one late weight scaled (blk.1.ffn_down
# x 1.1). LM Studio returns no logprobs, so the gate compares text: it must part at llama.cpp's first
# differing byte of the two greedy texts, in the token holding it (tests/tools/divergence_oracle.py
# runs llama.cpp on both files; a clear divergence: both top-2 gaps >= 5x the tie threshold).
PG=$W/llama3-f16-perturbed.gguf
$PY "$SN_SRC/tests/tools/gguf_edit.py" "${GG[llama3-f16]}" "$PG" --scale blk.1.ffn_down.weight 1.1 || bad "gguf_edit --scale"
if exp=$($PY "$SN_SRC/tests/tools/divergence_oracle.py" "${GG[llama3-f16]}" "$PG" --prompt "The capital of France is" -n 32 2>&1); then
  echo "$exp" >"$W/late.oracle.json"
  ex() { jget "$W/late.oracle.json" "$1"; }
  N=$(ex 'j["n"]'); TK=$(ex 'j["text_token"]')
  [[ $(ex 'j["k"] >= 5 and min(j["rel_installed"], j["rel_served"]) >= 5e-3') == True ]] \
    && ok "oracle: llama.cpp's texts part at byte $(ex 'j["text_byte"]') (token $TK): $(ex 'j["installed_q"]') vs $(ex 'j["served_q"]')" \
    || bad "the perturbed fixture is no clear late divergence: $exp"
  start_lms "$W/l3" -serve-gguf "$PG"
  out=$(HOME=$W/home PATH=/usr/bin:/bin "$SI" lmstudio --gguf "${GG[llama3-f16]}" --force --smoke -n 32 --host "$LMS_URL" 2>&1); rc=$?
  [[ $rc == 1 ]] && grep -qF "[smoke] DIVERGED at token $TK of $N ($TK identical before it, compared text, byte for byte (LM Studio returns no logprobs))" <<<"$out" \
    && grep -qF "first differing byte: $(ex 'j["text_byte"]') of the text, in sunny's token $TK: lmstud $(ex 'j["served_q"][:-1]')" <<<"$out" \
    && grep -qF ", sunny $(ex 'j["installed_q"]')" <<<"$out" \
    && ok "late divergence (text): fails at llama.cpp's byte $(ex 'j["text_byte"]') / token $TK, both texts shown" || bad "late divergence rc=$rc: $out"
else
  bad "divergence oracle: $exp"
fi
[[ $(cat "$TRAP_COUNT") == 0 ]] && ok "proxy trap recorded 0 requests" || bad "proxy trap saw $(cat "$TRAP_COUNT")"
finish
