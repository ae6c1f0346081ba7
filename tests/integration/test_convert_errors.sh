#!/usr/bin/env bash
# test_convert_errors.sh - sunny-convert on bad input: every case must exit 1 with a message naming
# the file at fault, and leave neither OUT.gguf nor a temp file (OUT.gguf.*.tmp) behind; usage errors exit 2.
# Also: refusing to overwrite without --force, SIGINT mid-write cleaning up, --dry-run writing
# nothing, --verify passing on a good conversion.
source "$(dirname "$0")/lib.sh"
BIN=$SN_BIN/sunny-convert
[[ -x $BIN ]] || { echo "FAIL - $BIN not built"; exit 1; }
W=$SN_WORK/convert_errors
scratch "$W"
rm -rf "$W"; mkdir -p "$W"
good=$(fixture llama3 bf16) || { echo "FAIL - fixture generation failed"; exit 1; }

# mk NAME: a fresh copy of the good fixture (symlinks for the big files) to break
mk() { local d=$W/$1; rm -rf "$d"; mkdir -p "$d"; cp "$good"/*.json "$d"/; ln -s "$good/model.safetensors" "$d/model.safetensors"; echo "$d"; }

# expect_fail NAME DIR NEEDLE...: exit 1, every NEEDLE in stderr, no output left
expect_fail() {
  local name=$1 dir=$2; shift 2
  local out=$W/$name.gguf err rc
  err=$("$BIN" "$dir" -o "$out" 2>&1 >/dev/null); rc=$?
  if ((rc != 1)); then bad "$name: exit $rc, want 1 ($err)"; return; fi
  for n in "$@"; do [[ $err == *"$n"* ]] || { bad "$name: message lacks '$n': $err"; return; }; done
  if [[ -e $out || -n $(leftovers "$out") ]]; then bad "$name: output left behind"; return; fi
  ok "$name: exit 1, '${err:0:110}'"
}

# raw safetensors writer: PY HEADER_JSON DATA_BYTES OUT
st() { $PY - "$@" <<'EOF'
import struct, sys
h = sys.argv[1].encode(); n = int(sys.argv[2])
open(sys.argv[3], "wb").write(struct.pack("<Q", len(h)) + h + bytes(n))
EOF
}

d=$(mk no_config); rm "$d/config.json"
expect_fail no_config "$d" "config.json"

d=$(mk no_tokenizer); rm -f "$d/tokenizer.json" "$d/tokenizer.model"
expect_fail no_tokenizer "$d" "tokenizer"

d=$(mk bad_arch); sed -i 's/LlamaForCausalLM/GPT2LMHeadModel/' "$d/config.json"
expect_fail bad_arch "$d" "GPT2LMHeadModel" "LlamaForCausalLM" "Qwen3ForCausalLM" "config.json"

d=$(mk truncated); rm "$d/model.safetensors"; head -c 1000000 "$good/model.safetensors" > "$d/model.safetensors"
expect_fail truncated "$d" "model.safetensors" "truncated"

d=$(mk bad_header); rm "$d/model.safetensors"; printf '\xff\xff\xff\xff\xff\x00\x00\x00{}' > "$d/model.safetensors"
expect_fail header_too_big "$d" "model.safetensors" "100 MB"

d=$(mk bad_json); rm "$d/model.safetensors"; st '{"a": {"dtype": "F32", "shape": [1], ' 4 "$d/model.safetensors"
expect_fail bad_json "$d" "model.safetensors" "JSON"

d=$(mk f64); rm "$d/model.safetensors"; st '{"model.norm.weight": {"dtype": "F64", "shape": [128], "data_offsets": [0, 1024]}}' 1024 "$d/model.safetensors"
expect_fail f64_dtype "$d" "model.safetensors" "unsupported dtype F64" "model.norm.weight"

d=$(mk overlap); rm "$d/model.safetensors"
st '{"a.weight": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "b.weight": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}' 24 "$d/model.safetensors"
expect_fail overlap "$d" "model.safetensors" "overlap"

d=$(mk unknown_tensor); rm "$d/model.safetensors"
$PY - "$good/model.safetensors" "$d/model.safetensors" <<'EOF'
import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8+n])
h["model.layers.0.self_attn.q_a_proj.weight"] = {"dtype": "F32", "shape": [1], "data_offsets": [len(b) - 8 - n, len(b) - 8 - n + 4]}
hb = json.dumps(h).encode()
open(sys.argv[2], "wb").write(struct.pack("<Q", len(hb)) + hb + b[8+n:] + bytes(4))
EOF
expect_fail unknown_tensor "$d" "cannot map tensor 'model.layers.0.self_attn.q_a_proj.weight'" "model.safetensors"

d=$(mk shape_mismatch); sed -i 's/"intermediate_size": 384/"intermediate_size": 512/' "$d/config.json"
expect_fail shape_mismatch "$d" "model.safetensors" "shape" "config.json"

d=$(mk missing_shard)
echo '{"weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}}' > "$d/model.safetensors.index.json"
expect_fail missing_shard "$d" "model.safetensors.index.json" "model-00001-of-00002.safetensors"

d=$(mk bad_config); echo '{"architectures": ["LlamaForCausalLM"], ' > "$d/config.json"
expect_fail bad_config_json "$d" "config.json" "JSON"

# usage errors: exit 2
# (no -o is not one: the default name goes into the model's folder, test_oneshot.sh)
for args in "" "--outtype q5_k $good -o $W/x.gguf" "$good -o $W/x.gguf --split-max-tensors x" "$good -o $W/x.gguf -t 0" "$good -o $W/x.gguf --bogus"; do
  # shellcheck disable=SC2086
  "$BIN" $args >/dev/null 2>&1; rc=$?
  ((rc == 2)) && ok "usage '${args:0:40}': exit 2" || bad "usage '$args': exit $rc, want 2"
done
# captured first: grep -q in a pipe exits at the first line, and the rest of the help (more than
# stdio's 4 KB buffer) would then meet a closed pipe (SIGPIPE, a failed pipeline under pipefail)
help=$("$BIN" --help) && grep -q "Usage: sunny-convert" <<<"$help" && ok "--help prints usage" || bad "--help"

# dry run writes nothing and lists every tensor
out=$W/dry.gguf
n=$("$BIN" "$good" -o "$out" --dry-run | grep -c -- '->')
[[ ! -e $out && $n -ge 20 ]] && ok "--dry-run: $n tensors listed, nothing written" || bad "--dry-run ($n lines, exists: $([[ -e $out ]] && echo yes))"

# good conversion with --verify, then refusal to overwrite, then --force
out=$W/good.gguf
if "$BIN" "$good" -o "$out" --outtype q8_0 --verify >/dev/null 2>"$W/v.err"; then ok "q8_0 conversion verifies"; else bad "verify: $(cat "$W/v.err")"; fi
before=$(stat -c %Y "$out" 2>/dev/null)
err=$("$BIN" "$good" -o "$out" 2>&1); rc=$?
((rc == 1)) && [[ $err == *"--force"* ]] && ok "existing output refused without --force" || bad "overwrite: exit $rc: $err"
"$BIN" "$good" -o "$out" --force >/dev/null 2>&1 && ok "--force overwrites" || bad "--force failed"

# data at an odd file offset (a header of odd length, valid JSON with a trailing space): every
# element is read without a misaligned load (UBSan in the ASan stage) and the GGUF is the same bytes
d=$(mk odd_offset); rm "$d/model.safetensors"
$PY - "$good/model.safetensors" "$d/model.safetensors" <<'EOF2'
import struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack_from("<Q", b)[0]
if n % 2 == 0: h = b[8:8 + n] + b" "
else: h = b[8:8 + n] + b"  "
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + b[8 + n:])
EOF2
"$BIN" "$good" -o "$W/even.gguf" --outtype f16 >/dev/null 2>&1
if "$BIN" "$d" -o "$W/odd.gguf" --outtype f16 >/dev/null 2>"$W/odd.err" && cmp -s "$W/even.gguf" "$W/odd.gguf"; then
  ok "safetensors data at an odd offset: same GGUF bytes"
else bad "odd offset: $(cat "$W/odd.err")"; fi

# a tensor name carrying terminal escape sequences is shown escaped (\x1b), never sent raw
d=$(mk escape); rm "$d/model.safetensors"
st "{\"model.\\u001b]0;owned\\u0007\\u001b[2Jx.weight\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}" 4 "$d/model.safetensors"
err=$("$BIN" "$d" -o "$W/escape.gguf" 2>&1 >/dev/null); rc=$?
if [[ $rc == 1 && $err != *$'\e'* && $err != *$'\a'* && $err == *'\x1b'* ]]; then ok "escape sequences in a tensor name are shown escaped: ${err:0:120}"
else bad "escape: rc=$rc $(printf %q "$err")"; fi

# SIGINT while writing: no output, no tmp (big enough fixture to still be running)
big=$(fixture qwen3 f32) || big=$good
out=$W/int.gguf
"$BIN" "$big" -o "$out" --outtype q4_0 -t 1 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do [[ -n $(leftovers "$out") ]] && break; sleep 0.01; done
kill -INT $pid 2>/dev/null; wait $pid; rc=$?
if [[ -n $(leftovers "$out") ]]; then bad "SIGINT: tmp file left behind: $(leftovers "$out")"
elif [[ -e $out ]]; then echo "info - SIGINT arrived after the rename (conversion finished first, exit $rc)"
else ok "SIGINT: exit $rc, no output and no tmp left"; fi
finish
