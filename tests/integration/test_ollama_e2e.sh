#!/usr/bin/env bash
# test_ollama_e2e.sh - the whole path: fixture HF model -> sunny-convert -> sunny-integrate ollama
# --template auto --smoke against the fake Ollama (llama.cpp inside) -> "[smoke] OK: N/N tokens
# identical", for llama3 and qwen3 in f16 and q8_0 and the mixture of experts qwen3moe in q8_0; --run
# answers through the installed template; a server that serves a different model must make the smoke
# fail; and a server serving the same model with one late weight perturbed must fail at the token
# llama.cpp says (logprobs and text modes).
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/ollama-e2e
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/tools/proxy_trap" proxy_trap
declare -A GG
ggufs_of GG "llama3 qwen3" "f16 q8_0"
ggufs_of GG qwen3moe q8_0 # a mixture of experts (16 experts, top-4)
start_proxy_trap "$W/trap"
proxy_env_on
start_fake_ollama "$W/f"
for k in llama3-f16 llama3-q8_0 qwen3-f16 qwen3-q8_0 qwen3moe-q8_0; do
  name=e2e-${k//_/-}:latest
  run=(); [[ $k == llama3-f16 ]] && run=(--param num_predict=8 --run "Say hi")
  out=$("$SI" ollama "${GG[$k]}" --name "$name" --host "$FAKE_URL" --smoke -n 32 "${run[@]}" --json 2>"$W/$k.err"); rc=$?
  echo "$out" > "$W/$k.json"
  if [[ $rc == 0 ]] && grep -q '\[smoke\] OK: \([0-9]*\)/\1 tokens identical' "$W/$k.err"; then
    ok "$k: $(grep -o '\[smoke\] OK.*' "$W/$k.err")"
  else
    bad "$k: rc=$rc $(tail -5 "$W/$k.err")"
  fi
  [[ $(jget "$W/$k.json" 'j["smoke"]["ok"] and j["smoke"]["compared"] > 0') == True ]] && ok "$k: --json smoke summary" || bad "$k: json $(cat "$W/$k.json")"
  grep -q "detected from gguf" "$W/$k.err" && ok "$k: template auto-detected from the GGUF" || bad "$k: template not detected"
  [[ $k != llama3-f16 || $(jget "$W/$k.json" '"run" in j') == True ]] && ok "$k: --run answered through the installed template" || bad "$k: no --run answer"
  grep -q "compared logprobs, token by token" "$W/$k.err" && ok "$k: compared token by token from the server's logprobs" || bad "$k: method $(grep smoke "$W/$k.err")"
done
# >= 0.30 with a Go TEMPLATE: qwen3's Jinja mentions tools, so the server prefers it
# (shouldPreferChatTemplate) and /api/show returns it; the install verifies and says so
[[ $(jget "$W/qwen3-f16.json" 'j["template_selected"]') == gguf_chat_template ]] && grep -q "chat uses the GGUF's own Jinja" "$W/qwen3-f16.err" \
  && ok "qwen3 (Jinja with tools): installed, verified, the report says the server selected the GGUF's Jinja" || bad "qwen3 selection: $(grep verified "$W/qwen3-f16.err")"
sel=$(jget "$W/llama3-f16.json" 'j["template_selected"]')
[[ $sel == go_template || $sel == gguf_chat_template ]] && ok "llama3: template selection reported ($sel)" || bad "llama3 selection: $sel"
# a prompt ending in a space: the server's context (Tokenize(prompt + answer)) merges the space into
# the first answer token, so it is not the ids generated - the gate must still pass
out=$("$SI" ollama "${GG[llama3-q8_0]}" --name e2e-llama3-q8-0:latest --host "$FAKE_URL" --smoke -n 16 -p "The capital of France is " 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '\[smoke\] OK: 16/16' <<<"$out" && grep -q "boundary re-tokenized differently" <<<"$out" \
  && ok "prompt/answer boundary re-tokenizes differently: smoke passes, context checked" || bad "boundary rc=$rc: $out"
# the installed template, rendered by the server's request path (_debug_render_only, Go text/template),
# equals the model's own Jinja rendered like transformers.apply_chat_template
cat > "$W/conv.json" <<'JSON'
{"conversations":[{"name":"system-user","messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"What is 2+2?"}]},
 {"name":"user","messages":[{"role":"user","content":"Hello!"}]}]}
JSON
for fam in llama3 qwen3; do
  $PY "$SN_SRC/tests/tools/render_jinja.py" render --template "$(fixture "$fam")/tokenizer_config.json" --strip-bos \
      --conversations "$W/conv.json" --out "$W/jinja-$fam" || bad "$fam: render_jinja failed"
  for conv in system-user user; do
    sys=""; [[ $conv == system-user ]] && sys="You are a terse assistant."
    prompt="Hello!"; [[ $conv == system-user ]] && prompt="What is 2+2?"
    body=$($PY -c 'import json,sys; print(json.dumps({"model":sys.argv[1],"prompt":sys.argv[2],"system":sys.argv[3],"_debug_render_only":True,"stream":False}))' "e2e-$fam-f16:latest" "$prompt" "$sys")
    curl -sS --noproxy '*' "$FAKE_URL/api/generate" -d "$body" > "$W/render-$fam-$conv.json"
    if $PY -c 'import json,sys; a=json.load(open(sys.argv[1]))["_debug_info"]["rendered_template"]; b=open(sys.argv[2]).read(); sys.exit(a!=b)' \
        "$W/render-$fam-$conv.json" "$W/jinja-$fam/$conv.txt"; then
      ok "$fam: installed template renders '$conv' exactly like the HF Jinja"
    else
      bad "$fam: '$conv' rendering differs: $(cat "$W/render-$fam-$conv.json") vs $(cat "$W/jinja-$fam/$conv.txt")"
    fi
  done
done
stop "$FAKE_PID"
# OLLAMA_GO_TEMPLATE=0 on the server: the GGUF's Jinja is used even for llama3
start_fake_ollama "$W/f3" -go-template 0
out=$("$SI" ollama "${GG[llama3-q8_0]}" --name e2e-gotmpl0 --host "$FAKE_URL" --smoke -n 16 --json 2>"$W/gotmpl0.err"); rc=$?
[[ $rc == 0 && $(jget <(echo "$out") 'j["template_selected"]') == gguf_chat_template ]] && grep -q "OLLAMA_GO_TEMPLATE=0" "$W/gotmpl0.err" \
  && grep -q '\[smoke\] OK: 16/16' "$W/gotmpl0.err" && ok "OLLAMA_GO_TEMPLATE=0: verified, reported as the GGUF's Jinja, smoke OK" || bad "go-template 0 rc=$rc: $(cat "$W/gotmpl0.err")"
stop "$FAKE_PID"
start_fake_ollama "$W/f2" -serve-gguf "${GG[qwen3-q8_0]}"
out=$("$SI" ollama "${GG[llama3-f16]}" --name e2e-div --host "$FAKE_URL" --smoke -n 32 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q '\[smoke\] DIVERGED' <<<"$out" && ok "server with a different model: smoke fails" || bad "divergent rc=$rc: $out"
stop "$FAKE_PID"
# A server whose model diverges late: the same llama3 f16 with one late weight scaled (blk.1.ffn_down
# x 1.1), so the greedy outputs share a prefix and then differ. Where, and with which two tokens, is
# llama.cpp's answer on the two files (tests/tools/divergence_oracle.py), never sunny's; the case must
# be a clear divergence (both top-2 gaps there >= 5x the tie threshold, 1e-3 x the top logit).
PG=$W/llama3-f16-perturbed.gguf
$PY "$SN_SRC/tests/tools/gguf_edit.py" "${GG[llama3-f16]}" "$PG" --scale blk.1.ffn_down.weight 1.1 || bad "gguf_edit --scale"
if exp=$($PY "$SN_SRC/tests/tools/divergence_oracle.py" "${GG[llama3-f16]}" "$PG" --prompt "The capital of France is" -n 32 2>&1); then
  echo "$exp" >"$W/late.oracle.json"
  ex() { jget "$W/late.oracle.json" "$1"; }
  K=$(ex 'j["k"]'); N=$(ex 'j["n"]')
  [[ $(ex 'j["k"] >= 5 and min(j["rel_installed"], j["rel_served"]) >= 5e-3') == True ]] \
    && ok "oracle: llama.cpp's outputs share $K tokens, then $(ex 'j["installed_q"]') vs $(ex 'j["served_q"]') (top-2 gaps $(ex '"%.3g / %.3g" % (j["gap_installed"], j["gap_served"])'): not a tie)" \
    || bad "the perturbed fixture is no clear late divergence: $exp"
  start_fake_ollama "$W/f4" -serve-gguf "$PG"
  out=$("$SI" ollama "${GG[llama3-f16]}" --name e2e-late --host "$FAKE_URL" --smoke -n 32 2>&1); rc=$?
  [[ $rc == 1 ]] && grep -qF "[smoke] DIVERGED at token $K of $N ($K identical before it, compared logprobs, token by token)" <<<"$out" \
    && grep -qF "first differing token: ollama $(ex 'j["served_q"]'), sunny $(ex 'j["installed_q"]')" <<<"$out" \
    && ok "late divergence (logprobs): fails at llama.cpp's token $K with both tokens named" || bad "late divergence rc=$rc: $out"
  stop "$FAKE_PID"
  # the same server as Ollama < 0.12.11 (no logprobs): the text gate must part at llama.cpp's first
  # differing byte, in the token that holds it, and show the server's bytes from there
  start_fake_ollama "$W/f5" -version 0.12.10 -serve-gguf "$PG"
  out=$("$SI" ollama "${GG[llama3-f16]}" --name e2e-late --host "$FAKE_URL" --smoke -n 32 2>&1); rc=$?
  TK=$(ex 'j["text_token"]')
  [[ $rc == 1 ]] && grep -qF "[smoke] DIVERGED at token $TK of $N ($TK identical before it, compared text, byte for byte (Ollama < 0.12.11 has no logprobs))" <<<"$out" \
    && grep -qF "first differing byte: $(ex 'j["text_byte"]') of the text, in sunny's token $TK: ollama $(ex 'j["served_q"][:-1]')" <<<"$out" \
    && grep -qF ", sunny $(ex 'j["installed_q"]')" <<<"$out" \
    && ok "late divergence (old server, text): fails at llama.cpp's byte $(ex 'j["text_byte"]') / token $TK" || bad "late divergence, text, rc=$rc: $out"
else
  bad "divergence oracle: $exp"
fi
[[ $(cat "$TRAP_COUNT") == 0 ]] && ok "proxy trap recorded 0 requests" || bad "proxy trap saw $(cat "$TRAP_COUNT")"
finish
