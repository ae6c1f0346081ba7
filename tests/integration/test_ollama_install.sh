#!/usr/bin/env bash
# test_ollama_install.sh - sunny-integrate ollama against the fake Ollama (tests/fake-ollama), with
# every proxy variable pointing at a trap that must see zero requests: dry run, install, typed
# parameters (the fake rejects wrong types at generate time), Modelfile round trip through an
# Ollama-rules parser, old-server (0.5.4) legacy body, and failure injection (server down, 500
# mid-upload, digest mismatch, error line mid-create, 403, proxy answering, divergent model, a
# server that tokenizes the prompt differently).
# Uses GGUFs from the runtime's own test writer, so it does not depend on sunny-convert.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
need_oracle
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/ollama-install
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
build_go "$SN_SRC/tests/fake-ollama" fake-ollama
build_go "$SN_SRC/tests/tools/proxy_trap" proxy_trap
G=$(rt_gguf llama3 1234) || { bad "fixture GGUF"; finish; }
G2=$(rt_gguf llama3 999) || { bad "second fixture GGUF"; finish; }
printf '{{- if .System }}<|start_header_id|>system<|end_header_id|>\n\n{{ .System }}<|eot_id|>{{ end }}<|start_header_id|>user<|end_header_id|>\n\n{{ .Prompt }}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n' > "$W/l3.gotmpl"
TP=(--template "$W/l3.gotmpl")

start_proxy_trap "$W/trap"
proxy_env_on
unset OLLAMA_HOST

# --- dry run: only the version probe is sent, nothing lands on the server
start_fake_ollama "$W/f1"
out=$("$SI" ollama "$G" --name tiny:dry --host "$FAKE_URL" "${TP[@]}" --param stop='<|eot_id|>' --dry-run 2>&1); rc=$?
[[ $rc == 0 ]] && ok "dry run exits 0" || bad "dry run rc=$rc: $out"
[[ $(cat "$W/f1/log") == "GET /api/version" ]] && ok "dry run sent only GET /api/version" || bad "dry run sent: $(cat "$W/f1/log")"
grep -q '"stop":\["<|eot_id|>"\]' <<<"$out" && ok "dry run prints the create body with typed stop" || bad "dry run body: $out"
[[ -z $(ls "$W/f1/models/blobs" 2>/dev/null) ]] && ok "dry run uploaded nothing" || bad "dry run left blobs"

# --- install with typed parameters; the fake types them at generate time (--run generates)
out=$("$SI" ollama "$G" --name tiny:f32 --host "$FAKE_URL" "${TP[@]}" --system "Be terse." \
      --param stop='<|eot_id|>' --param stop='<|start_header_id|>' --param num_ctx=512 --param temperature=0 \
      --param top_k=1 --param repeat_penalty=1.0 --run "Hello" 2>&1); rc=$?
[[ $rc == 0 ]] && ok "install + --run exits 0 (parameter types accepted at generate time)" || bad "install rc=$rc: $out"
hex=$(sha256sum "$G" | cut -d' ' -f1)
[[ -f $W/f1/models/blobs/sha256-$hex ]] && ok "blob stored under sha256-<hex of the whole file>" || bad "blob sha256-$hex missing"
grep -q "verified: family llama" <<<"$out" && ok "/api/show verified family/template/stops" || bad "no verification line: $out"
tags=$(curl -sS --noproxy '*' "$FAKE_URL/api/tags")
grep -q '"name":"tiny:f32"' <<<"$tags" && ok "/api/tags lists tiny:f32" || bad "tags: $tags"
# the template really renders as sent (_debug_render_only)
r=$(curl -sS --noproxy '*' "$FAKE_URL/api/generate" -d '{"model":"tiny:f32","prompt":"Hi","_debug_render_only":true,"stream":false}')
want=$'<|start_header_id|>system<|end_header_id|>\n\nBe terse.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n'
got=$($PY -c 'import json,sys; print(json.loads(sys.argv[1])["_debug_info"]["rendered_template"], end="")' "$r"; printf x)
[[ $got == "${want}x" ]] && ok "_debug_render_only renders the installed template + system" || bad "rendered: $got"
# negative controls: the fake must reject what a careless client sends
curl -sS --noproxy '*' "$FAKE_URL/api/create" -d "{\"model\":\"bad:types\",\"files\":{\"x.gguf\":\"sha256:$hex\"},\"parameters\":{\"stop\":\"<|eot_id|>\",\"num_ctx\":\"4096\"}}" >/dev/null
r=$(curl -sS --noproxy '*' -w ' %{http_code}' "$FAKE_URL/api/generate" -d '{"model":"bad:types","prompt":"x","stream":false}')
[[ $r == *'must be of type'*' 500' ]] && ok "fake rejects string-typed parameters at generate time (500)" || bad "fake accepted wrong types: $r"
r=$(curl -sS --noproxy '*' -w ' %{http_code}' "$FAKE_URL/api/generate" -d '{"model":"tiny:f32","prompt":"x","raw":true,"template":"{{ .Prompt }}","stream":false}')
[[ $r == *' 400' ]] && ok "raw + template is a 400" || bad "raw+template: $r"
r=$(curl -sS --noproxy '*' -w ' %{http_code}' "$FAKE_URL/api/create" -d '{"model":"x","modelfile":"FROM ./x.gguf"}')
[[ $r == *"neither 'from' or 'files' was specified"*' 400' ]] && ok "legacy body on a new server: neither 'from' or 'files'" || bad "legacy on new: $r"
r=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -I "$FAKE_URL/api/blobs/sha256-$hex")
[[ $r == 200 ]] && ok "HEAD with sha256- form passes the regex" || bad "HEAD sha256-: $r"
r=$(curl -sS --noproxy '*' -w ' %{http_code}' "$FAKE_URL/api/blobs/sha256:${hex^^}" --data-binary @"$W/l3.gotmpl")
[[ $r == *'digest mismatch'*' 400' ]] && ok "uppercase digest always mismatches (literal compare)" || bad "uppercase: $r"

# /api/delete: 200 once, then the model is gone (404 for show and for a second delete)
curl -sS --noproxy '*' "$FAKE_URL/api/create" -d "{\"model\":\"gone:x\",\"files\":{\"x.gguf\":\"sha256:$hex\"}}" >/dev/null
d1=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -X DELETE "$FAKE_URL/api/delete" -d '{"model":"gone:x"}')
s1=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' "$FAKE_URL/api/show" -d '{"model":"gone:x"}')
d2=$(curl -sS --noproxy '*' -o /dev/null -w '%{http_code}' -X DELETE "$FAKE_URL/api/delete" -d '{"model":"gone:x"}')
[[ "$d1 $s1 $d2" == "200 404 404" ]] && ok "/api/delete then /api/show: 200 404 404" || bad "delete/show: $d1 $s1 $d2"

# --- doctor against the live fake: OLLAMA_HOST=0.0.0.0:PORT is a bind address, connect to loopback
port=${FAKE_URL##*:}
out=$(OLLAMA_HOST=0.0.0.0:$port "$SI" doctor 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "Ollama 0.33.0 answers at http://127.0.0.1:$port" <<<"$out" && grep -q "bind address" <<<"$out" \
  && grep -q "never proxies loopback" <<<"$out" && ok "doctor: 0.0.0.0 mapped to loopback, bind-address and proxy explained" || bad "doctor rc=$rc: $out"
out=$(OLLAMA_HOST="'http://127.0.0.1'" "$SI" doctor --json 2>/dev/null)
[[ $($PY -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["host"], any(c["check"]=="host-form" and c["status"]=="warn" for c in j["checks"]))' "$out") == "http://127.0.0.1:80 True" ]] \
  && ok "doctor --json: quoted scheme-without-port means port 80, warned" || bad "doctor json: $out"

# --- smoke parity (runtime vs llama.cpp in the fake), then a divergent model
out=$("$SI" ollama "$G" --name tiny:f32 --host "$FAKE_URL" "${TP[@]}" --param stop='<|eot_id|>' --smoke -n 16 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '\[smoke\] OK: 16/16 tokens identical (compared logprobs, token by token)' <<<"$out" && ok "smoke OK 16/16 (logprobs)" || bad "smoke rc=$rc: $out"
stop "$FAKE_PID"
start_fake_ollama "$W/f2" -serve-gguf "$G2"
out=$("$SI" ollama "$G" --name tiny:f32 --host "$FAKE_URL" "${TP[@]}" --smoke -n 16 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q '\[smoke\] DIVERGED at token' <<<"$out" && grep -q 'top-2 logit gap' <<<"$out" \
  && grep -q "first differing token: ollama " <<<"$out" && grep -q "the server's own top-2 logprob gap" <<<"$out" \
  && ok "divergent model: smoke exits 1 with position, both tokens, both gaps" || bad "divergent rc=$rc: $out"
stop "$FAKE_PID"

start_fake_ollama "$W/f2b" -no-bos
out=$("$SI" ollama "$G" --name tiny:f32 --host "$FAKE_URL" "${TP[@]}" --smoke -n 8 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q 'prompt tokenized differently' <<<"$out" && grep -q 'BOS difference' <<<"$out" \
  && ok "server tokenizing without BOS: smoke fails before generation and says so" || bad "no-bos rc=$rc: $out"
stop "$FAKE_PID"

# --- issue 19: behaviours of the real server, one fake (v0.33) for all of them
start_fake_ollama "$W/f19"
# names with a source suffix are refused before anything is sent (parseSourceSuffix)
for n in tiny:local tiny:cloud tiny:7b-cloud; do
  : > "$W/f19/log"
  out=$("$SI" ollama "$G" --name "$n" --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
  [[ $rc == 2 && ! -s $W/f19/log ]] && grep -q "model source" <<<"$out" && ok "name $n refused up front, nothing sent" || bad "name $n rc=$rc: $out $(cat "$W/f19/log")"
done
r=$(curl -sS --noproxy '*' -w ' %{http_code}' "$FAKE_URL/api/show" -d '{"model":"tiny:local"}')
[[ $r == *' 404' ]] && ok "fake: show resolves tiny:local as 'tiny' (404)" || bad "fake show :local: $r"
# a base model (this GGUF has no tokenizer.chat_template): an explicit raw-completion TEMPLATE, said so
out=$("$SI" ollama "$G" --name tiny:base --host "$FAKE_URL" 2>&1); rc=$?
st=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"tiny:base"}' | $PY -c 'import json,sys; print(json.load(sys.stdin)["template"])')
[[ $rc == 0 && $st == '{{ .Prompt }}' ]] && grep -q "raw completion: the GGUF has no tokenizer.chat_template" <<<"$out" \
  && ok "base model: installed with an explicit {{ .Prompt }} TEMPLATE, and the output says so" || bad "base model rc=$rc template=$st: $out"
# a stop list with control characters (rwkv-world style) verifies: /api/show prints it with %#v
out=$("$SI" ollama "$G" --name tiny:stops --host "$FAKE_URL" "${TP[@]}" --param stop=$'\n\n' --param stop='User:' 2>&1); rc=$?
sp=$(curl -sS --noproxy '*' "$FAKE_URL/api/show" -d '{"model":"tiny:stops"}' | $PY -c 'import json,sys; print(json.load(sys.stdin)["parameters"])')
[[ $rc == 0 ]] && grep -q '2 stop value(s) stored' <<<"$out" && grep -qF '"\n\n"' <<<"$sp" \
  && ok "stop \"\\n\\n\" verified although /api/show prints it escaped ($(grep -F '\n' <<<"$sp" | tr -s ' '))" || bad "escaped stop rc=$rc: $out / $sp"
# empty prompt: the server only loads (done_reason "load"); sunny says so instead of printing nothing
r=$(curl -sS --noproxy '*' "$FAKE_URL/api/generate" -d '{"model":"tiny:stops","prompt":"","stream":false}')
[[ $r == *'"done_reason":"load"'* ]] && ok "fake: empty prompt answers done_reason load" || bad "fake empty prompt: $r"
out=$("$SI" ollama "$G" --name tiny:stops --host "$FAKE_URL" "${TP[@]}" --run "" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q 'only loaded the model' <<<"$out" && ok "--run \"\": the load-only answer is explained" || bad "empty run rc=$rc: $out"
# a template error arrives as an NDJSON line after "parsing GGUF" (HTTP 200), with the server's words
printf '{{ .Prompt ' > "$W/broken.gotmpl"
out=$("$SI" ollama "$G" --name tiny:tmplerr --host "$FAKE_URL" --template "$W/broken.gotmpl" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q 'mid-stream (line 2, HTTP 200): template error: ' <<<"$out" && ok "template error streamed after parsing GGUF, reported with the server's words" || bad "template error rc=$rc: $out"
# a GGUF that lacks a tensor (llama-quantize's COPY validation in Ollama >= 0.30 would fail it
# mid-stream) is refused before anything is uploaded: sunny-run's own checks (sn_model_validate)
$PY "$SN_SRC/tests/tools/gguf_edit.py" "$G" "$W/notensor.gguf" --drop output_norm.weight || bad "gguf_edit --drop"
out=$("$SI" ollama "$W/notensor.gguf" --name tiny:invalid --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q 'sunny-run would not load it.*missing tensor output_norm.weight' <<<"$out" && ! grep -q 'POST /api/blobs' <<<"$out" \
  && ok "a GGUF missing a tensor is refused before upload, naming the tensor" || bad "validation rc=$rc: $out"
# a 3-part split GGUF: every shard uploaded and listed in files under its -NNNNN-of-00003.gguf name
mkdir -p "$W/split"
$PY "$SN_SRC/tests/tools/gguf_split.py" "$G" "$W/split/tiny" 3 || bad "gguf_split"
out=$("$SI" ollama "$W/split/tiny-00001-of-00003.gguf" --name tiny:split --host "$FAKE_URL" "${TP[@]}" --param stop='<|eot_id|>' \
      --param num_predict=4 --param temperature=0 --run "Hello" --json 2>"$W/split.err"); rc=$?
[[ $rc == 0 && $(jget <(echo "$out") 'j["split_parts"]') == 3 ]] && grep -q "shard 3 :" "$W/split.err" && [[ -n $(jget <(echo "$out") 'j["run"]') ]] \
  && ok "3-part split GGUF installed (3 shards in files) and generates through llama.cpp" || bad "split rc=$rc: $out $(cat "$W/split.err")"
h1=$(sha256sum "$W/split/tiny-00001-of-00003.gguf" | cut -d' ' -f1)
r=$(curl -sS --noproxy '*' "$FAKE_URL/api/create" -d "{\"model\":\"x:one\",\"files\":{\"tiny-00001-of-00003.gguf\":\"sha256:$h1\"}}")
grep -q 'has 1 shards, expected 3' <<<"$r" && ok "fake: one shard of three -> 'has 1 shards, expected 3'" || bad "fake one shard: $r"
out=$("$SI" ollama "$W/split/tiny-00002-of-00003.gguf" --name tiny:split2 --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 2 ]] && grep -q "pass the first part" <<<"$out" && ok "split: a later shard is refused (pass the first)" || bad "split part 2 rc=$rc: $out"
# a repetitive model (every logit 0: token 0 forever): the server aborts after > 30 identical chunks
$PY "$SN_SRC/tests/tools/gguf_edit.py" "$G" "$W/repeat.gguf" --zero output_norm.weight || bad "gguf_edit --zero"
out=$("$SI" ollama "$W/repeat.gguf" --name tiny:repeat --host "$FAKE_URL" "${TP[@]}" --smoke -n 48 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '\[smoke\] TRUNCATED by the server after 31 of 48 tokens: 31/31 identical' <<<"$out" && ! grep -q DIVERGED <<<"$out" \
  && ok "repetitive model: the truncated reply is reported as truncated, not as a divergence" || bad "repeat rc=$rc: $out"
stop "$FAKE_PID"

# --- older server (0.12.10: no logprobs): the gate compares text and says so
start_fake_ollama "$W/f20" -version 0.12.10
out=$("$SI" ollama "$G" --name tiny:f32 --host "$FAKE_URL" "${TP[@]}" --param stop='<|eot_id|>' --smoke -n 16 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '\[smoke\] OK: 16/16 tokens identical (compared text, byte for byte (Ollama < 0.12.11 has no logprobs))' <<<"$out" \
  && grep -q 'context: the server.s context .* equals sunny.s tokenizer' <<<"$out" && ok "0.12.10 server: smoke OK on text + re-tokenized context" || bad "old smoke rc=$rc: $out"
stop "$FAKE_PID"

# --- Modelfile: written with Ollama's quoting, read back by an Ollama-rules parser
start_fake_ollama "$W/f3"
out=$("$SI" ollama "$G" --name tiny:mf --host "$FAKE_URL" "${TP[@]}" --param stop='<|eot_id|>' --param num_ctx=2048 \
      --system '  padded "quoted" system  ' --modelfile-out "$W/Modelfile" --dry-run 2>&1); rc=$?
[[ $rc == 0 && -f $W/Modelfile ]] && ok "--modelfile-out written" || bad "modelfile rc=$rc: $out"
"$SN_TOOLS/fake-ollama" -parse-modelfile "$W/Modelfile" > "$W/mf.json" || bad "Modelfile does not parse"
$PY - "$W/mf.json" "$W/l3.gotmpl" <<'EOF' && ok "Modelfile round-trips: template, system, stop, num_ctx" || bad "Modelfile round trip: $(cat "$W/mf.json")"
import json, sys
c = json.load(open(sys.argv[1])); t = open(sys.argv[2]).read()
d = {}
for x in c: d.setdefault(x["name"], []).append(x["args"])
assert d["template"] == [t], d["template"]
assert d["system"] == ['  padded "quoted" system  '], d["system"]
assert d["stop"] == ["<|eot_id|>"] and d["num_ctx"] == ["2048"], d
assert d["model"][0].endswith(".gguf")
EOF
printf 'x"\n"""\n{{ .Prompt }}' > "$W/bad.gotmpl" # no spelling keeps it: a line ends in " and one in """
out=$("$SI" ollama "$G" --name tiny:mf --host "$FAKE_URL" --template "$W/bad.gotmpl" --modelfile-out "$W/Modelfile2" --dry-run 2>&1); rc=$?
[[ $rc == 1 && ! -e $W/Modelfile2 ]] && grep -q '"""' <<<"$out" && ok "template with \"\"\" refused for a Modelfile, nothing written" || bad "triple quote rc=$rc: $out"
stop "$FAKE_PID"

# --- old server (0.5.4): legacy {"model","modelfile"} body
start_fake_ollama "$W/f4" -version 0.5.4
r=$(curl -sS --noproxy '*' -w ' %{http_code}' "$FAKE_URL/api/create" -d "{\"model\":\"x\",\"files\":{\"x.gguf\":\"sha256:$hex\"}}")
[[ $r == *'path or Modelfile are required'*' 400' ]] && ok "0.5.4 fake rejects the JSON body like the real one" || bad "old server: $r"
out=$("$SI" ollama "$G" --name tiny:old --host "$FAKE_URL" "${TP[@]}" --param stop='<|eot_id|>' --param num_ctx=512 --run Hi 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "legacy" <<<"$out" && ok "0.5.4: installed through the legacy Modelfile body" || bad "old install rc=$rc: $out"
stop "$FAKE_PID"

start_fake_ollama "$W/f4b" -version 0.0.0 -legacy-create   # a dev build of an old server
out=$("$SI" ollama "$G" --name tiny:dev --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "retrying with it" <<<"$out" && ok "dev build (0.0.0) that wants the legacy body: retried with it" || bad "dev legacy rc=$rc: $out"
stop "$FAKE_PID"

# --- failure injection
start_fake_ollama "$W/f5" -fail-upload 1
out=$("$SI" ollama "$G" --name tiny:retry --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "retrying once" <<<"$out" && ok "500 mid-upload: retried once and succeeded" || bad "retry rc=$rc: $out"
stop "$FAKE_PID"
start_fake_ollama "$W/f6" -fail-upload 2
out=$("$SI" ollama "$G" --name tiny:retry --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "no space left" <<<"$out" && ok "500 twice: fails with the server's error" || bad "double failure rc=$rc: $out"
stop "$FAKE_PID"
start_fake_ollama "$W/f7" -digest-mismatch
out=$("$SI" ollama "$G" --name tiny:dm --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "digest mismatch" <<<"$out" && ok "digest mismatch reported as such" || bad "mismatch rc=$rc: $out"
stop "$FAKE_PID"
start_fake_ollama "$W/f8" -create-error "failed to validate GGUF with llama-quantize without compatibility patches: llama-quantize failed: exit status 1"
out=$("$SI" ollama "$G" --name tiny:ce --host "$FAKE_URL" "${TP[@]}" --json 2>"$W/ce.err"); rc=$?
[[ $rc == 1 ]] && grep -q "mid-stream" "$W/ce.err" && grep -q "llama-quantize failed" "$W/ce.err" \
  && ok "error line mid-create (HTTP 200) fails the install" || bad "create error rc=$rc: $(cat "$W/ce.err")"
grep -q '"error"' <<<"$out" && ok "--json carries the error" || bad "--json output: $out"
stop "$FAKE_PID"
start_fake_ollama "$W/f9" -forbid
out=$("$SI" ollama "$G" --name tiny:x --host "$FAKE_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "Host header" <<<"$out" && ok "403 explained as the Host-header rule" || bad "403 rc=$rc: $out"
stop "$FAKE_PID"
dead=${FAKE_URL}
out=$("$SI" ollama "$G" --name tiny:x --host "$dead" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "no Ollama server at" <<<"$out" && grep -q "ollama serve" <<<"$out" \
  && ok "server down: actionable message" || bad "down rc=$rc: $out"
out=$(OLLAMA_HOST=${dead#http://} "$SI" doctor 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "proxies\|never proxies" <<<"$out" && ok "doctor: server down fails, loopback proxy explained" || bad "doctor rc=$rc: $out"

# --- the trap saw nothing: loopback never went through a proxy
[[ $(cat "$TRAP_COUNT") == 0 ]] && ok "proxy trap recorded 0 requests" || bad "proxy trap saw $(cat "$TRAP_COUNT") request(s)"
# --- ...while a remote host does honour the proxy variables (and its 502 is explained)
out=$("$SI" ollama "$G" --name tiny:x --host http://ollama.invalid:11434 "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "a proxy?" <<<"$out" && [[ $(cat "$TRAP_COUNT") -ge 1 ]] \
  && ok "remote host goes through the proxy; its 502 is explained" || bad "remote via proxy rc=$rc count=$(cat "$TRAP_COUNT"): $out"
# --- something else answering on the port (HTML 502 from the trap used as the server)
out=$("$SI" ollama "$G" --name tiny:x --host "$TRAP_URL" "${TP[@]}" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "something other than Ollama" <<<"$out" && ok "HTML/502 answer on loopback explained" || bad "html rc=$rc: $out"
finish
