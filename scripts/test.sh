#!/usr/bin/env bash
# test.sh - what `make test` runs: a -Werror Release build with every unit and integration test,
# then the unit tests (and the ASan-marked integration tests) again in an ASan/UBSan build.
# Ends with one line "N passed, N failed" over both runs.
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
B=${SN_TEST_BUILD:-build-test}
A=${SN_ASAN_BUILD:-build-asan}
passed=0; failed=0

count() { # parse ctest's "N% tests passed, F tests failed out of T"
  local log=$1 line t f
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
  if [[ -z $line ]]; then failed=$((failed + 1)); return; fi
  f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  t=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
  passed=$((passed + t - f)); failed=$((failed + f))
}

echo "== build ($B, -Werror)"
if cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DSN_WERROR=ON >"$B.configure.log" 2>&1 &&
   cmake --build "$B" -j "$JOBS"; then
  echo "== tests ($B)"
  (cd "$B" && ctest --output-on-failure -j "$JOBS" ${SN_CTEST_ARGS:-}) 2>&1 | tee "$B.ctest.log"
  count "$B.ctest.log"
else
  cat "$B.configure.log" 2>/dev/null | tail -20
  echo "build failed"; failed=$((failed + 1))
fi

echo "== build ($A, ASan+UBSan)"
if cmake -S . -B "$A" -DCMAKE_BUILD_TYPE=Debug -DSN_SANITIZE=ON -DSN_WERROR=ON >"$A.configure.log" 2>&1 &&
   cmake --build "$A" -j "$JOBS"; then
  echo "== tests ($A: unit + asan-labelled)"
  (cd "$A" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$JOBS" -L 'unit|asan') 2>&1 | tee "$A.ctest.log"
  count "$A.ctest.log"
else
  echo "asan build failed"; failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
