#!/usr/bin/env bash
# test_jinja_oracle.sh - sunny's C Jinja interpreter (templates/jinja*.c) must render every real
# chat template of the corpus (tests/fixtures/templates/, see its manifest.json) byte-identical to
# Python jinja2 configured as transformers' apply_chat_template (tests/tools/jinja_oracle.py), on
# every probe conversation of tests/fixtures/conversations.json with add_generation_prompt true and
# false - or refuse it cleanly ("cannot render: ..."). Where jinja2 raises, sunny must raise too.
# A mismatch fails the test; refusals are counted and printed with their reason.
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SN_BUILD:-$SRC/build}
W=${SN_WORK:-/tmp/sn-work}/jinja_oracle
PY=/usr/bin/python3
C=$SRC/tests/fixtures/templates
rm -rf "$W" && mkdir -p "$W"
NOW=1764580000 # fixed clock for strftime_now on both sides
export TZ=UTC

$PY "$SRC/tests/tools/jinja_oracle.py" corpus "$C/manifest.json" "$SRC/tests/fixtures/conversations.json" $NOW "$W"
names=()
for f in "$C"/*.jinja; do
  b=$(basename "$f" .jinja)
  [ -f "$W/$b.cases.json" ] || { echo "FAIL $b.jinja is not in manifest.json"; exit 1; }
  "$BUILD/tests/jinja_render" "$f" "$W/$b.cases.json" $NOW >"$W/$b.c"
  names+=("$b")
done
$PY "$SRC/tests/tools/jinja_compare.py" "$W" "${names[@]}"
