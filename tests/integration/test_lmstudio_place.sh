#!/usr/bin/env bash
# test_lmstudio_place.sh - sunny-integrate lmstudio: models-dir resolution in temporary HOMEs (pointer
# file, ~/.cache/lm-studio, ~/.lmstudio, settings.json with/without downloadsFolder, unreadable or
# malformed settings, no home at all) with the exact installed path asserted; placement modes
# (hardlink = same inode, EXDEV fallback to copy on a second filesystem, copy, symlink, move), --force,
# --dry-run (nothing changes), name/path-escape rejection, split parts and mmproj; then the smoke test
# against the fake LM Studio (REST load, fake `lms` CLI, JIT, divergent model, runtime errors) with a
# proxy trap that must see nothing; doctor --lmstudio on placed, misplaced and broken files. GGUFs come
# from the runtime's test writer (no sunny-convert needed) except the one with a chat template.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
SI=$SN_BIN/sunny-integrate
W=$SN_WORK/lmstudio-place
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
G=$(rt_gguf llama3 1234) || { bad "fixture GGUF"; finish; }
NAME=llama3-tiny-seed1234
REL=sunny-local/$NAME-GGUF/$NAME-F32.gguf
snap() { (cd "$1" && find . -printf '%p %s %i %l\n' | sort) 2>/dev/null; }

# --- models dir resolution, exactly like lms
H=$W/h1; mkdir -p "$H/custom-home" "$H/dl"
printf '  %s\n' "$H/custom-home" > "$H/.lmstudio-home-pointer"
printf '{"downloadsFolder":"%s","other":1}' "$H/dl" > "$H/custom-home/settings.json"
before=$(md5sum "$H/.lmstudio-home-pointer" "$H/custom-home/settings.json")
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 0 && -f $H/dl/$REL ]] && ok "pointer + settings.downloadsFolder -> $H/dl/$REL" || bad "pointer/downloadsFolder rc=$rc: $out"
grep -q "downloadsFolder" <<<"$out" && ok "explains why (downloadsFolder)" || bad "no reason printed: $out"
[[ $(md5sum "$H/.lmstudio-home-pointer" "$H/custom-home/settings.json") == "$before" ]] && ok "pointer and settings untouched" || bad "pointer/settings modified"

H=$W/h2; mkdir -p "$H/custom-home/models"
echo "$H/custom-home" > "$H/.lmstudio-home-pointer"
echo '{"downloadsFolder":42}' > "$H/custom-home/settings.json"
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 0 && -f $H/custom-home/models/$REL ]] && ok "non-string downloadsFolder -> <home>/models" || bad "non-string rc=$rc: $out"

H=$W/h3; mkdir -p "$H/.cache/lm-studio/models" "$H/.lmstudio/models"
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 0 && -f $H/.cache/lm-studio/models/$REL && ! -e $H/.lmstudio/models/sunny-local ]] \
  && ok "~/.cache/lm-studio wins over ~/.lmstudio without a pointer" || bad ".cache rc=$rc: $out"
[[ ! -e $H/.lmstudio-home-pointer ]] && ok "no pointer file created (lms would create one)" || bad "pointer created"

H=$W/h4; mkdir -p "$H/.lmstudio/models"
echo '{not json' > "$H/.lmstudio/settings.json"
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 0 && -f $H/.lmstudio/models/$REL ]] && ok "malformed settings.json -> ~/.lmstudio/models" || bad ".lmstudio rc=$rc: $out"

H=$W/h5; mkdir -p "$H/.lmstudio/models" "$H/.lmstudio/settings.json"   # a directory: unreadable as a file
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 0 && -f $H/.lmstudio/models/$REL ]] && ok "unreadable settings.json -> <home>/models" || bad "unreadable rc=$rc: $out"

H=$W/h6; mkdir -p "$H"
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 1 && -z $(ls -A "$H") ]] && grep -q -- "--models-dir" <<<"$out" \
  && ok "no LM Studio home: exit 1, asks for --models-dir, creates nothing" || bad "no home rc=$rc: $out $(ls -A "$H")"

# --- a missing models folder: created when resolved (lms import does mkdir -p), an error when explicit
H=$W/h7; mkdir -p "$H/.lmstudio"
out=$(HOME=$H "$SI" lmstudio --gguf "$G" 2>&1); rc=$?
[[ $rc == 0 && -f $H/.lmstudio/models/$REL ]] && grep -q "creating the models dir" <<<"$out" \
  && ok "resolved models dir missing: created like lms import, file placed" || bad "mkdir models rc=$rc: $out"
out=$("$SI" lmstudio --gguf "$G" --models-dir "$W/no-such-dir" 2>&1); rc=$?
[[ $rc == 1 && ! -e $W/no-such-dir ]] && grep -q "does not exist" <<<"$out" \
  && ok "explicit --models-dir that does not exist: exit 1, nothing created" || bad "explicit missing rc=$rc: $out"

# --- placement modes
M=$W/m; mkdir -p "$M"
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" 2>&1); rc=$?
[[ $rc == 0 && $(stat -c %i "$M/$REL") == $(stat -c %i "$G") ]] && ok "hardlink (default): same inode" || bad "hardlink rc=$rc: $out"
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "already in place" <<<"$out" && ok "the same file already there (same inode): success, nothing placed" || bad "same file rc=$rc: $out"
cp "$G" "$W/other.gguf"; $PY -c 'import sys; f=open(sys.argv[1], "r+b"); f.seek(-1, 2); b=f.read(1); f.seek(-1, 2); f.write(bytes([b[0] ^ 1]))' "$W/other.gguf"
out=$("$SI" lmstudio --gguf "$W/other.gguf" --models-dir "$M" --repo "$NAME-GGUF" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "Target file already exists" <<<"$out" && ok "existing target with other bytes refused without --force" || bad "no-force rc=$rc: $out"
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --force 2>&1); rc=$?
[[ $rc == 0 && $(stat -c %i "$M/$REL") == $(stat -c %i "$G") && -z $(leftovers "$M/$REL") ]] \
  && ok "hardlink --force re-placing the same file: still the same inode, no temp link left" \
  || bad "hardlink --force rc=$rc: $out $(leftovers "$M/$REL")"
s0=$(snap "$M")
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy --force --dry-run 2>&1); rc=$?
[[ $rc == 0 && $(snap "$M") == "$s0" ]] && grep -q "would copy" <<<"$out" && ok "--dry-run prints the plan, changes nothing" || bad "dry-run rc=$rc: $out"
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --mode copy --force 2>&1); rc=$?
[[ $rc == 0 && $(stat -c %i "$M/$REL") != $(stat -c %i "$G") ]] && cmp -s "$G" "$M/$REL" && [[ -z $(leftovers "$M/$REL") ]] \
  && ok "copy --force: new inode, identical bytes, no .part left" || bad "copy rc=$rc: $out"
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --mode symlink --force 2>&1); rc=$?
[[ $rc == 0 && -L $M/$REL && $(readlink "$M/$REL") == $(realpath "$G") ]] && ok "symlink: absolute target" || bad "symlink rc=$rc: $out"
cp "$G" "$W/movable.gguf"
out=$("$SI" lmstudio --gguf "$W/movable.gguf" --models-dir "$M" --repo Moved-GGUF --mode move 2>&1); rc=$?
[[ $rc == 0 && ! -e $W/movable.gguf && -f $M/sunny-local/Moved-GGUF/$NAME-F32.gguf ]] && ok "move: source gone, target placed" || bad "move rc=$rc: $out"
if [[ -d /dev/shm && $(stat -f -c %T /dev/shm) == tmpfs && $(stat -c %d /dev/shm) != $(stat -c %d "$W") ]]; then
  X=/dev/shm/sunny-lms-$$; rm -rf "$X"; mkdir -p "$X"
  out=$("$SI" lmstudio --gguf "$G" --models-dir "$X" 2>&1); rc=$?
  [[ $rc == 0 ]] && grep -q "copying instead" <<<"$out" && cmp -s "$G" "$X/$REL" && [[ -z $(leftovers "$X/$REL") ]] \
    && ok "hardlink across filesystems (EXDEV) falls back to copy and says so" || bad "EXDEV rc=$rc: $out"
  rm -rf "$X"
else
  skip_check "no second filesystem (tmpfs /dev/shm) for the EXDEV case"
fi

# --- names that could escape the models dir, and bad inputs: exit 2/1, nothing created
s0=$(snap "$M")
for bad_name in "../evil" "a/b" ".." ".hidden" "trailing." " lead" 'x:y' 'q?' "$(printf 'ctl\001')"; do
  out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --publisher "$bad_name" 2>&1); rc=$?
  [[ $rc == 2 ]] || bad "publisher '$bad_name' accepted (rc=$rc)"
  out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --repo "$bad_name" 2>&1); rc=$?
  [[ $rc == 2 ]] || bad "repo '$bad_name' accepted (rc=$rc)"
done
[[ $(snap "$M") == "$s0" && ! -e $W/evil ]] && ok "path-escape names rejected (exit 2), nothing created" || bad "escape attempt changed the disk"
# lms's own name rules (its import validator) allow dots inside a name: "v1..2" is a folder name, not a path
out=$("$SI" lmstudio --gguf "$G" --models-dir "$M" --publisher "v1..2" --dry-run 2>&1); rc=$?
[[ $rc == 0 && $(snap "$M") == "$s0" ]] && ok "'v1..2' is a valid publisher, as in lms (dry run)" || bad "v1..2 rc=$rc: $out"
head -c 4096 /dev/urandom > "$W/junk.gguf"
out=$("$SI" lmstudio --gguf "$W/junk.gguf" --models-dir "$M" 2>&1); rc=$?
[[ $rc == 1 && $(snap "$M") == "$s0" ]] && ok "not a GGUF: exit 1, nothing placed" || bad "junk rc=$rc: $out"
grep -q "chat_template" <<<"$("$SI" lmstudio --gguf "$G" --models-dir "$W/m2" --dry-run 2>&1)" \
  && ok "warns when the GGUF has no tokenizer.chat_template" || bad "no chat_template warning"

# --- doctor --lmstudio: each problem named with its fix, exit 1; a clean placement exit 0
out=$("$SI" doctor --lmstudio "$M/$REL" --models-dir "$M" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "problem: no tokenizer.chat_template: LM Studio falls back" <<<"$out" && grep -q "fix: " <<<"$out" \
  && ok "doctor --lmstudio: no chat template named, with its fix, exit 1" || bad "doctor lms rc=$rc: $out"
out=$("$SI" doctor --lmstudio "$G" --models-dir "$M" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "is not at <models>/<publisher>/<repo>/<file>.gguf" <<<"$out" \
  && ok "doctor --lmstudio: a file outside the models dir layout named" || bad "doctor lms layout rc=$rc: $out"
out=$("$SI" doctor --lmstudio "$W/junk.gguf" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "problem: " <<<"$out" && ok "doctor --lmstudio: not a GGUF named" || bad "doctor lms junk rc=$rc: $out"
mkdir -p "$W/mq"   # a GGUF with a chat template: sunny-convert's (the runtime's writer writes none)
Q=$(gguf_of qwen3 q8_0) && "$SI" lmstudio "$Q" --models-dir "$W/mq" --mode symlink >/dev/null 2>&1
out=$("$SI" doctor --lmstudio "$(ls "$W"/mq/sunny-local/*/*.gguf)" --models-dir "$W/mq" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "^  clean: " <<<"$out" && ok "doctor --lmstudio: a clean symlinked placement, exit 0 and why" || bad "doctor lms clean rc=$rc: $out"

# --- split parts placed together, mmproj beside
mkdir -p "$W/split" "$W/ms"; ln -f "$G" "$W/split/big-00001-of-00002.gguf"; ln -f "$G" "$W/split/big-00002-of-00002.gguf"
out=$("$SI" lmstudio --gguf "$W/split/big-00001-of-00002.gguf" --models-dir "$W/ms" --repo Split-GGUF --mmproj "$G" 2>&1); rc=$?
D=$W/ms/sunny-local/Split-GGUF
[[ $rc == 0 && -f $D/$NAME-F32-00001-of-00002.gguf && -f $D/$NAME-F32-00002-of-00002.gguf && -f $D/mmproj-$NAME-F32.gguf ]] \
  && ok "split parts placed together with the mmproj beside them" || bad "split rc=$rc: $out $(ls "$D" 2>&1)"
out=$("$SI" lmstudio --gguf "$W/split/big-00002-of-00002.gguf" --models-dir "$W/ms2" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "first part" <<<"$out" && ok "second split part refused" || bad "part 2 rc=$rc: $out"

# --- smoke against the fake LM Studio
need_oracle
need_go
build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
build_go "$SN_SRC/tests/tools/proxy_trap" proxy_trap
G2=$(rt_gguf llama3 999) || { bad "second fixture GGUF"; finish; }
start_proxy_trap "$W/trap"
proxy_env_on
start_lms() { # DIR MODELS [flags]
  local d=$1 m=$2; shift 2
  rm -rf "$d"; mkdir -p "$d"
  "$SN_TOOLS/fake-lmstudio" -models "$m" -port-file "$d/port" -log "$d/log" \
    -worker "$SN_SRC/tests/fake-ollama/worker.mjs" "$@" 2>"$d/stderr" &
  LMS_PID=$!; SN_PIDS+=("$LMS_PID")
  LMS_URL=http://127.0.0.1:$(wait_port "$d/port") || exit 1
}
S=$W/smoke-models
"$SI" lmstudio --gguf "$G" --models-dir "$S" >/dev/null 2>&1
mkdir -p "$S/flat-file-is-ignored"; ln -f "$G" "$S/top-level-ignored.gguf"
start_lms "$W/l1" "$S"
PATH_NO_LMS=/usr/bin:/bin
out=$(PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 16 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '\[smoke\] OK: 16/16 tokens identical' <<<"$out" && grep -q "loaded .* over REST" <<<"$out" \
  && grep -q "arch = llama (matches the GGUF)" <<<"$out" && ok "smoke via REST load: OK 16/16, arch checked" || bad "REST smoke rc=$rc: $out"
grep -q "^SSE stream" "$W/l1/log" && ok "the completion was streamed (server-sent events)" || bad "completion not streamed: $(cat "$W/l1/log")"
# without --host: the port of the last server from <home>/.internal/http-server-config.json
H=$W/h7; mkdir -p "$H/.lmstudio/.internal"; ln -s "$S" "$H/.lmstudio/models"
printf '{"port":%s,"networkInterface":"127.0.0.1"}' "${LMS_URL##*:}" > "$H/.lmstudio/.internal/http-server-config.json"
out=$(HOME=$H PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --force --smoke -n 4 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "http-server-config.json" <<<"$out" && grep -q "OK: 4/4" <<<"$out" \
  && ok "server port taken from .internal/http-server-config.json" || bad "server config rc=$rc: $out"
# a fake `lms` CLI on PATH is preferred and called with --exact <publisher/repo/file>
mkdir -p "$W/bin"
cat > "$W/bin/lms" <<EOF
#!/bin/bash
if [[ \$1 == ls ]]; then   # what lms ls --json reports for an indexed file
  echo '[{"type":"llm","modelKey":"$NAME","path":"$REL","format":"gguf","architecture":"llama","quantization":{"name":"F32","bits":32}}]'
  exit 0
fi
echo "\$@" > "$W/lms.args"
[[ \$1 == load && \$2 == --exact ]] || exit 3
curl -sf --noproxy '*' "$LMS_URL/api/v1/models/load" -d "{\"path\":\"\$3\",\"identifier\":\"\$5\"}" >/dev/null
EOF
chmod +x "$W/bin/lms"
out=$(PATH=$W/bin:$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "OK: 8/8" <<<"$out" && grep -q -- "load --exact $REL --identifier sunny-smoke" "$W/lms.args" \
  && ok "lms on PATH: lms load --exact $REL --identifier sunny-smoke used" || bad "lms path rc=$rc: $out $(cat "$W/lms.args" 2>&1)"
grep -q "lms ls: $REL listed as $NAME (llama, F32)" <<<"$out" && ok "placement verified with lms ls --json (path, architecture)" || bad "lms ls verification: $out"
stop "$LMS_PID"
start_lms "$W/l2" "$S" -no-load -no-v0
out=$(PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "does not list" <<<"$out" && ok "old server without /api/v0: cannot find the key, says how to check" || bad "old server rc=$rc: $out"
stop "$LMS_PID"
# < 0.4 (no /api/v1/models/load, so LM Studio's 200 {"error":"Unexpected endpoint or method. ..."}),
# "Require Authentication" on, and the running server's port published in .internal/http-server.json
H=$W/h9; mkdir -p "$H/.lmstudio/.internal"; ln -s "$S" "$H/.lmstudio/models"
printf '{"port":1}' > "$H/.lmstudio/.internal/http-server-config.json"   # stale configured port
start_lms "$W/l3" "$S" -no-load -api-token sekrit -info-file "$H/.lmstudio/.internal/http-server.json"
r=$(curl -sS --noproxy '*' -w ' %{http_code}' -H 'Authorization: Bearer sekrit' "$LMS_URL/api/v1/nope" -d '{}')
[[ $r == *'Unexpected endpoint or method. (POST /api/v1/nope)'*' 200' ]] && ok "fake: unknown route is HTTP 200 with an error body" || bad "unknown route: $r"
out=$(HOME=$H PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --force --smoke -n 8 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "LM_API_TOKEN" <<<"$out" && ok "server requiring a token: 401 explained (LM_API_TOKEN)" || bad "token rc=$rc: $out"
out=$(HOME=$H LM_API_TOKEN=sekrit PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --force --smoke -n 8 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "JIT" <<<"$out" && grep -q "OK: 8/8" <<<"$out" && grep -q "POST /api/v1/models/load" "$W/l3/log" \
  && ok "no load endpoint (< 0.4, 200 with an error): fell back to JIT loading, OK (Bearer token sent)" || bad "JIT rc=$rc: $out"
grep -q "port of the running server, from .*http-server.json" <<<"$out" \
  && ok "port read from .internal/http-server.json before the configured one" || bad "http-server.json not used: $out"
grep -q "compared text, byte for byte (LM Studio returns no logprobs)" <<<"$out" && ok "smoke says it compared text (no logprobs from LM Studio)" || bad "method: $out"
stop "$LMS_PID"
# streamed completion and the stall rule (SN_HTTP_STALL_S shortens the 60 s): a server that sends
# one event and then nothing for 300 s is caught after 2 s of silence, naming the request; one that
# sends an event every 0.6 s (5 s for 8 tokens) is slow but moving and succeeds
start_lms "$W/l6" "$S" -stream-stall 300s
t0=$SECONDS
out=$(SN_HTTP_STALL_S=2 PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
dt=$((SECONDS - t0))
[[ $rc == 1 && $dt -lt 120 ]] && grep -q "POST /api/v0/completions: nothing moved for 2 s, the server stalled" <<<"$out" \
  && ok "stalled stream caught after 2 s of silence (${dt} s in all), the request named" || bad "stalled stream rc=$rc ${dt}s: $out"
stop "$LMS_PID"
start_lms "$W/l7" "$S" -stream-delay 600ms
out=$(SN_HTTP_STALL_S=2 PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "OK: 8/8" <<<"$out" && ok "slow but moving stream (0.6 s per event, 2 s stall limit): OK 8/8" || bad "slow stream rc=$rc: $out"
stop "$LMS_PID"
start_lms "$W/l4" "$S" -serve-gguf "$G2"
out=$(PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 16 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q '\[smoke\] DIVERGED at token' <<<"$out" && ok "divergent model: exit 1 with the divergence" || bad "divergent rc=$rc: $out"
stop "$LMS_PID"
start_lms "$W/l5" "$S" -runtime-error "No LM Runtime found for model format 'gguf'!"
out=$(PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "lms runtime get" <<<"$out" && ok "'No LM Runtime found' mapped to \`lms runtime get\`" || bad "runtime error rc=$rc: $out"
stop "$LMS_PID"
out=$(PATH=$PATH_NO_LMS "$SI" lmstudio --gguf "$G" --models-dir "$S" --force --smoke -n 8 --host "$LMS_URL" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "no LM Studio server at" <<<"$out" && ok "server down: actionable message" || bad "down rc=$rc: $out"
[[ $(cat "$TRAP_COUNT") == 0 ]] && ok "proxy trap recorded 0 requests" || bad "proxy trap saw $(cat "$TRAP_COUNT")"
finish
