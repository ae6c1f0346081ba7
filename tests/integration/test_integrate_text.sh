#!/usr/bin/env bash
# test_integrate_text.sh - text sunny-integrate writes for others to read.
# Modelfiles: every value sunny writes into a Modelfile (TEMPLATE, SYSTEM, PARAMETER,
# LICENSE) reads back unchanged through a parser that follows Ollama's parser package
# (tests/tools/modelfile_parse), or sunny refuses it - and a refusal must be justified: the value
# must then fail to round-trip bare, in "..." and in """...""" alike. Values: leading/trailing
# spaces, tabs, CR/LF, quotes, '#', Unicode spaces and format characters Ollama's reader drops,
# ill-formed UTF-8, emoji.
# --json: valid UTF-8 even when a string in it (a path, generated text, an error) holds bytes cut
# inside a character. No server, no oracle beyond the Go toolchain (~3 s).
source "$(dirname "$0")/lib.sh"
source "$SN_SRC/tests/fake-ollama/harness.sh"
need_go
W=$SN_WORK/integrate-text
scratch "$W"
rm -rf "$W"; mkdir -p "$W/mf" "$W/alt" "$W/bad"
build_go "$SN_SRC/tests/tools/modelfile_parse" modelfile_parse
WRITE=$SN_BUILD/tests/modelfile_write
[[ -x $WRITE ]] || { echo "FAIL - $WRITE not built"; exit 1; }

$PY - "$W/values.json" <<'EOF'
import json, sys
v = ["plain", "trailing space ", "trailing tab\t", " leading space", "\tleading tab", "  both  ", " ", "",
     "ends in newline\n", "\nstarts with newline", "crlf\r\nline", "cr\ronly", "a\n\n", 'say "hi"',
     '"starts with a quote', 'ends with a quote"', '"both"', ' padded "quoted" ', '"""', 'x """ y\nz',
     "# not a comment", "{{ .System }}\n{{ .Prompt }}", "tab\tinside", "nbsp at end\u00a0", "\u3000ideographic",
     "zwj \U0001F468\u200D\U0001F469", "emoji \U0001F600 ok", "nel\u0085", "line sep\u2028x", "bom\ufeffx",
     "bell\a", "vt\v", "del\x7f", "caf\u00e9 \u4e2d\u6587", "private \ue000", "\\", '""', '"', "a\"\n"]
json.dump(v, open(sys.argv[1], "w"))
EOF
"$WRITE" "$W/values.json" "$W/mf" || { echo "FAIL - modelfile_write"; exit 1; }

# For every refused value: the three spellings a writer could use, to prove none would survive.
$PY - "$W/values.json" "$W/mf" "$W/alt" <<'EOF'
import json, os, sys
vals = json.load(open(sys.argv[1]))
for i, v in enumerate(vals):
    if os.path.exists(f"{sys.argv[2]}/{i}.err"):
        for k, q in enumerate(("", '"', '"""')):
            open(f"{sys.argv[3]}/{i}.{k}", "w", newline="").write(f"FROM ./m.gguf\nSYSTEM {q}{v}{q}\n")
EOF
"$SN_TOOLS/modelfile_parse" "$W"/mf/*.Modelfile "$W"/alt/* >"$W/parsed.jsonl" || { echo "FAIL - modelfile_parse"; exit 1; }

$PY - "$W/values.json" "$W/mf" "$W/parsed.jsonl" <<'EOF' || sn_fail=$((sn_fail + 1))
import json, os, sys
vals = json.load(open(sys.argv[1])); d = sys.argv[2]
parsed = {r["file"]: r for r in map(json.loads, open(sys.argv[3]))}
bad = written = refused = 0
for i, v in enumerate(vals):
    if os.path.exists(f"{d}/{i}.err"):
        alts = [parsed.get(f"{d}/{i}.{k}".replace("/mf/", "/alt/"), {}) for k in range(3)]
        keeps = [a for a in alts if [c["args"] for c in a.get("commands", []) if c["name"] == "system"] == [v]]
        if keeps:
            print(f"FAIL - {v!r}: refused ({open(f'{d}/{i}.err').read().strip()[:60]}...), but Ollama's parser keeps it as {keeps[0]['file']}")
            bad += 1
        else:
            refused += 1
        continue
    r = parsed.get(f"{d}/{i}.Modelfile")
    if not r or "error" in r:
        print(f"FAIL - {v!r}: Modelfile does not parse: {r and r.get('error')}"); bad += 1; continue
    got = {c["name"]: c["args"] for c in r["commands"]}
    want = {"model": "./m.gguf", "template": v, "system": v, "stop": v, "license": v}
    if got != want or len(r["commands"]) != 5:
        print(f"FAIL - {v!r}: read back as {r['commands']}"); bad += 1
    else:
        written += 1
must_write = ["trailing space ", "trailing tab\t", " leading space", "\tleading tab", "ends in newline\n", "", " "]
lost = [m for m in must_write if os.path.exists(f"{d}/{vals.index(m)}.err")]
if lost:
    print(f"FAIL - refused values Ollama can hold: {lost}"); bad += 1
print(f"{'ok  ' if not bad else 'FAIL'} - {written} values round-trip through Ollama's parser rules, "
      f"{refused} refused, each one no quoting would keep")
sys.exit(1 if bad else 0)
EOF

# Ill-formed UTF-8 (a value cut inside a character): refused at its offset, since Ollama's reader would
# turn the bytes into U+FFFD. cJSON passes raw bytes inside a JSON string through unchanged.
printf '["abc\xe2\x82"]' >"$W/bad.json"
"$WRITE" "$W/bad.json" "$W/bad" && [[ -f $W/bad/0.err ]] && grep -q "UTF-8 at byte 3" "$W/bad/0.err" \
  && ok "ill-formed UTF-8 refused at its byte offset" || bad "ill-formed UTF-8 value written: $(od -c "$W"/bad/* | head -3)"

# --json with ill-formed bytes in its strings: the GGUF path cut inside a character (it also lands
# in the error message). Python's strict decoder must accept every byte of the output.
G=$(rt_gguf llama3 1234) || { bad "fixture GGUF"; finish; }
cut=$W/$'cut\xe4\xb8'; cp "$G" "$cut"; mid=$W/$'mid\xe4\xb8x.gguf'; cp "$G" "$mid"
for f in "$cut" "$mid"; do
  "$SN_BIN/sunny-integrate" ollama "$f" --name t --dry-run --json --host http://127.0.0.1:9 >"$W/out.json" 2>/dev/null
  if r=$($PY -c 'import json, sys; j = json.loads(open(sys.argv[1], "rb").read().decode("utf-8")); print(repr(j["gguf"]))' "$W/out.json" 2>&1)
  then ok "--json is valid UTF-8 for a path with $(basename "$f" | od -An -c | tr -s ' ' | head -c 40): gguf = $r"
  else bad "--json output is not valid UTF-8 JSON: $r"; fi
done
finish
