#!/usr/bin/env bash
# test_first_hour.sh - what a new user sees and types in the first hour (issue "a newcomer's first
# hour"), outputs and exit codes asserted, no server and no oracle:
#  1. sunny-convert with stdout and stderr redirected says on stderr what it wrote (path, type, size in
#     the one size format, time), for GGUF and --blob; on a terminal (script(1)) the progress line
#     shows no ETA before the rate means something and ends with a newline before the summary; no
#     escape codes when stderr is not a terminal.
#  3. sunny-run takes llama.cpp's common flags: GPU flags ignored with one note, a positional prompt
#     (llama-run), -n -1 / -2 (to the end of generation / of the context), the penalty flags (their
#     numerics: unit/test_model against llama.cpp's own cases); "1 thread"; model.safetensors is
#     refused with the exact sunny-convert command.
#  4. scripts/deps.sh (stubbed apt-get, dpkg-query and id on PATH): as root it names what is missing
#     before installing, installs only that with --no-upgrade, and runs apt-get update only when the
#     install fails; with nothing missing it runs apt-get not at all.
#  8. Chat (-cnv; the default with no prompt when the GGUF has a chat template, as llama-cli): the
#     first reply is what sunny-run -p gives on the turn rendered by jinja2 from the model's own
#     tokenizer_config.json; a second turn continues the conversation (its reply differs from the
#     same line asked first); -no-cnv without a prompt is a usage error.
#  7. An unsupported architecture is refused (exit 1) naming what sunny converts, docs/MODELS.md, and
#     that a GGUF made by llama.cpp's converter still installs.
#  5. `sunny-integrate template` on the RWKV-7 folder (no tokenizer_config.json) proves the world
#     template the GGUF converted from it carries, with the same verdict; a folder with no template
#     says how to give one with flags each command takes (never `template --template`).
#  6. --json: every command's error is one {"error": {"message", "exit_code"}} object on stdout, the
#     exit code unchanged (1 failure, 2 usage); installs say sizes in the one format.
#  2. A folder without tokenizer_config.json converts (exit 0) with a warning naming the consequence
#     (base model to Ollama / LM Studio) and the fix (--template, or the instruct model's file).
source "$(dirname "$0")/lib.sh"
CONV=$SN_BIN/sunny-convert
RUN=$SN_BIN/sunny-run
W=$SN_WORK/first-hour
scratch "$W"
rm -rf "$W" && mkdir -p "$W"
"$SN_BUILD/scripts/demo_model" --out "$W/rwkv" >/dev/null 2>&1 || { bad "demo_model failed"; finish; }
size_re='[0-9]+\.[0-9] [kMG]B \([0-9,]+ bytes\)'

# ---- 1. the summary line, always on stderr
"$CONV" "$W/rwkv" -o "$W/r.gguf" --outtype f16 >"$W/c.out" 2>"$W/c.err"; rc=$?
bytes=$(stat -c %s "$W/r.gguf" 2>/dev/null)
grouped=$(sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$bytes")
[[ $rc == 0 && ! -s $W/c.out ]] && grep -Eq "^sunny-convert: wrote $W/r.gguf: GGUF rwkv7 F16, [0-9]+ tensors, $size_re in [0-9.]+s\$" "$W/c.err" \
  && grep -q "($grouped bytes)" "$W/c.err" \
  && ok "convert redirected: one summary line on stderr: $(cat "$W/c.err")" || bad "convert redirected: rc=$rc out=$(cat "$W/c.out") err=$(cat "$W/c.err")"
grep -q $'\e' "$W/c.err" && bad "escape codes in a redirected stderr" || ok "no escape codes when stderr is not a terminal"
"$CONV" "$W/rwkv" --blob -o "$W/r.snb" --dtype fp16 >"$W/b.out" 2>"$W/b.err"; rc=$?
[[ $rc == 0 ]] && grep -Eq "^sunny-convert: wrote $W/r.snb: sunny blob fp16, [0-9]+ tensors .*, $size_re in [0-9.]+s\$" "$W/b.err" \
  && ok "--blob redirected: the summary line too" || bad "--blob: rc=$rc $(cat "$W/b.err")"
# on a terminal: the bar and then the summary on a line of its own; no ETA of days at the first tick
if command -v script >/dev/null; then
  script -qec "$CONV $W/rwkv --blob -o $W/r2.snb --dtype int4 -t 2 --force" /dev/null >"$W/tty.log" 2>&1; rc=$?
  last=$(tr '\r' '\n' <"$W/tty.log" | grep -v '^\s*$' | tail -1)
  etas=$(tr '\r' '\n' <"$W/tty.log" | sed -n 's/.*ETA \([0-9-]*s*\).*/\1/p' | tr '\n' ' ')
  [[ $rc == 0 && $last == "sunny-convert: wrote $W/r2.snb"* ]] && grep -q 'ETA' "$W/tty.log" \
    && ok "terminal: progress, then the summary on its own line" || bad "terminal: rc=$rc last line: $last"
  first=$(awk '{print $1}' <<<"$etas")
  big=$(tr ' ' '\n' <<<"$etas" | tr -d s | grep -E '^[0-9]+$' | awk '$1 > 600' | head -1)
  [[ $first == "--" && -z $big ]] && ok "terminal: the ETA is '--' until the rate means something, never absurd: $etas" \
    || bad "terminal ETAs: $etas"
else
  skip_check "script(1) missing: the terminal progress checks"
fi

# ---- 2. no chat template: the warning with the consequence and the fix
L=$(fixture llama3) || { bad "llama3 fixture"; finish; }
mkdir -p "$W/notmpl" && cp "$L"/config.json "$L"/model.safetensors "$L"/tokenizer.json "$W/notmpl/"
"$CONV" "$W/notmpl" -o "$W/n.gguf" --outtype f16 >"$W/n.out" 2>"$W/n.err"; rc=$?
[[ $rc == 0 ]] && grep -q "warning: $W/notmpl has no chat template" "$W/n.err" && grep -q "base model" "$W/n.err" \
  && grep -q -- "--template FILE" "$W/n.err" && grep -q "tokenizer_config.json" "$W/n.err" \
  && ok "no tokenizer_config.json: exit 0 with a warning naming the consequence and the fix" \
  || bad "no tokenizer_config.json: rc=$rc $(cat "$W/n.err")"
"$CONV" "$L" -o "$W/t.gguf" --outtype f16 >/dev/null 2>"$W/t.err"
grep -q warning "$W/t.err" && bad "a folder with a chat template warns: $(cat "$W/t.err")" || ok "a folder with a chat template: no warning"
printf '{{ .Prompt }}' >"$W/t.gotmpl"

# ---- 5. sunny-integrate template on the RWKV-7 folder, as install sees its GGUF
SI=$SN_BIN/sunny-integrate
"$SI" template "$W/rwkv" >"$W/td.out" 2>"$W/td.err"; rc=$?
"$SI" template "$W/r.gguf" >"$W/tg.out" 2>/dev/null
[[ $rc == 0 ]] && grep -q "^family    : rwkv-world (proven" "$W/td.out" \
  && diff <(grep -v '^source' "$W/td.out") <(grep -v '^source' "$W/tg.out") >/dev/null \
  && ok "template on the RWKV-7 folder: the world template, the same verdict and stops as its GGUF" || bad "template rwkv folder: rc=$rc $(cat "$W/td.err") $(diff "$W/td.out" "$W/tg.out")"
"$SI" template "$W/notmpl" >/dev/null 2>"$W/tn.err"; rc=$?
[[ $rc == 1 ]] && grep -q "sunny-integrate template --jinja FILE" "$W/tn.err" && ! grep -q "^[^,]*--template FILE" "$W/tn.err" \
  && ok "template on a folder with no template: exit 1, the flags to use per command" || bad "template no-template folder: rc=$rc $(cat "$W/tn.err")"

# ---- 6. --json errors as JSON on stdout, exit codes unchanged
jerr() { # WANT_RC CMD... : stdout must be exactly one JSON object {"error": {"message": ..., "exit_code": WANT_RC}}
  local want=$1; shift
  local out rc
  out=$(HOME=$W/nohome "$@" 2>/dev/null); rc=$?
  if [[ $rc == "$want" ]] && $PY -c 'import json,sys; d=json.loads(sys.stdin.read()); e=d["error"]; assert isinstance(e, dict) and e["message"] and e["exit_code"] == int(sys.argv[1]), d' "$want" <<<"$out" 2>/dev/null; then
    ok "--json error: $(basename "$1") ${*:2:2}: exit $rc, {\"error\": {...}} on stdout"
  else bad "--json error: $*: rc=$rc (want $want) stdout: $(head -c 300 <<<"$out")"; fi
}
jerr 1 "$RUN" "$W/none.gguf" -p x --json
jerr 2 "$RUN" "$W/r.gguf" --bogus --json
jerr 1 "$CONV" "$W/none" -o "$W/x.gguf" --json
jerr 2 "$CONV" --json --bogus
jerr 1 "$SI" ollama "$W/none.gguf" --name a:b --json
jerr 1 "$SI" lmstudio "$W/r.gguf" --json
jerr 1 "$SI" template "$W/notmpl" --json
out=$("$SI" ollama "$W/r.gguf" --name demo:q8 --dry-run --template "$W/t.gotmpl" 2>&1 </dev/null)
grep -Eq "model   : .*\(rwkv7, F16, [0-9.]+ MB \([0-9,]+ bytes\)\)" <<<"$out" && grep -Eq "<- [0-9.]+ MB \([0-9,]+ bytes\) streamed" <<<"$out" \
  && ok "install: sizes in the one format" || bad "install size lines: $(grep -E 'model|streamed' <<<"$out")"
"$SI" digest "$W/r.gguf" 2>&1 >/dev/null | grep -Eq "^[0-9.]+ MB \([0-9,]+ bytes\): " && ok "digest: the size in the one format" \
  || bad "digest size: $("$SI" digest "$W/r.gguf" 2>&1 >/dev/null)"

# ---- 7. refusals with a next step
mkdir -p "$W/gemma" && cp "$W/notmpl/tokenizer.json" "$W/gemma/" && printf '{"architectures": ["GemmaForCausalLM"], "model_type": "gemma"}' >"$W/gemma/config.json"
"$CONV" "$W/gemma" -o "$W/g.gguf" >/dev/null 2>"$W/g.err"; rc=$?
[[ $rc == 1 && ! -e $W/g.gguf ]] && grep -q "unsupported architecture 'GemmaForCausalLM' (sunny-convert converts LlamaForCausalLM, .*RWKV7ForCausalLM" "$W/g.err" \
  && grep -q "docs/MODELS.md" "$W/g.err" && grep -q "convert_hf_to_gguf.py still installs: sunny-integrate ollama|lmstudio MODEL.gguf" "$W/g.err" \
  && ok "unsupported architecture: exit 1, names what sunny converts and that a GGUF made elsewhere installs" || bad "unsupported arch: rc=$rc $(cat "$W/g.err")"

# ---- 8. chat through the model's template
$PY - "$L/tokenizer_config.json" >"$W/turn1.txt" <<'PYEOF'
import json, sys, jinja2
c = json.load(open(sys.argv[1]))
env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
print(env.from_string(c["chat_template"]).render(messages=[{"role": "user", "content": "Hello there"}],
      add_generation_prompt=True, bos_token=c["bos_token"], eos_token=c["eos_token"]), end="")
PYEOF
want=$("$RUN" "$W/t.gguf" -f "$W/turn1.txt" --no-bos -n 6 -t 1 2>/dev/null) # -f: the turn ends in "\n\n"
printf 'Hello there\nWhat next?\n' | "$RUN" "$W/t.gguf" -n 6 -t 1 >"$W/chat.out" 2>"$W/chat.err"; rc=$?
[[ $rc == 0 && -n $want && $(sed -n 1p "$W/chat.out") == "$want" ]] && grep -q "note: no prompt given and the GGUF has a chat template: chat mode" "$W/chat.err" \
  && ok "chat by default (no prompt, a chat template): the first reply is -p's on the jinja2-rendered turn" \
  || bad "chat: rc=$rc want '$want' got '$(sed -n 1p "$W/chat.out")' $(cat "$W/chat.err")"
alone=$(printf 'What next?\n' | "$RUN" "$W/t.gguf" -cnv -n 6 -t 1 2>/dev/null)
[[ $(wc -l <"$W/chat.out") == 2 && $(sed -n 2p "$W/chat.out") != "$alone" ]] \
  && ok "the second turn continues the conversation (its reply differs from the line asked alone)" || bad "second turn: $(cat "$W/chat.out") / alone: $alone"
"$RUN" "$W/t.gguf" -no-cnv -t 1 </dev/null >/dev/null 2>"$W/nocnv.err"; rc=$?
[[ $rc == 2 ]] && ok "-no-cnv without a prompt: usage error" || bad "-no-cnv: rc=$rc $(cat "$W/nocnv.err")"

# ---- 4. deps.sh: only what is missing, never an upgrade, never an unasked apt-get update
mkdir -p "$W/stub"
cat >"$W/stub/dpkg-query" <<'STUB'
#!/bin/sh
for a; do p=$a; done
[ "$p" = "$STUB_MISSING" ] && exit 1
printf 'install ok installed'
STUB
cat >"$W/stub/apt-get" <<'STUB'
#!/bin/sh
echo "apt-get $*" >>"$STUB_LOG"
case " $* " in *" install "*) if [ -n "$STUB_FAIL_FIRST" ] && [ ! -e "$STUB_LOG.failed" ]; then : >"$STUB_LOG.failed"; exit 100; fi ;; esac
exit 0
STUB
printf '#!/bin/sh
echo 0
' >"$W/stub/id"
chmod +x "$W/stub/"*
deps() { rm -f "$W/apt.log" "$W/apt.log.failed"; PATH="$W/stub:$PATH" STUB_LOG=$W/apt.log STUB_MISSING=$1 STUB_FAIL_FIRST=$2 bash "$SN_SRC/scripts/deps.sh" demo >"$W/deps.out" 2>&1; }
deps libcunit1-dev ""; rc=$?
[[ $rc == 0 && $(cat "$W/apt.log") == "apt-get install -y -qq --no-install-recommends --no-upgrade libcunit1-dev" ]] \
  && grep -q "missing Debian packages, installing only these (nothing installed is upgraded): libcunit1-dev" "$W/deps.out" \
  && ok "deps.sh as root: names the missing package, installs only it with --no-upgrade, no apt-get update" \
  || bad "deps.sh: rc=$rc apt: $(cat "$W/apt.log" 2>/dev/null) out: $(cat "$W/deps.out")"
deps libcunit1-dev 1; rc=$?
[[ $rc == 0 && $(sed -n 2p "$W/apt.log") == "apt-get update -qq" && $(grep -c install "$W/apt.log") == 2 ]] \
  && ok "deps.sh: apt-get update only after a failed install, then the install once more" || bad "deps.sh retry: rc=$rc $(cat "$W/apt.log")"
deps none ""; rc=$?
[[ $rc == 0 && ! -e $W/apt.log ]] && ok "deps.sh with nothing missing: no apt-get at all" || bad "deps.sh nothing missing: rc=$rc $(cat "$W/apt.log" 2>/dev/null)"

# ---- 3. sunny-run and llama.cpp's habits
"$CONV" "$W/rwkv" -o "$W/r8.gguf" --outtype q8_0 >/dev/null 2>&1 || bad "q8_0 conversion"
P="The quick brown fox"
"$RUN" "$W/r8.gguf" -p "$P" -n 6 -t 1 --json >"$W/plain.json" 2>/dev/null
"$RUN" "$W/r8.gguf" "$P" -ngl 99 --n-gpu-layers 99 --gpu-layers 1 -mg 0 -ts 1,1 -sm none --no-mmap -fa -n 6 -t 1 --json \
  >"$W/gpu.json" 2>"$W/gpu.err"; rc=$?
ids() { sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p' "$1"; }
[[ $rc == 0 && -n $(ids "$W/plain.json") && $(ids "$W/gpu.json") == "$(ids "$W/plain.json")" ]] \
  && [[ $(grep -c 'note: ignoring -ngl 99, --n-gpu-layers 99, --gpu-layers 1, -mg 0, -ts 1,1, -sm none, --no-mmap, -fa: sunny-run runs on the CPU' "$W/gpu.err") == 1 ]] \
  && ok "GPU flags and a positional prompt: the same tokens, one note" || bad "GPU flags: rc=$rc $(cat "$W/gpu.err")"
"$RUN" "$W/r8.gguf" -p "$P" -n -2 -c 16 -t 1 --json >"$W/n2.json" 2>"$W/n2.err"; rc=$?
n2=$(ids "$W/n2.json" | tr ',' '\n' | grep -c .)
[[ $rc == 0 && $n2 == 12 ]] && ok "-n -2 -c 16: fills the context (4 prompt + 12 tokens)" || bad "-n -2: rc=$rc n=$n2 $(cat "$W/n2.err")"
"$RUN" "$W/r8.gguf" -p "$P" -n -1 -c 16 -t 1 --json >"$W/n1.json" 2>"$W/n1.err"; rc=$?
n1=$(ids "$W/n1.json" | tr ',' '\n' | grep -c .)
[[ $rc == 0 && $n1 -ge 1 && $n1 -le 12 ]] && ok "-n -1 -c 16: until the end of generation or the context ($n1 tokens)" || bad "-n -1: rc=$rc n=$n1 $(cat "$W/n1.err")"
"$RUN" "$W/r8.gguf" -p "$P" -n 4 -t 1 --repeat-penalty 1.3 --repeat-last-n 32 --presence-penalty 0.5 --frequency-penalty 0.2 \
  >/dev/null 2>"$W/pen.err"; rc=$?
[[ $rc == 0 ]] && ok "the penalty flags are taken" || bad "penalty flags: rc=$rc $(cat "$W/pen.err")"
"$RUN" "$W/r8.gguf" -p "$P" --repeat-penalty 0 >/dev/null 2>"$W/pen0.err"; rc=$?
[[ $rc == 2 ]] && grep -q "repeat-penalty" "$W/pen0.err" && ok "--repeat-penalty 0: usage error (exit 2), as llama.cpp refuses it" || bad "--repeat-penalty 0: rc=$rc"
"$RUN" "$W/r8.gguf" -p "$P" -n 2 -t 1 >/dev/null 2>"$W/t1.err"
grep -q "(.* kernels, 1 thread)" "$W/t1.err" && ok "-t 1: \"1 thread\"" || bad "-t 1: $(cat "$W/t1.err")"
"$RUN" "$W/rwkv/model.safetensors" -p "$P" >/dev/null 2>"$W/st.err"; rc=$?
[[ $rc == 1 ]] && grep -qx "  sunny-convert $W/rwkv -o model.gguf" "$W/st.err" && ! grep -q "magic" "$W/st.err" \
  && ok "sunny-run model.safetensors: exit 1 with the exact sunny-convert command" || bad "model.safetensors: rc=$rc $(cat "$W/st.err")"
finish
