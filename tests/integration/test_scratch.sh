#!/usr/bin/env bash
# test_scratch.sh - lib.sh's scratch rule, which keeps `make test` within ~7 GB of disk: a test's
# scratch dirs go when it exits 0 (by finish or by running off its end) and stay when it fails;
# SN_KEEP_WORK=1 keeps them; exit hooks (harness.sh's server shutdown) run before the removal.
# Each case is a child script that sources lib.sh, as the integration tests do. Cheap: bash only.
source "$(dirname "$0")/lib.sh"
W=$SN_WORK/scratch
scratch "$W"
rm -rf "$W"; mkdir -p "$W"

# child NAME BODY: a test script that makes $W/NAME/d as scratch, then runs BODY; SN_KEEP_WORK is
# 0 there unless KEEP=1 (mutate.sh runs the suite with it set)
child() {
  cat >"$W/$1.sh" <<CHILD
source "$SN_SRC/tests/integration/lib.sh"
D=$W/$1/d
scratch "\$D"
mkdir -p "\$D"; echo x >"\$D/f"
$2
CHILD
  SN_WORK=$W/$1 SN_KEEP_WORK=${KEEP:-0} bash "$W/$1.sh" >"$W/$1.log" 2>&1
}

child pass 'ok "fine"; finish'; rc=$?
[[ $rc == 0 && ! -e $W/pass/d ]] && ok "a passing test (finish) removes its scratch dir" || bad "pass: rc=$rc, dir $(ls -d "$W/pass/d" 2>&1)"
child end 'true'; rc=$?
[[ $rc == 0 && ! -e $W/end/d ]] && ok "a test that runs off its end with status 0 removes it too" || bad "end: rc=$rc"
child fail 'bad "boom"; finish'; rc=$?
[[ $rc == 1 && -f $W/fail/d/f ]] && ok "a failing test keeps its scratch dir to look at" || bad "fail: rc=$rc, dir kept: $([[ -e $W/fail/d ]] && echo yes || echo no)"
child died 'exit 3'; rc=$?
[[ $rc == 3 && -f $W/died/d/f ]] && ok "a test that exits nonzero keeps it, and its exit status is unchanged" || bad "died: rc=$rc"
KEEP=1 child keep 'finish'; rc=$?
[[ $rc == 0 && -f $W/keep/d/f ]] && ok "SN_KEEP_WORK=1 keeps it on a pass" || bad "keep: rc=$rc"
child hook 'hook() { [[ -f $D/f ]] && echo present >"'"$W"'/hook.seen"; }; sn_exit_hooks+=(hook); finish'; rc=$?
[[ $rc == 0 && $(cat "$W/hook.seen" 2>/dev/null) == present && ! -e $W/hook/d ]] &&
  ok "exit hooks run first, while the scratch dir still exists, then it goes" || bad "hook: rc=$rc seen=$(cat "$W/hook.seen" 2>&1)"
finish
