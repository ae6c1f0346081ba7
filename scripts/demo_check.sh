#!/usr/bin/env bash
# demo_check.sh - the demo's proof: sunny-run greedy-decodes the demo model's f16 GGUF and must give,
# token for token, what llama.cpp gave on it, as recorded in scripts/demo_llama_cpp.tsv (written once
# with the pinned llama.cpp through its npm binding; tests/integration/test_demo_record.sh re-checks
# the recording against llama.cpp whenever that oracle is installed). Offline: no npm, no Python.
#   scripts/demo_check.sh SUNNY_RUN GGUF [RECORD]
# Prints "token-exact with llama.cpp <version>: N/N" and exits 0, or names the first case and step
# where sunny-run differs and exits 1; the last step's 3 largest logits must also be llama.cpp's to
# 1e-3 (the demo model's predictions are peaked, so a subtle error can keep every token and still
# move the logits) (a runtime bug: a skipped norm, a wrong constant, a broken
# kernel). A GGUF whose SHA-256 is not the recorded one is said first (the comparison still runs:
# a converter change shows up there).
set -uo pipefail
RUN=$1 GGUF=$2
REC=${3:-$(dirname "$0")/demo_llama_cpp.tsv}
[[ -f $REC ]] || { echo "demo_check: no recording $REC" >&2; exit 1; }
field() { awk -F'\t' -v k="$1" '$1 == k { print $2; exit }' "$REC"; }
version=$(field oracle)
want_sha=$(field gguf_sha256)
got_sha=$(sha256sum "$GGUF" | cut -d' ' -f1)
if [[ $got_sha != "$want_sha" ]]; then
  echo "note: $GGUF is not the GGUF the recording was made on (SHA-256 $got_sha, recorded $want_sha):"
  echo "      the converter or the demo model changed since; the tokens below may differ for that reason"
fi
total=0 same=0 bad=0 n_case=0
worst=0
while IFS=$'\t' read -r kind prompt pids ids steps; do
  [[ $kind == case ]] || continue
  n_case=$((n_case + 1))
  n=$(tr ',' '\n' <<<"$ids" | grep -c .)
  out=$("$RUN" "$GGUF" -p "$prompt" -n "$n" --ignore-eos --json -t 2 2>&1) || { echo "FAIL: sunny-run failed: $out"; exit 1; }
  got_p=$(sed -n 's/.*"prompt_ids":\[\([0-9,]*\)\].*/\1/p' <<<"$out")
  got=$(sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p' <<<"$out")
  if [[ $got_p != "$pids" ]]; then
    echo "FAIL: case $n_case (\"$prompt\"): sunny-run tokenizes the prompt as $got_p, llama.cpp as $pids"
    bad=1; total=$((total + n)); continue
  fi
  IFS=, read -r -a a <<<"$ids"
  IFS=, read -r -a b <<<"$got"
  k=0
  while ((k < n)) && [[ ${b[k]:-} == "${a[k]}" ]]; do k=$((k + 1)); done
  total=$((total + n)); same=$((same + k))
  if ((k < n)); then
    echo "FAIL: case $n_case (\"$prompt\"): sunny-run differs from llama.cpp at generated token $((k + 1)) of $n:" \
         "sunny-run ${b[k]:-none}, llama.cpp ${a[k]}"
    bad=1
    continue
  fi
  # the last step's top 3 logits: recorded "id:logit,..." against sunny-run's "top_logits":[[id,logit],...]
  want_top=${steps##*;}
  got_top=$(sed -n 's/.*"top_logits":\[\(.*\)\].*/\1/p' <<<"$out" | sed 's/\],\[/ /g; s/[][]//g')
  d=$(awk -v w="$want_top" -v g="$got_top" 'BEGIN {
        nw = split(w, W, ","); ng = split(g, G, " "); worst = 0
        for (i = 1; i <= nw; i++) {
          split(W[i], a, ":"); split(G[i], b, ",")
          if (i > ng || a[1] != b[1]) { print "id"; exit }
          x = a[2] - b[2]; if (x < 0) x = -x; if (x > worst) worst = x
        }
        printf "%.2e", worst }')
  if [[ $d == id ]] || awk -v d="$d" 'BEGIN { exit !(d > 1e-3) }'; then
    echo "FAIL: case $n_case (\"$prompt\"): the last step's top logits differ from llama.cpp's:" \
         "sunny-run $got_top, llama.cpp $want_top"
    bad=1
  else
    worst=$(awk -v a="$worst" -v b="$d" 'BEGIN { printf "%.2e", (b > a ? b : a) }')
  fi
done <"$REC"
((n_case > 0)) || { echo "demo_check: $REC has no cases" >&2; exit 1; }
if ((bad)); then
  echo "NOT token-exact with llama.cpp $version: $same/$total tokens before the first difference"
  exit 1
fi
if awk -v d="$worst" 'BEGIN { exit !(d == 0) }'; then agree="equal to 6 decimals"; else agree="within $worst"; fi
echo "token-exact with llama.cpp $version: $total/$total greedy tokens ($n_case prompts, recorded llama.cpp output;" \
     "last-step top-3 logits $agree)"
