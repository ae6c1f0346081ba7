#!/usr/bin/env bash
# test_file_lines.sh - no hand-written library source file over 800 lines (issue 13's acceptance),
# by scripts/check_file_lines.sh on this tree; and the check itself can fail: a tree with an
# 801-line file, or an exclusion naming a file that is gone, must be refused. Cheap: wc only.
source "$(dirname "$0")/lib.sh"
CHK=$SN_SRC/scripts/check_file_lines.sh
W=$SN_WORK/file-lines
scratch "$W"
rm -rf "$W"; mkdir -p "$W"

out=$(bash "$CHK" "$SN_SRC" 2>&1) && ok "source tree: $out" || bad "source tree: $out"

# a fake tree: 800 lines pass, 801 fail, and the message names the file and its length
mkdir -p "$W/t/runtime/tokenizers" "$W/t/convert"
: > "$W/t/runtime/tokenizers/unicode_data.c"
seq 800 > "$W/t/convert/ok.c"
out=$(bash "$CHK" "$W/t" 2>&1) && ok "800 lines pass" || bad "800 lines refused: $out"
seq 801 > "$W/t/convert/big.c"
out=$(bash "$CHK" "$W/t" 2>&1) && bad "an 801-line file passed: $out" || {
  grep -q 'convert/big.c has 801 lines' <<<"$out" && ok "801 lines refused, file named" || bad "wrong message: $out"; }
rm "$W/t/convert/big.c" "$W/t/runtime/tokenizers/unicode_data.c"
out=$(bash "$CHK" "$W/t" 2>&1) && bad "a missing excluded file passed: $out" || {
  grep -q 'runtime/tokenizers/unicode_data.c does not exist' <<<"$out" && ok "an exclusion of a missing file is refused" || bad "wrong message: $out"; }
finish
