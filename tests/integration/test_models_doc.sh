#!/usr/bin/env bash
# test_models_doc.sh - docs/MODELS.md stays true to the architecture tables: every Hugging Face class
# sunny-convert accepts (convert/archs/archs.c k_archs, as its --help lists them) and every GGUF
# architecture sunny-run runs (runtime/models/model.c FAMILIES, as its --help lists them) has its
# row, every row fills all eight columns, and the tables are read from the sources too, so a family
# added to a table without a row here fails. Also docs/TROUBLESHOOTING.md's sections exist.
source "$(dirname "$0")/lib.sh"
DOC=$SN_SRC/docs/MODELS.md
[[ -f $DOC ]] || { bad "docs/MODELS.md is missing"; finish; }
rows=$(grep '^| `' "$DOC")
classes=$("$SN_BIN/sunny-convert" --help | sed -n 's/^Supported architectures: \(.*\)\.$/\1/p' | tr -d ' ' | tr ',' '\n')
archs=$("$SN_BIN/sunny-run" --help | sed -n 's/^  architectures: //p' | tr -d ' ' | tr ',' '\n')
[[ -n $classes && -n $archs ]] || { bad "cannot read the lists from --help"; finish; }
# the same tables read from the sources: k_archs' entries and FAMILIES' arch names
src_archs=$(sed -n '/^static const sn_arch \*const k_archs\[\]/,/};/p' "$SN_SRC/convert/archs/archs.c" | grep -o 'sn_arch_[a-z0-9_]*' | sed 's/sn_arch_//')
fam=$(sed -n '/^static const struct .* FAMILIES\[\]/,/^};/p' "$SN_SRC/runtime/models/model.c" | grep -o '{"[a-z0-9_-]*"' | tr -d '{"')
[[ $(sort <<<"$fam") == $(sort <<<"$archs") ]] && ok "sunny-run --help lists model.c's FAMILIES: $(tr '\n' ' ' <<<"$fam")" \
  || bad "FAMILIES ($fam) and sunny-run --help ($archs) differ"
missing=""
for c in $classes; do
  awk -F'|' -v c="\`$c\`" 'index($2, c) { f = 1 } END { exit !f }' <<<"$rows" || missing+=" $c"
done
for a in $archs $fam; do
  awk -F'|' -v a="\`$a\`" '$3 ~ a { f = 1 } END { exit !f }' <<<"$rows" || missing+=" $a"
done
for a in $src_archs; do # each k_archs entry's family (sn_arch_llama -> a `llama` row, sn_arch_gptoss -> `gpt-oss`)
  awk -F'|' -v a="\`$a\`" '{ c = $3; gsub("-", "", c) } c ~ a { f = 1 } END { exit !f }' <<<"$rows" || missing+=" $a(k_archs)"
done
[[ -z $missing ]] && ok "every class ($(wc -w <<<"$classes")) and architecture ($(wc -w <<<"$archs")) has its row in docs/MODELS.md" \
  || bad "docs/MODELS.md has no row for:$missing"
short=$(awk -F'|' 'NF != 10 { print; next } { for (i = 2; i <= 9; i++) if ($i ~ /^ *$/) { print; next } }' <<<"$rows")
[[ -z $short ]] && ok "every row fills its eight columns" || bad "rows with missing cells: $short"
T=$SN_SRC/docs/TROUBLESHOOTING.md
miss=""
for h in "gibberish" "never stops" "server not running" "proxy" "LM Studio does not list"; do
  grep -qi "^## .*$h" "$T" 2>/dev/null || miss+=" '$h'"
done
[[ -z $miss ]] && ok "docs/TROUBLESHOOTING.md has its sections" || bad "docs/TROUBLESHOOTING.md lacks sections:$miss"
finish
