#!/usr/bin/env bash
# test_gotmpl_oracle.sh - sunny's C evaluator of Ollama Go templates (templates/gotmpl*.c) must
# render byte-identical to Go's own text/template under Ollama's Execute rules
# (tests/tools/render_go) for every family template (templates/data/*.gotmpl) and every Go
# template Ollama itself ships (tests/fixtures/gotemplates/, from ollama/ollama template/*.gotmpl
# at fb3076099), on every conversation of tests/fixtures/conversations.json, with and without a
# default SYSTEM. Where a construct is outside the subset it must refuse ("cannot render"); a
# refusal is only accepted for the Ollama-shipped templates, never for sunny's own families.
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${SN_BUILD:-$SRC/build}
W=${SN_WORK:-/tmp/sn-work}/gotmpl_oracle
GOCACHE=${GOCACHE:-${SN_WORK:-/tmp/sn-work}/gocache}
rm -rf "$W" && mkdir -p "$W"
export GOCACHE GOPATH=$W/gopath GOFLAGS= GO111MODULE=on
(cd "$SRC/tests/tools/render_go" && go build -o "$W/render_go" .)
CONV=$SRC/tests/fixtures/conversations.json
fail=0 same=0 refused=0 errs=0 n=0
for t in "$SRC"/templates/data/*.gotmpl "$SRC"/tests/fixtures/gotemplates/*.gotmpl; do
  b=$(basename "$t" .gotmpl)
  own=0; case $t in "$SRC/templates/data/"*) own=1 ;; esac
  for sys in "" "Default system prompt."; do
    tag=$b${sys:+-sys}
    args=(-template "$t" -conversations "$CONV" -out "$W/go/$tag")
    [ -n "$sys" ] && args+=(-system "$sys")
    mkdir -p "$W/c/$tag"
    "$W/render_go" "${args[@]}"
    "$BUILD/tests/gotmpl_render" "$t" "$CONV" "$W/c/$tag" ${sys:+"$sys"}
    n=$((n + 1))
    for g in "$W/go/$tag"/*; do
      f=$(basename "$g")
      cf=$W/c/$tag/$f
      if [ -f "$cf" ] && cmp -s "$g" "$cf"; then
        case $f in *.err) errs=$((errs + 1)) ;; *) same=$((same + 1)) ;; esac
        continue
      fi
      if [ -f "$W/c/$tag/${f%.*}.err" ] && grep -q "cannot render" "$W/c/$tag/${f%.*}.err"; then
        if [ $own = 1 ]; then echo "FAIL $tag/$f: sunny cannot render its own family: $(cat "$W/c/$tag/${f%.*}.err")"; fail=1
        else refused=$((refused + 1)); echo "refused $tag/$f: $(cat "$W/c/$tag/${f%.*}.err")"; fi
        continue
      fi
      if [ "${f##*.}" = err ] && [ -f "$W/c/$tag/${f%.*}.err" ]; then errs=$((errs + 1)); continue; fi
      echo "FAIL $tag/$f: C evaluator differs from Go text/template"
      [ -f "$cf" ] && diff <(cat -A "$g") <(cat -A "$cf") | head -8
      [ -f "$W/c/$tag/${f%.*}.err" ] && echo "  sunny: $(cat "$W/c/$tag/${f%.*}.err")"
      fail=1
    done
  done
done
echo "gotmpl_oracle: $n template/system pairs: $same renders identical, $errs failing on both sides, $refused refused"
exit $fail
