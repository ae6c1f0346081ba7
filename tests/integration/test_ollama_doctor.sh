#!/usr/bin/env bash
# test_ollama_doctor.sh - sunny-integrate doctor --model / --all / --fix against the fake Ollama, on
# models created by hand through the API (blob upload + /api/create, as any other tool would):
# without TEMPLATE on an old (0.24) server, without stop, with another family's template, with a
# string where Ollama wants a number, and with an architecture llama.cpp does not know. Each problem
# must be named with its fix and exit 1; --fix re-creates the model from its blob (no upload: the
# server's request log must show no POST /api/blobs) and then doctor and the smoke gate pass; a
# correct install gives exit 0 with its reason; --dry-run changes nothing. (--fix runs once, on the
# 0.33 server: the repair path is the same installer on both.)
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/ollama-doctor
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
Q=$(gguf_of qwen3 q8_0) && L=$(gguf_of llama3 q8_0) || { echo "FAIL - fixture GGUFs"; exit 1; }
"$SI" template "$Q" --json >"$W/q.json" && "$SI" template "$L" --json >"$W/l.json" || { echo "FAIL - sunny-integrate template"; exit 1; }
X=$W/unknown-arch.gguf
$PY "$SN_SRC/tests/tools/gguf_edit.py" "$Q" "$X" --set-str general.architecture sunnyfoo || { echo "FAIL - gguf_edit"; exit 1; }

# by hand: upload the blob, create with the given JSON fields (template, parameters, ...)
upload() { local hex; hex=$(sha256sum "$1" | cut -c1-64)
  curl -sS --noproxy '*' "$FAKE_URL/api/blobs/sha256:$hex" --data-binary @"$1" >/dev/null; echo "$hex"; }
create() { # NAME GGUF EXTRA_JSON_FIELDS
  local hex; hex=$(upload "$2")
  curl -sS --noproxy '*' "$FAKE_URL/api/create" -d "{\"model\":\"$1\",\"files\":{\"m.gguf\":\"sha256:$hex\"}$3}" | tail -1
}
tmpl() { jget "$1" 'json.dumps(j["template"])'; }
stops() { jget "$1" 'json.dumps(j["stop"])'; }
doc() { out=$("$SI" doctor --host "$FAKE_URL" "$@" 2>&1); rc=$?; }

# --- a server >= 0.30 (the fake reports 0.33.0)
start_fake_ollama "$W/f" -go-template 1   # OLLAMA_GO_TEMPLATE=1: the TEMPLATE renders, never the Jinja
QT=$(tmpl "$W/q.json"); QS=$(stops "$W/q.json"); LT=$(tmpl "$W/l.json")
"$SI" ollama "$Q" --name good --host "$FAKE_URL" >/dev/null 2>&1 || bad "sunny install of the good model"
create nostop "$Q" ",\"template\":$QT" >/dev/null
create wrongfam "$Q" ",\"template\":$LT,\"parameters\":{\"stop\":$QS}" >/dev/null
# three problems at once: another family's template, no stop, a string for num_ctx (what --fix repairs)
create badtype "$Q" ",\"template\":$LT,\"parameters\":{\"num_ctx\":\"4096\",\"temperature\":0.7}" >/dev/null

doc --model good
[[ $rc == 0 ]] && grep -q "clean   : TEMPLATE, stops, parameter types and load all check out" <<<"$out" \
  && ok "a correct install: exit 0, and why" || bad "good rc=$rc: $out"
doc --model nostop
[[ $rc == 1 ]] && grep -q "^\[stop\] no stop:.*<|im_end|>" <<<"$out" && grep -q "fix: .*--fix (stop:" <<<"$out" \
  && ok "no stop: named with the end of turn and the fix" || bad "nostop rc=$rc: $out"
doc --model wrongfam
[[ $rc == 1 ]] && grep -q "^\[render\] TEMPLATE renders differently from the GGUF's Jinja: probe '[^']*', first difference at byte [0-9]*" <<<"$out" \
  && grep -q "fix: .*family chatml" <<<"$out" && ok "another family's template: probe and first differing bytes named" || bad "wrongfam rc=$rc: $out"
doc --model badtype
[[ $rc == 1 ]] && grep -q '^\[param\] PARAMETER num_ctx is the string "4096"' <<<"$out" && ! grep -q "PARAMETER temperature" <<<"$out" \
  && grep -q '^\[render\]' <<<"$out" && grep -q '^\[stop\]' <<<"$out" \
  && ok "a string where a number belongs: named (and the float left alone), with the other two problems" || bad "badtype rc=$rc: $out"
doc --all
[[ $rc == 1 ]] && grep -q "^good:latest  *ok$" <<<"$out" && grep -q "^wrongfam:latest  *PROBLEMS render: " <<<"$out" \
  && grep -q "^badtype:latest  *PROBLEMS render: " <<<"$out" && grep -q "(+2 more; doctor --model badtype:latest)" <<<"$out" && grep -q "^nostop:latest  *PROBLEMS stop: " <<<"$out" \
  && ok "--all: one line per model" || bad "--all rc=$rc: $out"
# --fix --dry-run: the new Modelfile, nothing changed
before=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"wrongfam"}')
doc --model wrongfam --fix --dry-run
after=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"wrongfam"}')
[[ $rc == 1 && $before == "$after" ]] && grep -q "^TEMPLATE " <<<"$out" && grep -q '<|im_start|>' <<<"$out" \
  && ok "--fix --dry-run: shows the new Modelfile, changes nothing" || bad "dry run rc=$rc: $out"
: >"$W/f/log"
doc --model badtype --fix -n 8
[[ $rc == 0 ]] && grep -q "after fix: 0 problem(s)" <<<"$out" && grep -q '\[smoke\] OK: 8/8' <<<"$out" \
  && ! grep -q "POST /api/blobs" "$W/f/log" && grep -q "POST /api/create" "$W/f/log" \
  && ok "--fix (template, stops, num_ctx): re-created from the existing blob (no upload), doctor and the smoke gate pass" || bad "fix rc=$rc: $out $(cat "$W/f/log")"
doc --model badtype
[[ $rc == 0 ]] && ok "doctor after --fix: exit 0" || bad "after fix rc=$rc: $out"
stop "$FAKE_PID"

# --- an old server (0.24): no TEMPLATE means "{{ .Prompt }}"; no load-time validation, so an
# unknown architecture gets in and fails at load
start_fake_ollama "$W/f24" -version 0.24.0
create notmpl "$Q" "" >/dev/null
create alien "$X" ",\"template\":$QT,\"parameters\":{\"stop\":$QS}" >/dev/null
doc --model notmpl
[[ $rc == 1 ]] && grep -q '^\[template\] no TEMPLATE: Ollama 0.24.0 falls back to "{{ .Prompt }}"' <<<"$out" && grep -q "^\[stop\]" <<<"$out" \
  && ok "no TEMPLATE: named with what Ollama falls back to" || bad "notmpl rc=$rc: $out"
doc --model alien
[[ $rc == 1 ]] && grep -q "^\[arch\] the server's llama.cpp cannot load architecture 'sunnyfoo'" <<<"$out" \
  && ok "unknown architecture: named by the load probe" || bad "alien rc=$rc: $out"
stop "$FAKE_PID"
finish
