#!/usr/bin/env bash
# run_all.sh - `make bench`: every benchmark in bench/, each printing its figures and the ratio
# against llama.cpp measured in the same run. Results belong in docs/PERFORMANCE.md with conditions.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
# decode.sh also runs blob_decode.sh (the blob rows belong to the same run)
for b in bench/convert.sh bench/decode.sh bench/recurrent.sh bench/sha256.sh; do
  [[ -f $b ]] || continue
  echo "== $b"
  bash "$b" "$B" || echo "$b failed"
done
