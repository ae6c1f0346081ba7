#!/usr/bin/env bash
# test_cli_edges.sh - what a new user hits first, without any server: `ollama --dry-run` previews
# with nothing listening; --modelfile-out is written only on success; a dead proxy in front of a
# remote host is named as such; sunny-run's edge messages (directory, missing path, context sizes,
# full disk); every --help lists each option with its default. Cheap: one tiny GGUF, no oracle.
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
SI=$SN_BIN/sunny-integrate
SR=$SN_BIN/sunny-run
W=$SN_WORK/cli-edges
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
G=$(rt_gguf llama3 1234) || { bad "fixture GGUF"; finish; }
printf '{{ .Prompt }}' > "$W/t.gotmpl"
unset OLLAMA_HOST http_proxy https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
DEAD=http://127.0.0.1:9   # discard port: nothing listens

# --- bug 4: --dry-run previews with no server; --modelfile-out only after success
out=$("$SI" ollama "$G" --name tiny:dry --host $DEAD --template "$W/t.gotmpl" --dry-run --modelfile-out "$W/mf1" 2>&1); rc=$?
[[ $rc == 0 ]] && ok "ollama --dry-run with no server exits 0" || bad "dry-run no server rc=$rc: $out"
grep -q "did not contact a server" <<<"$out" && ok "dry run says it did not contact a server" || bad "no 'did not contact': $out"
grep -q "^FROM " <<<"$out" && grep -q "^TEMPLATE" <<<"$out" && ok "dry run prints the Modelfile" || bad "no Modelfile printed: $out"
grep -q 'POST .*/api/create  {"model":"tiny:dry"' <<<"$out" && ok "dry run prints the create request" || bad "no create request: $out"
[[ -f $W/mf1 ]] && ok "dry run that succeeded writes --modelfile-out" || bad "dry run: no Modelfile file"
out=$("$SI" ollama "$G" --name tiny:x --host $DEAD --template "$W/t.gotmpl" --modelfile-out "$W/mf2" 2>&1); rc=$?
[[ $rc == 1 && ! -e $W/mf2 && -z $(leftovers "$W/mf2") ]] && ok "failed install (no server) leaves no --modelfile-out" || bad "failed install rc=$rc, mf2: $(ls "$W")"

# --- bug 5: a remote host behind a dead proxy
out=$(http_proxy=$DEAD "$SI" ollama "$G" --name tiny:x --host http://10.255.255.1:11434 --template "$W/t.gotmpl" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "proxy $DEAD (from http_proxy) did not answer" <<<"$out" && ! grep -q "ollama serve" <<<"$out" \
  && ok "dead proxy: says the proxy did not answer and names it" || bad "dead proxy rc=$rc: $out"
# uppercase HTTP_PROXY counts for a remote host, as in Ollama's Go client (libcurl alone ignores it)
out=$(HTTP_PROXY=$DEAD "$SI" ollama "$G" --name tiny:x --host http://10.255.255.1:11434 --template "$W/t.gotmpl" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "proxy $DEAD (from http_proxy) did not answer" <<<"$out" \
  && ok "uppercase HTTP_PROXY is used for a remote host (Go's ProxyFromEnvironment)" || bad "HTTP_PROXY rc=$rc: $out"
out=$(HTTP_PROXY=$DEAD REQUEST_METHOD=GET "$SI" ollama "$G" --name tiny:x --host http://sunny-host.invalid:11434 --template "$W/t.gotmpl" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "cannot resolve the host" <<<"$out" && ! grep -q "proxy" <<<"$out" \
  && ok "HTTP_PROXY ignored in a CGI environment (REQUEST_METHOD set): the host is resolved directly" || bad "CGI rc=$rc: $out"
out=$(http_proxy=$DEAD "$SI" ollama "$G" --name tiny:x --host $DEAD --template "$W/t.gotmpl" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "ollama serve" <<<"$out" && ! grep -q "proxy" <<<"$out" \
  && ok "loopback with a proxy set: still 'start ollama serve' (loopback is never proxied)" || bad "loopback rc=$rc: $out"

# --- bug 6: sunny-run edges
D=$W/hf-folder; mkdir -p "$D"; echo '{}' > "$D/config.json"
out=$("$SR" "$D" -p hi 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "convert it first with sunny-convert" <<<"$out" && ok "sunny-run on a directory: convert it first with sunny-convert" || bad "dir rc=$rc: $out"
out=$("$SR" "$W/no-such.gguf" -p hi 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "no-such.gguf: No such file or directory" <<<"$out" && ok "sunny-run on a missing path: No such file" || bad "missing rc=$rc: $out"
out=$("$SN_BIN/sunny-convert" "$W/no-such-folder" -o "$W/x.gguf" 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "no-such-folder.*No such file or directory" <<<"$out" && ! grep -q "not a directory" <<<"$out" \
  && ok "sunny-convert on a missing folder: No such file (not 'not a directory')" || bad "convert missing rc=$rc: $out"
train=$($PY - "$G" <<'PY'
import sys
import struct
# the first context_length KV of the GGUF header, read the plain way
b = open(sys.argv[1], "rb").read(1 << 20)
i = b.find(b".context_length")
print(struct.unpack_from("<I", b, i + len(".context_length") + 4)[0])
PY
)
big=$((train * 2))
out=$("$SR" "$G" -p hi -n 2 -c $big 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q "warning: -c $big is above the context .* trained for ($train tokens)" <<<"$out" \
  && ok "-c above the trained context ($train): runs, with a warning" || bad "-c $big rc=$rc: $out"
out=$("$SR" "$G" -p hi -n 2 -c 2000000000 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "KV cache, more than this machine's .* MB of RAM" <<<"$out" && ok "-c that cannot be allocated: refused before allocating" || bad "-c huge rc=$rc: $out"
a=$("$SR" "$G" --prompt-ids 1,2,3 -n 8 --json 2>/dev/null); b=$("$SR" "$G" --prompt-ids 1,2,3 -n 8 --json --mmap 2>/dev/null)
strip() { sed -E 's/"(prefill|decode)_tok_s":[0-9.e+-]+//g' <<<"$1"; }
[[ -n $a && "$(strip "$a")" == "$(strip "$b")" ]] && grep -q '"top_logprobs"' <<<"$a" \
  && ok "--mmap (weights read in place) gives the record of the default (copied into huge pages)" || bad "--mmap differs: $a / $b"
out=$("$SR" "$G" --prompt-ids 1,2,3,4,5,6 -c 4 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q "the default -n" <<<"$out" && ! grep -q -- "-n 32" <<<"$out" && ok "context error without -n says it is the default" || bad "ctx default-n rc=$rc: $out"
out=$("$SR" "$G" --prompt-ids 1,2,3,4,5,6 -c 4 -n 7 2>&1); rc=$?
[[ $rc == 1 ]] && grep -q -- "-n 7 exceed" <<<"$out" && ok "context error with -n names it" || bad "ctx -n rc=$rc: $out"
out=$("$SR" "$G" -p hi -n 2 2>&1 >/dev/full); rc=$?
[[ $rc == 1 && $(grep -c "No space left on device" <<<"$out") == 1 ]] && ! grep -q "$G" <<<"$out" \
  && ok "stdout on a full disk: exit 1, one 'No space left' line, no path repeated" || bad "full disk rc=$rc: $out"
out=$("$SR" -m "$G" --prompt "hi" --n-predict 3 --ctx-size 64 --threads 1 --json 2>&1); rc=$?
[[ $rc == 0 ]] && grep -q '"ids":\[[0-9]*,[0-9]*,[0-9]*\]' <<<"$out" && ok "llama-cli spellings: -m, --n-predict, --ctx-size, --threads" || bad "llama-cli flags rc=$rc: $out"

# --- every --help: one "Usage:" style, each option with its default (or "none"/"off"), and every
# option the program parses is listed
check_help() { # LABEL CMD... -> the help of CMD
  local label=$1; shift
  local h; h=$("$@" 2>&1); local rc=$?
  [[ $rc == 0 ]] || { bad "$label: exit $rc"; return; }
  [[ $(head -1 <<<"$h") == Usage:* ]] && ok "$label: starts with 'Usage:'" || bad "$label: first line is not 'Usage:': $(head -1 <<<"$h")"
  # option entries: "  -x, --y ARG   text" plus continuation lines indented deeper, inside "Options:"
  local missing
  missing=$(awk '
    /^Options:/ { on = 1; next }
    on && /^[^ ]/ { on = 0 }
    on && /^  [^ ]/ { if (entry != "") check(); entry = $0; next }
    on && /^   / { entry = entry " " $0; next }
    END { if (entry != "") check() }
    function check(  name) {
      name = entry; sub(/^  /, "", name); sub(/   .*/, "", name)
      if (name ~ /^(-h, --help|--version)$/) return
      if (entry !~ /\(default/ && entry !~ /default:/) print name
    }' <<<"$h")
  [[ -z $missing ]] && ok "$label: every option states its default" || bad "$label: no default for: $(tr '\n' ';' <<<"$missing")"
  printf '%s\n' "$h" >"$W/help-${label// /_}.txt"
}
check_help "sunny-run --help" "$SR" --help
check_help "sunny-convert --help" "$SN_BIN/sunny-convert" --help
check_help "sunny-integrate --help" "$SI" --help
for c in ollama lmstudio doctor template digest; do
  check_help "sunny-integrate $c --help" "$SI" $c --help
  cmp -s <("$SI" $c --help) <("$SI" help $c) && ok "sunny-integrate help $c = $c --help" || bad "help $c differs from $c --help"
  out=$("$SI" $c --no-such-flag 2>&1); rc=$?
  [[ $rc == 2 ]] && grep -q "Try 'sunny-integrate $c --help'" <<<"$out" && ok "$c: a usage error points at its own help" || bad "$c usage error rc=$rc: $out"
done
for prog in sunny-run sunny-convert; do  # every flag the program parses appears in its help
  src=$SN_SRC/cmd/$prog.c
  flags=$(grep -o 'strcmp(a, "-[-a-z0-9]*")' "$src" | sed 's/.*"\(.*\)")/\1/' | sort -u)
  h=$(cat "$W/help-${prog}_--help.txt")
  miss=""
  for f in $flags; do
    [[ $f == --ctx ]] && continue   # an old spelling of --ctx-size, kept working
    grep -qE -- "(^|[ ,])$f([ ,=]|$)" <<<"$h" || miss="$miss $f"
  done
  [[ -z $miss ]] && ok "$prog --help lists every flag it parses" || bad "$prog --help misses:$miss"
done

# --- `make demo` needs only the build dependencies (its model comes from scripts/demo_model.c): what
# deps.sh demo would install on a machine that has nothing (stub dpkg-query: every package missing;
# stub id: not root, so it only prints)
S=$W/stub; mkdir -p "$S"
printf '#!/bin/sh\nexit 1\n' >"$S/dpkg-query"; printf '#!/bin/sh\necho 1000\n' >"$S/id"; chmod +x "$S"/*
want=$(PATH=$S:$PATH bash "$SN_SRC/scripts/deps.sh" demo 2>&1 | grep "apt-get install")
all=$(PATH=$S:$PATH bash "$SN_SRC/scripts/deps.sh" 2>&1 | grep "apt-get install")
if [[ -n $want ]] && ! grep -qE "python3|golang-go|nodejs|npm|clang" <<<"$want" && grep -q "python3-torch" <<<"$all"; then
  ok "deps.sh demo asks for the build deps only (no Python, Go, node/npm): ${want#*install -y }"
else
  bad "deps.sh demo: '$want' (full: '$all')"
fi

finish
