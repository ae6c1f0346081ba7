#!/usr/bin/env bash
# test.sh - what `make test` runs: a -Werror Release build with every unit and integration test,
# then the unit tests (and the ASan-marked integration tests) again in an ASan/UBSan build.
# Ends with one line "N passed, N failed, N skipped" over both runs, and fails on any failure, on a
# missing oracle, and on any skip that is not declared optional (tests/CMakeLists.txt
# SN_OPTIONAL_INTEGRATION). The slowest tests of the Release run are listed with their times, and
# each stage's wall time against the 35-minute budget (docs/TESTING.md, "Time budget").
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
B=${SN_TEST_BUILD:-build-test}
A=${SN_ASAN_BUILD:-build-asan}
PY=/usr/bin/python3
passed=0; failed=0; skipped=0; unexpected=0
t0=$SECONDS; stages=()
stage() { stages+=("$1 $((SECONDS - t0)) s"); t0=$SECONDS; } # stage NAME: the time since the last one

# Oracles first: each is a dependency (scripts/deps.sh), and a missing one fails the run here, by
# name, even though the tests that need it would fail on their own too.
oracles() {
  local miss=() m
  command -v node >/dev/null || miss+=("node")
  for m in node-llama-cpp @node-llama-cpp/linux-x64 @lenml/tokenizers @huggingface/gguf; do
    [[ -d tests/node_modules/$m ]] || miss+=("tests/node_modules/$m")
  done
  for m in numpy torch jinja2; do $PY -c "import $m" 2>/dev/null || miss+=("$PY: import $m"); done
  command -v go >/dev/null || miss+=("go (golang-go)")
  if ((${#miss[@]})); then
    printf 'oracle missing: %s\n' "${miss[@]}"; echo "run scripts/deps.sh"
    failed=$((failed + 1))
  fi
}

# count LOG: one line per test in ctest's output ("  3/41 Test  #7: integration/x ....   Passed  1.2 sec",
# "***Failed", "***Skipped", "***Timeout", "***Exception", "Not Run"). A skipped test must have printed
# lib.sh's "(optional: reason)" - only declared-optional tests can - or it counts as unexpected.
count() {
  local log=$1 dir=$2 name res n=0
  while IFS=$'\t' read -r name res; do
    n=$((n + 1))
    case $res in
      Passed) passed=$((passed + 1)) ;;
      Skipped)
        skipped=$((skipped + 1))
        if ! awk -v t="$name" '$0 ~ "^[0-9]+/[0-9]+ Test: " && $3 == t {on = 1} on && /<end of output>/ {on = 0}
                 on && /^SKIP: .*\(optional: / {f = 1} END {exit !f}' "$dir/Testing/Temporary/LastTest.log"; then
          echo "unexpected skip: $name"; unexpected=$((unexpected + 1))
        fi ;;
      *) failed=$((failed + 1)) ;;
    esac
  done < <(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[ *]*(Passed|Skipped|Failed|Timeout|Exception|Not Run|[A-Za-z]+).*/\1\t\2/p' "$log")
  ((n)) || { echo "no test results in $log"; failed=$((failed + 1)); }
}

# times LOG: the per-test wall times ctest printed, slowest first
times() {
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[ *]*([A-Za-z ]+[a-z]) +([0-9.]+) sec.*/\3\t\1\t\2/p' "$1" |
    sort -rn >"${1%.ctest.log}.times.tsv"
  echo "== slowest tests ($1)"; head -8 "${1%.ctest.log}.times.tsv" | awk -F'\t' '{printf "  %8.1f s  %s (%s)\n", $1, $2, $3}'
}

oracles

# Disk: each integration test removes its own work dirs when it passes (tests/integration/lib.sh,
# scratch) and the Release stage's work tree goes once that stage passed, so the run's peak is a few
# GB instead of the ~26 GB it wrote before. The lowest free space seen is reported at the end.
disk_free() { df -Pm . | awk 'NR == 2 {print $4}'; } # MB free on the filesystem of the build trees
free0=$(disk_free); low=$(mktemp); echo "$free0" >"$low"
( while sleep 5; do f=$(disk_free); ((f < $(cat "$low"))) && echo "$f" >"$low"; done ) & sampler=$!
trap 'kill $sampler 2>/dev/null; rm -f "$low"' EXIT
((free0 >= 10240)) || echo "warning: $free0 MB free here; make test needs about 10 GB (docs/TESTING.md, \"Disk\")"

# logs stay inside the build trees, not the repo root: $B/configure.log, $B/sunny.ctest.log
mkdir -p "$B" "$A"
echo "== build ($B, -Werror)"
if cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSN_WERROR=ON >"$B/configure.log" 2>&1 &&
   cmake --build "$B" -j "$JOBS"; then
  stage build
  echo "== tests ($B)"
  (cd "$B" && ctest --output-on-failure -j "$JOBS" ${SN_CTEST_ARGS:-}) 2>&1 | tee "$B/sunny.ctest.log"
  stage tests
  count "$B/sunny.ctest.log" "$B"
  times "$B/sunny.ctest.log"
  # what is left is shared caches (fixtures, GGUFs, the llama.cpp tree) and failed tests' dirs
  if ((failed == 0)) && [[ ${SN_KEEP_WORK:-0} != 1 ]]; then rm -rf "$B/tests/work"; fi
else
  cat "$B/configure.log" 2>/dev/null | tail -20
  echo "build failed"; failed=$((failed + 1))
fi

echo "== build ($A, ASan+UBSan)"
if cmake -S . -B "$A" -DCMAKE_BUILD_TYPE=Debug -DSN_SANITIZE=ON -DSN_WERROR=ON >"$A/configure.log" 2>&1 &&
   cmake --build "$A" -j "$JOBS"; then
  stage asan-build
  echo "== tests ($A: unit + asan-labelled)"
  (cd "$A" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$JOBS" -L 'unit|asan') 2>&1 | tee "$A/sunny.ctest.log"
  stage asan-tests
  count "$A/sunny.ctest.log" "$A"
else
  echo "asan build failed"; failed=$((failed + 1))
fi

# checks inside passing tests that could not run on this machine (lib.sh skip_check), for the record
logs=("$B/Testing/Temporary/LastTest.log" "$A/Testing/Temporary/LastTest.log")
if grep -qs "SKIP-CHECK:" "${logs[@]}"; then
  echo "== checks skipped inside tests"; grep -hs "SKIP-CHECK:" "${logs[@]}" | sort | uniq -c
fi

# deps (make test runs scripts/deps.sh first) is not in these; budget: all of make test <= 35 min
echo "== stage wall times: ${stages[*]/%/,} total $SECONDS s (budget for make test: 2100 s)"
kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
echo "== disk: $free0 MB free at the start, lowest $(cat "$low") MB during the run"
echo "$passed passed, $failed failed, $skipped skipped ($unexpected unexpected)"
[[ $failed -eq 0 && $unexpected -eq 0 ]]
