#!/usr/bin/env bash
# test_parity_judge.sh - the judge of test_run_parity / test_quant_parity (tests/tools/parity_judge.py)
# must fail where it should: its tie rule (both engines' top-2 gaps, the same two candidates, the
# tokens after a tie still compared) on scripted answers, since real ties are rare on the fixtures
# (tests/tools/parity_judge_selftest.py; no model, under a second).
set -euo pipefail
SRC=${SN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
/usr/bin/python3 "$SRC/tests/tools/parity_judge_selftest.py"
