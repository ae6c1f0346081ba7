#!/usr/bin/env bash
# test_doc_refs.sh - the docs are a true map: every path and sn_* name quoted in README.md,
# docs/*.md and the header comments exists (scripts/check_doc_refs.sh on this tree). And the check
# itself can fail: a fake tree whose doc names a moved file, a placeholder path nothing matches and
# a renamed function must be refused, each named. Cheap: grep only.
source "$(dirname "$0")/lib.sh"
CHK=$SN_SRC/scripts/check_doc_refs.sh
W=$SN_WORK/doc-refs
scratch "$W"
rm -rf "$W"; mkdir -p "$W"

out=$(bash "$CHK" "$SN_SRC" 2>&1) && ok "source tree: $out" || bad "source tree: $out"

# a fake tree: the references that hold pass, the stale ones fail with file, line and name
mkdir -p "$W/t/docs" "$W/t/convert/archs" "$W/t/runtime/base"
echo 'int sn_thing_open(void);' > "$W/t/runtime/base/thing.h"
: > "$W/t/convert/archs/arch_llama.c"
printf '%s\n' '# doc' 'See runtime/base/thing.h, `sn_thing_open` and the `sn_thing_*` calls,' \
  'one file per family (convert/archs/arch_<family>.c).' > "$W/t/docs/A.md"
out=$(bash "$CHK" "$W/t" 2>&1) && ok "true references pass" || bad "true references refused: $out"
printf '%s\n' 'Moved: runtime/thing.h. Placeholder: convert/arch_<family>.c.' 'Renamed: sn_thing_close.' >> "$W/t/docs/A.md"
out=$(bash "$CHK" "$W/t" 2>&1) && bad "stale references passed: $out" || {
  grep -q 'docs/A.md:4: runtime/thing.h does not exist' <<<"$out" && ok "a moved file is refused with its doc and line" || bad "moved file: $out"
  grep -q 'convert/arch_<family>.c matches no file' <<<"$out" && ok "a placeholder path nothing matches is refused" || bad "placeholder: $out"
  grep -q 'sn_thing_close is not defined' <<<"$out" && ok "a renamed sn_* function is refused" || bad "renamed name: $out"
}
finish
