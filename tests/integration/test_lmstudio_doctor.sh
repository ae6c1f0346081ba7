#!/usr/bin/env bash
# test_lmstudio_doctor.sh - doctor --lmstudio PATH --fix (issue 49): what LM Studio reads from a placed
# GGUF, repaired and proven on the fake LM Studio (llama.cpp behind it; /v1/chat/completions renders
# the GGUF's Jinja with @huggingface/jinja, the JS engine LM Studio's error texts come from).
# The llama3 q8_0 fixture GGUF, broken three ways and placed with `sunny-integrate lmstudio`:
#  * no chat template; a ChatML template (another family: its <|im_end|> is no token of llama3's
#    vocabulary); a template ending turns with <|reserved_special_token_5|>, which llama.cpp does not
#    treat as end of generation. Each problem named with its fix, exit 1;
#  * --fix --dry-run says what would change and writes nothing; --fix without a template source says so;
#  * --fix (--from the HF folder for the template) rewrites the file, exit 0, and doctor is clean; on
#    the first repair the smoke gate (8 greedy tokens against sunny-run) and a chat turn (the server's
#    rendering against sunny's, same answer) run on the server and pass. The two template repairs give back the fixture GGUF byte for
#    byte (the conversion test_convert_parity holds to llama.cpp's converter); after the stop repair
#    llama.cpp itself (tests/tools/llama_eog.mjs) treats the turn's end token as end of generation,
#    and did not before;
#  * a split model is refused by --fix (nothing written); the hard-linked source of a placement keeps
#    its bytes; a correct placement: exit 0 and why.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/lmstudio-doctor
scratch "$W"
rm -rf "$W"; mkdir -p "$W/M" "$W/sp"
M=$W/M
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
src=$(fixture llama3 bf16) && G=$(gguf_of llama3 q8_0) || { echo "FAIL - fixture"; exit 1; }
CHATML="{% for message in messages %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %}"
EOT5="{{ bos_token }}{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>

{{ message['content'] }}<|reserved_special_token_5|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>

{% endif %}"
ED=$SN_SRC/tests/tools/gguf_edit.py
$PY "$ED" "$G" "$W/nt.gguf" --del-kv tokenizer.chat_template &&
  $PY "$ED" "$G" "$W/wf.gguf" --set-str tokenizer.chat_template "$CHATML" &&
  $PY "$ED" "$G" "$W/st.gguf" --set-str tokenizer.chat_template "$EOT5" || bad "gguf_edit"
nt_sum=$(sha256sum <"$W/nt.gguf")
declare -A P
for k in nt wf st; do
  "$SI" lmstudio "$W/$k.gguf" --models-dir "$M" --repo "$k-GGUF" >/dev/null 2>&1 || bad "place $k"
  P[$k]=$(ls "$M"/sunny-local/$k-GGUF/*.gguf)
done
cp "${P[st]}" "$W/st-before.gguf"
doc() { "$SI" doctor --lmstudio "$@" --models-dir "$M" 2>&1; }

# --- diagnosis
out=$(doc "${P[nt]}"); rc=$?
[[ $rc == 1 ]] && grep -q "problem: no tokenizer.chat_template" <<<"$out" && grep -q "fix: .*--from MODEL_DIR" <<<"$out" \
  && ok "no template: named with its fix, exit 1" || bad "nt rc=$rc: $out"
out=$(doc "${P[wf]}"); rc=$?
[[ $rc == 1 ]] && grep -q "writes <|im_end|> after an assistant turn, which is not a token of this model" <<<"$out" \
  && ok "a ChatML template on llama3's vocabulary: another family, exit 1" || bad "wf rc=$rc: $out"
out=$(doc "${P[st]}"); rc=$?
[[ $rc == 1 ]] && grep -q "ends an assistant turn with <|reserved_special_token_5|> (token 128010), which llama.cpp does not treat as end of generation" <<<"$out" \
  && ok "a turn end that is not end of generation: named, exit 1" || bad "st rc=$rc: $out"

# --- --dry-run and a fix without a source change nothing
sum=$(sha256sum "${P[nt]}")
out=$(doc "${P[nt]}" --fix --dry-run --from "$src"); rc=$?
[[ $rc == 1 ]] && grep -q "would set: tokenizer.chat_template" <<<"$out" && grep -q "nothing written" <<<"$out" \
  && [[ $(sha256sum "${P[nt]}") == "$sum" ]] && ok "--fix --dry-run: the change shown, nothing written, exit 1" || bad "dry rc=$rc: $out"
out=$(doc "${P[nt]}" --fix); rc=$?
[[ $rc == 1 ]] && grep -q "needs a source: --from MODEL_DIR" <<<"$out" && [[ $(sha256sum "${P[nt]}") == "$sum" ]] \
  && ok "--fix without a template source: says so, nothing written, exit 1" || bad "nosrc rc=$rc: $out"
out=$("$SI" doctor --lmstudio "${P[nt]}" --from "$src" 2>&1); rc=$?
[[ $rc == 2 ]] && ok "--from without --fix: usage error" || bad "usage rc=$rc: $out"

"$SN_BIN/sunny-convert" "$W/nt.gguf" -o "$W/sp/nt.gguf" --outtype q8_0 --split-max-tensors 8 >/dev/null 2>&1 &&
  "$SI" lmstudio "$W/sp/nt-00001-of-00003.gguf" --models-dir "$M" --repo sp-GGUF >/dev/null 2>&1 || bad "split placement"
S1=$(ls "$M"/sunny-local/sp-GGUF/*-00001-of-00003.gguf); sum=$(sha256sum "$S1")
out=$(doc "$S1" --fix --from "$src" --no-smoke); rc=$?
[[ $rc == 1 ]] && grep -q "part 1 of a split model: --fix rewrites one file" <<<"$out" && [[ $(sha256sum "$S1") == "$sum" ]] \
  && ok "--fix on a split model: refused with what to do instead, nothing written, exit 1" || bad "split fix rc=$rc: $out"

# --- --fix, proven on the server
mkdir -p "$W/l"
"$SN_TOOLS/fake-lmstudio" -models "$M" -port-file "$W/l/port" -worker "$SN_SRC/tests/fake-ollama/worker.mjs" 2>"$W/l/stderr" &
LMS_PID=$!; SN_PIDS+=("$LMS_PID")
URL=http://127.0.0.1:$(wait_port "$W/l/port") || exit 1
for k in nt wf st; do # the gate on the first repair; the others are proven below (same bytes, llama.cpp's EOG)
  from=(--from "$src"); [[ $k == st ]] && from=()
  gate=(--host "$URL" -n 8); want="fixed, smoke gate and chat OK (exit 0)"
  [[ $k != nt ]] && gate=(--no-smoke) && want="fixed (exit 0)"
  out=$(doc "${P[$k]}" --fix "${from[@]}" "${gate[@]}"); rc=$?
  echo "$out" >"$W/$k.fix"
  if [[ $k == nt ]]; then
    [[ $rc == 0 ]] && grep -q "\[smoke\] OK: \([0-9]*\)/\1 tokens identical" <<<"$out" && grep -q "\[chat\] OK" <<<"$out" \
      && grep -q "$want" <<<"$out" && ok "$k --fix: $(grep -o 'set: .*' <<<"$out" | tr '\n' ' ')smoke gate and chat turn OK on the server, exit 0" \
      || bad "$k fix rc=$rc: $out"
  else
    [[ $rc == 0 ]] && grep -q "$want" <<<"$out" && ok "$k --fix: $(grep -o 'set: .*' <<<"$out" | tr '\n' ' ')exit 0" || bad "$k fix rc=$rc: $out"
  fi
  out=$(doc "${P[$k]}"); rc=$?
  [[ $rc == 0 ]] && grep -q "clean: " <<<"$out" && ok "$k: doctor after the fix: clean, exit 0" || bad "$k after rc=$rc: $out"
done
stop "$LMS_PID"
for k in nt wf; do
  cmp -s "$G" "${P[$k]}" && ok "$k repaired: the fixture GGUF byte for byte" || bad "$k repaired differs from the fixture GGUF"
done
[[ $(sha256sum <"$W/nt.gguf") == "$nt_sum" ]] && ok "the hard-linked source of a placement keeps its bytes" || bad "source changed"
e=$(node "$SN_SRC/tests/tools/llama_eog.mjs" 128010 "$W/st-before.gguf" "${P[st]}" 2>&1)
[[ $e == "false true" ]] && ok "llama.cpp: token 128010 is end of generation after the fix, not before" || bad "llama.cpp eog: $e"
out=$(doc "${P[nt]}"); rc=$?
[[ $rc == 0 ]] && grep -q "an end of turn that ends generation, listed under the models dir" <<<"$out" && grep -q "doctor: no problems (exit 0)" <<<"$out" \
  && ok "a correct placement: exit 0 and why" || bad "clean rc=$rc: $out"
finish
