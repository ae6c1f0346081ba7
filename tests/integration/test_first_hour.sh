#!/usr/bin/env bash
# test_first_hour.sh - what a new user sees and types in the first hour (issue "a newcomer's first
# hour"), outputs and exit codes asserted, no server and no oracle:
#  1. sunny-convert with stdout and stderr redirected says on stderr what it wrote (path, type, size in
#     the one size format, time), for GGUF and --blob; on a terminal (script(1)) the progress line
#     shows no ETA before the rate means something and ends with a newline before the summary; no
#     escape codes when stderr is not a terminal.
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
finish
