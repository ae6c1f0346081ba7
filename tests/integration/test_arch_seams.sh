#!/usr/bin/env bash
# test_arch_seams.sh - no architecture is special-cased outside its own family files and the two
# tables (convert/archs/archs.c for the converter, the FAMILIES rows in runtime/models/model.c for the runtime).
#
# The names come from those tables themselves: every general.architecture value in FAMILIES and
# every HF class name a convert/archs/arch_*.c lists. Outside convert/archs/arch_*.c, runtime/models/model_*.c and the
# two tables, a C source must not compare a string with one of them (strcmp/strncmp/strcasecmp/
# strstr/sn_arch_name_in with the name as a literal argument), write a metadata key spelled with one
# ("llama.context_length"), or name an HF class ("Qwen3ForCausalLM"). Names with another meaning
# (the tokenizer model "llama" of tokenizer.ggml.model, a pre-tokenizer called "qwen2", llama.cpp's
# list of the architectures it knows in integrate/modelinfo.c) are tables, not comparisons, and do
# not match. Cheap: grep only. Checked to fail: a strcmp(arch, "qwen3") planted in
# integrate/ollama.c is reported with its file and line.
source "$(dirname "$0")/lib.sh"
cd "$SN_SRC"
archs=$(sed -n '/FAMILIES\[\] = {/,/^};/p' runtime/models/model.c | grep -o '{"[a-z0-9_-]*"' | tr -d '{"')
[[ $(wc -w <<<"$archs") -ge 5 ]] && ok "runtime table lists: $(echo $archs)" || bad "could not read FAMILIES from runtime/models/model.c: '$archs'"
classes=$(grep -ho '{"[A-Za-z0-9]*\(ForCausalLM\|LMHeadModel\)"' convert/archs/arch_*.c | tr -d '{"' | sort -u)
[[ $(wc -w <<<"$classes") -ge 5 ]] && ok "converter classes: $(echo $classes)" || bad "could not read HF classes from convert/archs/arch_*.c"
alt=$(echo $archs | tr ' ' '|')
cls=$(echo $classes | tr ' ' '|')
allowed='^(convert/archs/arch_[a-z0-9_]+\.c|convert/archs/archs\.c|runtime/models/model_[a-z0-9_]+\.c|runtime/models/model\.c):'
hits=$(grep -rn -E "(str(n)?(case)?cmp|strstr|sn_arch_name_in)\(([^()]*, *)?\"($alt)\"|\"($alt)\.[a-z_]+|\"($cls)\"" \
         --include='*.c' --include='*.h' convert runtime integrate cmd templates | grep -v -E "$allowed")
if [[ -z $hits ]]; then
  ok "no architecture name compared, keyed or named outside its family files and the two tables"
else
  bad "architecture names outside the family files and tables (move the rule into the family's table row):"
  echo "$hits"
fi
finish
