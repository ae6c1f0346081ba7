#!/usr/bin/env bash
# check_doc_refs.sh [SRC_DIR] - fails when a path or an sn_* name quoted in the documentation does
# not exist, so the docs stay a true map of the tree when files move or functions are renamed.
#
# Read: README.md, docs/*.md and every header under convert/ runtime/ integrate/ templates/ cmd/
# (their comments name files and functions). Checked:
#   paths   a word starting with one of the tree's top folders (runtime/, convert/, integrate/,
#           templates/, cmd/, tests/, bench/, docs/, scripts/): it must exist, or name a module
#           (runtime/kernels/recurrent: a recurrent.c or .h is there). A <placeholder> or * stands
#           for any text, and then at least one file must match (convert/archs/arch_<family>.c ->
#           convert/archs/arch_*.c).
#   names   sn_xxx (lowercase, a function, type or CMake helper): it must occur in a C source,
#           header or CMakeLists.txt of the tree; sn_xxx_* or sn_xxx_ (a prefix) must start one.
# Not checked: paths under generated or fetched folders (tests/node_modules/, tests/work/, build/
# outputs), which a clean checkout does not have.
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src"
docs=$(ls README.md docs/*.md 2>/dev/null || true)
headers=$(find $(ls -d convert runtime integrate templates cmd 2>/dev/null) -type f -name '*.h' | sort)
bad=0
report() { echo "check_doc_refs: $1" >&2; bad=1; }

# where: "file:line" of the first mention, for the message
where() { grep -n -F -- "$1" $docs $headers 2>/dev/null | head -1 | cut -d: -f1,2; }

# --- paths
top='(runtime|convert|integrate|templates|cmd|tests|bench|docs|scripts)'
paths=$(grep -ohE "(^|[^A-Za-z0-9_./-])$top/[A-Za-z0-9_./<>*-]*[A-Za-z0-9_>*/]" $docs $headers 2>/dev/null |
        sed -E 's/^[^a-z]//' | sort -u)
for p in $paths; do
  case $p in tests/node_modules | tests/node_modules/* | tests/work | tests/work/* | */build/*) continue ;; esac
  pat=$(sed -E 's/<[^>]*>/*/g' <<<"$p")
  pat=${pat%/}
  if [[ $pat == *'*'* ]]; then
    compgen -G "$pat" >/dev/null || report "$(where "$p"): $p matches no file"
  else
    [[ -e $pat ]] || compgen -G "$pat.*" >/dev/null || report "$(where "$p"): $p does not exist"
  fi
done

# --- sn_* names
known=$(grep -rohE '\bsn_[a-z0-9_]+' --include='*.c' --include='*.h' --include='CMakeLists.txt' \
          $(ls -d convert runtime integrate templates cmd tests scripts bench CMakeLists.txt 2>/dev/null) | sort -u)
names=$(grep -ohE '\bsn_[a-z0-9_]+\*?' $docs $headers 2>/dev/null | sort -u)
for n in $names; do
  if [[ $n == *'*' || $n == *_ ]]; then
    pre=${n%\*}
    grep -q "^$pre" <<<"$known" || report "$(where "$n"): no name starts with $pre"
  else
    grep -qx -- "$n" <<<"$known" || report "$(where "$n"): $n is not defined or used anywhere in the sources"
  fi
done
[ "$bad" = 0 ] && echo "check_doc_refs: every path and sn_* name quoted in the docs and header comments exists"
exit "$bad"
