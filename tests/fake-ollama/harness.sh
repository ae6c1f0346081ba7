# harness.sh - sourced by tests/integration/test_ollama*.sh and test_lmstudio*.sh: builds the Go fakes
# into $SN_WORK, starts them on free loopback ports and stops them on exit. Needs lib.sh first.
export GOCACHE=$SN_WORK/gocache GOPATH=$SN_WORK/gopath GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off
# one tools dir per test script, so tests running in parallel never overwrite each other's binaries
SN_TOOLS=$SN_WORK/tools-$(basename "$0" .sh)
SN_PIDS=()
sn_cleanup() { local p; for p in "${SN_PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
sn_exit_hooks+=(sn_cleanup) # lib.sh runs it at exit, before removing scratch dirs
scratch "$SN_TOOLS"

need_go() { command -v go >/dev/null || skip "go toolchain missing (golang-go; run scripts/deps.sh)"; }

# build_go DIR NAME -> $SN_TOOLS/NAME
build_go() {
  mkdir -p "$SN_TOOLS"
  (cd "$1" && go build -o "$SN_TOOLS/$2" .) || { echo "FAIL - go build $1"; exit 1; }
}

# wait_port FILE -> prints the port once the server wrote it
wait_port() {
  local i
  for i in $(seq 1 100); do [[ -s $1 ]] && { cat "$1"; return 0; }; sleep 0.1; done
  echo "FAIL - server did not start ($1)" >&2; return 1
}

# start_fake_ollama DIR [flags...] -> sets FAKE_URL, FAKE_PID; models in DIR/models, log in DIR/log
start_fake_ollama() {
  local d=$1; shift
  rm -rf "$d"; mkdir -p "$d/models"
  "$SN_TOOLS/fake-ollama" -models "$d/models" -port-file "$d/port" -log "$d/log" \
    -worker "$SN_SRC/tests/fake-ollama/worker.mjs" "$@" 2>"$d/stderr" &
  FAKE_PID=$!; SN_PIDS+=("$FAKE_PID")
  FAKE_URL=http://127.0.0.1:$(wait_port "$d/port") || exit 1
}

# stop PID: kill a server and wait until its port is closed
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# start_proxy_trap DIR -> sets TRAP_URL, TRAP_COUNT (file)
start_proxy_trap() {
  local d=$1
  rm -rf "$d"; mkdir -p "$d"
  "$SN_TOOLS/proxy_trap" -port-file "$d/port" -count-file "$d/count" 2>"$d/stderr" &
  SN_PIDS+=("$!")
  TRAP_URL=http://127.0.0.1:$(wait_port "$d/port") || exit 1
  TRAP_COUNT=$d/count
}

# every proxy variable libcurl (or anything else) might read
proxy_env_on() {
  export http_proxy=$TRAP_URL HTTP_PROXY=$TRAP_URL https_proxy=$TRAP_URL HTTPS_PROXY=$TRAP_URL \
         ALL_PROXY=$TRAP_URL all_proxy=$TRAP_URL
  unset NO_PROXY no_proxy
}
proxy_env_off() { unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY ALL_PROXY all_proxy; }

# rt_gguf FAMILY SEED -> an f32 GGUF written by the runtime's test writer (independent of sunny-convert)
rt_gguf() {
  local fam=$1 seed=$2 d=$SN_WORK/fixtures/$1-tiny-seed$2 out=$SN_WORK/gguf/rt-$1-seed$2.gguf
  mkdir -p "$SN_WORK/gguf"
  exec 9>"$SN_WORK/gguf/.rt_gguf.lock"; flock 9   # tests may run in parallel
  if [[ ! -f $out ]]; then
    if [[ ! -f $d/.done ]]; then
      rm -rf "$d"
      $PY "$SN_SRC/tests/fixtures/gen_model.py" --family "$fam" --seed "$seed" --out "$d" >/dev/null || return 1
      touch "$d/.done"
    fi
    $PY "$SN_SRC/tests/tools/rt_hf2gguf.py" "$d" "$out.tmp" >/dev/null && mv "$out.tmp" "$out" || { flock -u 9; return 1; }
  fi
  flock -u 9
  echo "$out"
}

# jget JSON_FILE PYTHON_EXPR(j) -> prints the value
jget() { $PY -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- the install + smoke gate of the family end-to-end tests (build_go fake-ollama / fake-lmstudio first)

# start_fake_lmstudio HOME DIR -> sets LMS_URL, LMS_PID; the fake LM Studio serving HOME/.lmstudio/models
start_fake_lmstudio() {
  mkdir -p "$1/.lmstudio/models" "$2"
  "$SN_TOOLS/fake-lmstudio" -models "$1/.lmstudio/models" -port-file "$2/port" \
    -worker "$SN_SRC/tests/fake-ollama/worker.mjs" 2>"$2/stderr" &
  LMS_PID=$!; SN_PIDS+=("$LMS_PID")
  LMS_URL=http://127.0.0.1:$(wait_port "$2/port") || exit 1
}

# smoke_ok LABEL RC OUT -> ok when the install exited 0 and its output OUT says "[smoke] OK: N/N tokens identical"
smoke_ok() {
  if [[ $2 == 0 ]] && grep -q '^\[smoke\] OK: \([0-9]*\)/\1 tokens identical' "$3"; then
    ok "$1: $(grep -o '^\[smoke\] OK.*' "$3" | head -1)"
  else bad "$1: rc=$2 $(grep -E 'smoke|error' "$3" | head -5)"; return 1; fi
}

# smoke_ollama LABEL GGUF NAME OUT [flags...] -> sunny-integrate ollama GGUF into $FAKE_URL with --smoke -n 32
# (stdout and stderr in OUT), judged by smoke_ok
smoke_ollama() {
  local label=$1 gguf=$2 name=$3 out=$4; shift 4
  "$SN_BIN/sunny-integrate" ollama "$gguf" --name "$name" --host "$FAKE_URL" --smoke -n 32 "$@" >"$out" 2>&1
  smoke_ok "$label" $? "$out"
}

# smoke_lmstudio LABEL GGUF HOME OUT [flags...] -> sunny-integrate lmstudio GGUF into $LMS_URL, HOME as
# given and no lms CLI on PATH, with --smoke -n 32 (output in OUT), judged by smoke_ok
smoke_lmstudio() {
  local label=$1 gguf=$2 home=$3 out=$4; shift 4
  HOME=$home PATH=/usr/bin:/bin "$SN_BIN/sunny-integrate" lmstudio --gguf "$gguf" --smoke -n 32 --host "$LMS_URL" "$@" >"$out" 2>&1
  smoke_ok "$label" $? "$out"
}

# smoke_diverges LABEL GGUF OUT [flags...] -> the fake Ollama at $FAKE_URL serves another model: the
# install with --smoke must exit 1 and say "[smoke] DIVERGED"
smoke_diverges() {
  local label=$1 gguf=$2 out=$3 rc; shift 3
  "$SN_BIN/sunny-integrate" ollama "$gguf" --name sn-diverges --host "$FAKE_URL" --smoke -n 32 "$@" >"$out" 2>&1; rc=$?
  if [[ $rc == 1 ]] && grep -q '^\[smoke\] DIVERGED' "$out"; then ok "$label"
  else bad "$label: rc=$rc $(grep -E 'smoke|error' "$out" | head -3)"; return 1; fi
}

# smoke_pair LABEL GGUF NAME DIR [ollama flags...] -> builds both fakes, then GGUF installed with the
# smoke gate into a fake Ollama (DIR/f; left running: FAKE_URL) and a fake LM Studio (HOME DIR/home)
smoke_pair() {
  local label=$1 gguf=$2 name=$3 d=$4; shift 4
  build_go "$SN_SRC/tests/fake-ollama" fake-ollama
  build_go "$SN_SRC/tests/fake-lmstudio" fake-lmstudio
  start_fake_ollama "$d/f"
  smoke_ollama "$label: ollama" "$gguf" "$name" "$d/o.out" "$@"
  start_fake_lmstudio "$d/home" "$d/l"
  smoke_lmstudio "$label: lmstudio" "$gguf" "$d/home" "$d/l.out"
}
