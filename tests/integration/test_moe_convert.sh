#!/usr/bin/env bash
# test_moe_convert.sh - mixture-of-experts conversion (Qwen3-MoE -> qwen3moe, Mixtral -> llama with
# experts) against llama.cpp. Fixtures (gen_model.py): qwen3moe (16 experts of 64, top-4, one tensor
# per expert and matrix), qwen3moe_fused (the same weights in transformers' fused layout:
# experts.gate_up_proj [E, 2F, D], experts.down_proj [E, D, F]) and mixtral (8 experts, top-2), bf16,
# with the real qwen3 / llama2 tokenizers.
#  1. llama.cpp's own convert_hf_to_gguf.py (tests/tools/lcpp_convert.py; without transformers it
#     writes no tokenizer.* keys, whose code path the vocab tests check) writes f32/f16/bf16/q8_0 of
#     each fixture and q8_0 of a 3-shard qwen3moe, a 2-shard mixtral and a qwen3moe whose second
#     shard holds one expert matrix (the layer's three stacks go where it arrives): every other key (type,
#     value, order) and every tensor (order, name, type, shape, bytes) of ours must be the same
#     (gguf_same.py). q4_0 must equal llama-quantize MOSTLY_Q4_0 run on our f32 byte for byte
#     (mixtral's 8 experts make it keep attn_k/attn_v in Q8_0).
#  2. PyTorch checkpoints (torch.save of the same weights; Debian's torch is too old for llama.cpp's
#     own checkpoint loader): the GGUF equals (cmp) the one from the safetensors.
#  3. Bad inputs exit 1 naming file, tensor and expected vs found, and write nothing.
#  4. llama.cpp loads our GGUFs and greedy-decodes (the fused and per-expert layouts give the same
#     tokens), and sunny-run decodes the same tokens; --blob refuses them plainly (no MoE blob yet).
source "$(dirname "$0")/lib.sh"
need_oracle
need_py numpy torch
LCPP=$(llama_tree)
[[ -f $LCPP/convert_hf_to_gguf.py ]] || skip "cannot unpack llama.cpp's source bundle"
export SN_LIBLLAMA=$(ls "$SN_SRC"/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v*.so | head -1)
W=$SN_WORK/moe
scratch "$W"
mkdir -p "$W"
CONV=$SN_BIN/sunny-convert
FAMS="qwen3moe qwen3moe_fused mixtral"

declare -A src
for f in $FAMS; do src[$f]=$(fixture "$f" bf16) || { bad "$f: fixture generation failed"; finish; }; done
$PY "$SN_SRC/tests/fixtures/gen_model.py" --family qwen3moe --shards 3 --out "$W/qwen3moe-sh3" >/dev/null &&
  $PY "$SN_SRC/tests/fixtures/gen_model.py" --family mixtral --shards 2 --out "$W/mixtral-sh2" >/dev/null ||
  { bad "sharded fixture generation failed"; finish; }
src[qwen3moe-sh3]=$W/qwen3moe-sh3 src[mixtral-sh2]=$W/mixtral-sh2
# safetensors rewritten by hand (8-byte header length, JSON header, data): st_load/st_save
cat >"$W/st.py" <<'PYEOF'
import json, struct
def st_load(path):  # -> [(name, dtype, shape, raw)] in header order
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); h.pop("__metadata__", None)
    return [(k, v["dtype"], v["shape"], b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]) for k, v in h.items()]
def st_save(path, items):
    hdr, off = {}, 0
    for k, dt, shape, raw in items:
        hdr[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]}; off += len(raw)
    j = json.dumps(hdr).encode(); j += b" " * ((8 - len(j) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + b"".join(r for *_, r in items))
PYEOF
# one expert matrix of layer 0 alone in a second shard: llama.cpp yields all three layer-0 stacks
# only when it arrives, at the very end (the down and gate stacks are complete long before)
d=$W/qwen3moe-split src[qwen3moe-split]=$d
rm -rf "$d" && mkdir -p "$d" && cp "${src[qwen3moe]}"/*.json "$d/" && $PY - "${src[qwen3moe]}" "$d" <<'PYEOF' || { bad "split fixture"; finish; }
import json, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[2])); from st import st_load, st_save
t = st_load(sys.argv[1] + "/model.safetensors"); last = "model.layers.0.mlp.experts.3.up_proj.weight"
parts = [[x for x in t if x[0] != last], [x for x in t if x[0] == last]]
wm = {}
for i, items in enumerate(parts):
    fn = f"model-{i + 1:05d}-of-00002.safetensors"; st_save(os.path.join(sys.argv[2], fn), items)
    wm.update({x[0]: fn for x in items})
json.dump({"metadata": {}, "weight_map": wm}, open(os.path.join(sys.argv[2], "model.safetensors.index.json"), "w"))
PYEOF
# checkpoints keep their source's basename (general.name derives from it); one python for all
for f in qwen3moe mixtral qwen3moe_fused; do mkdir -p "$W/pt-$f"; done
$PY "$SN_SRC/tests/fixtures/gen_torch_ckpt.py" repack-many "${src[qwen3moe]}" "$W/pt-qwen3moe/$(basename "${src[qwen3moe]}")" 1 \
  "${src[mixtral-sh2]}" "$W/pt-mixtral/mixtral-sh2" 2 \
  "${src[qwen3moe_fused]}" "$W/pt-qwen3moe_fused/$(basename "${src[qwen3moe_fused]}")" 1 >/dev/null ||
  { bad "torch.save of the fixtures failed"; finish; }

conv() { # conv DIR OUTTYPE OUT -> 0 when written (sunny-convert's messages shown only on failure)
  "$CONV" "$1" -o "$3" --outtype "$2" --force >/dev/null 2>"$W/conv.err" || { cat "$W/conv.err"; return 1; }
}

# ---- 1. llama.cpp's converter and llama-quantize
cases=()
for f in $FAMS; do for ot in f32 f16 bf16 q8_0; do cases+=("$f $ot"); done; done
cases+=("qwen3moe-sh3 q8_0" "mixtral-sh2 q8_0" "qwen3moe-split q8_0")
: >"$W/lcpp-jobs.tsv"
for c in "${cases[@]}"; do
  set -- $c
  printf '%s\t%s\t%s\n' "${src[$1]}" "$W/ref-$1-$2.gguf" "$2" >>"$W/lcpp-jobs.tsv"
done
SN_LCPP_NO_VOCAB=1 $PY "$SN_SRC/tests/tools/lcpp_convert.py" "$LCPP" --jobs "$W/lcpp-jobs.tsv" >"$W/lcpp.log" 2>&1 ||
  echo "info - llama.cpp's converter failed on some jobs (each is reported below)"
for c in "${cases[@]}"; do
  set -- $c
  ours=$W/$1-$2.gguf ref=$W/ref-$1-$2.gguf
  conv "${src[$1]}" "$2" "$ours" || { bad "$1/$2: sunny-convert failed"; continue; }
  [[ -f $ref ]] || { bad "$1/$2: llama.cpp's converter failed: $(grep -F "FAILED ${src[$1]} -> $ref" "$W/lcpp.log" | cut -c1-300)"; continue; }
  if out=$($PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" --skip-prefix tokenizer. 2>&1); then
    ok "$1/$2: keys and tensors equal llama.cpp's converter ($(tail -1 <<<"$out" | sed 's/.*: //'))"
  else bad "$1/$2: differs from llama.cpp's converter:"; echo "$out" | head -20; fi
done
for f in $FAMS; do
  ours=$W/$f-q4_0.gguf ref=$W/lq-$f-q4_0.gguf
  conv "${src[$f]}" q4_0 "$ours" || { bad "$f/q4_0: sunny-convert failed"; continue; }
  if "$SN_BUILD/tests/llama_quantize_oracle" "$W/$f-f32.gguf" "$ref" 2 >/dev/null 2>&1; then
    cmp -s "$ours" "$ref" && ok "$f/q4_0: file equals llama-quantize MOSTLY_Q4_0 byte for byte" ||
      { bad "$f/q4_0 differs from llama-quantize:"; $PY "$SN_SRC/tests/tools/gguf_same.py" "$LCPP/gguf-py" "$ref" "$ours" | head; }
  else bad "$f: llama_model_quantize failed"; fi
done
if $PY - "$LCPP/gguf-py" "$W/mixtral-q4_0.gguf" "$W/qwen3moe-q4_0.gguf" <<'PYEOF'
import sys; sys.path.insert(0, sys.argv[1]); import gguf
for path, kv in ((sys.argv[2], "Q8_0"), (sys.argv[3], "Q4_0")):
    t = {x.name: (x.tensor_type.name, [int(d) for d in x.shape]) for x in gguf.GGUFReader(path).tensors}
    assert t["blk.1.attn_k.weight"][0] == kv and t["blk.1.attn_v.weight"][0] == kv, (path, t["blk.1.attn_k.weight"])
    assert t["blk.1.ffn_gate_inp.weight"][0] == "F32" and t["blk.1.ffn_down_exps.weight"][0] == "Q4_0"
    assert len(t["blk.1.ffn_up_exps.weight"][1]) == 3
PYEOF
then ok "q4_0 types: router F32, 3-D experts Q4_0, attn_k/v Q8_0 with 8 experts (mixtral) and Q4_0 with 16"
else bad "q4_0 types of the expert models"; fi

# ---- 2. PyTorch checkpoints
for p in "qwen3moe qwen3moe" "mixtral mixtral-sh2" "qwen3moe_fused qwen3moe_fused"; do
  set -- $p
  d=$(ls -d "$W/pt-$1"/*/) && d=${d%/}
  for ot in q8_0 bf16; do
    want=$W/$2-$ot.gguf
    [[ -f $want ]] || conv "${src[$2]}" $ot "$want" || { bad "$2/$ot: sunny-convert failed"; continue; }
    conv "$d" $ot "$W/pt-$1-$ot.gguf" || { bad "$1 checkpoint/$ot: sunny-convert failed"; continue; }
    cmp -s "$W/pt-$1-$ot.gguf" "$want" && ok "$1 from $(ls "$d" | grep -c '\.bin$') pytorch_model .bin file(s), $ot: equals the safetensors GGUF" ||
      bad "$1 checkpoint/$ot differs from the safetensors GGUF"
  done
done

# ---- 3. errors: exit 1, a message naming the problem, nothing written
variant() { # variant NAME FAMILY PYTHON-EDIT -> a copy of the fixture (weights symlinked unless edited)
  local d=$W/bad-$1; rm -rf "$d"; mkdir -p "$d"
  for x in "${src[$2]}"/*; do ln -s "$x" "$d/"; done
  rm "$d/config.json"; cp "${src[$2]}/config.json" "$d/"
  $PY - "$d" "$3" <<'PYEOF' || return 1
import json, os, sys
d, edit = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(d)); from st import st_load, st_save
cfg = json.load(open(os.path.join(d, "config.json")))
def rewrite(fn):  # fn(name, dtype, shape, raw) -> list of (name, dtype, shape, raw) to write instead
    p = os.path.join(d, "model.safetensors"); t = st_load(p); os.unlink(p)
    st_save(p, [y for x in t for y in fn(*x)])
exec(edit)
json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
PYEOF
  echo "$d"
}
expect_fail() { # expect_fail NAME DIR PATTERN: exit 1, PATTERN in stderr, no output file
  local out=$W/bad-$1.gguf
  rm -f "$out" "$out.tmp"
  "$CONV" "$2" -o "$out" --outtype q8_0 >/dev/null 2>"$W/bad-$1.err"; local rc=$?
  if ((rc == 1)) && grep -Eq "$3" "$W/bad-$1.err" && [[ ! -e $out && ! -e $out.tmp ]]; then
    ok "$1: exit 1, $(head -c 240 "$W/bad-$1.err")"
  else bad "$1: exit $rc, want 1 and /$3/ and no output: $(head -c 300 "$W/bad-$1.err")"; fi
}
E='model.layers.1.mlp.experts'
expect_fail "expert count below the tensors'" "$(variant count qwen3moe 'cfg["num_experts"] = 12')" \
  "model.safetensors: tensor 'model.layers.[01].mlp.experts.1[2-5].[a-z_]+.weight' is expert 1[2-5] but config.json has num_experts = 12"
expect_fail "expert count above the tensors'" "$(variant count2 mixtral 'cfg["num_local_experts"] = 10')" \
  "model.safetensors: tensor 'model.layers.0.block_sparse_moe.gate.weight' has shape \[8, 128\] but config.json implies \[10, 128\]"
expect_fail "top-k above the expert count" "$(variant topk qwen3moe 'cfg["num_experts_per_tok"] = 17')" \
  "config.json: num_experts_per_tok = 17 but num_experts = 16"
expect_fail "missing expert" "$(variant missing qwen3moe "rewrite(lambda k, dt, sh, r: [] if k == '$E.5.up_proj.weight' else [(k, dt, sh, r)])")" \
  "model.safetensors: blk.1.ffn_up_exps.weight is stacked from 16 tensors \(like '$E.[0-9]+.up_proj.weight'\) but expert 5 is missing"
expect_fail "expert shape mismatch" "$(variant shape qwen3moe "rewrite(lambda k, dt, sh, r: [(k, dt, [96, 128], r + r[:len(r) // 2])] if k == '$E.3.gate_proj.weight' else [(k, dt, sh, r)])")" \
  "model.safetensors: tensor '$E.3.gate_proj.weight' has shape \[96, 128\] but config.json implies \[64, 128\]"
expect_fail "fused gate_up shape mismatch" "$(variant fused qwen3moe_fused 'cfg["moe_intermediate_size"] = 32')" \
  "model.safetensors: tensor 'model.layers.0.mlp.experts.(gate_up|down)_proj' has shape \[16, (128|256), (64|128)\] but config.json implies"
expect_fail "dense layer among sparse ones" "$(variant dense qwen3moe 'cfg["mlp_only_layers"] = [1]')" \
  "config.json: layer 1 has a dense MLP instead of experts .*llama.cpp's qwen3moe needs experts in every layer"
expect_fail "Mixtral without an expert count" "$(variant nocount mixtral 'del cfg["num_local_experts"]')" \
  "config.json: no expert count \(num_local_experts\)"

# ---- 4. llama.cpp and sunny-run run them; --blob refuses them
: >"$W/jobs.jsonl"
for g in qwen3moe-f32 qwen3moe_fused-f32 qwen3moe-q4_0 mixtral-f32 mixtral-q4_0; do
  p='[9906,1917,11,1234,5678,42]'; [[ $g == mixtral* ]] && p='[1,415,2936,9060,285,1142]'
  echo "{\"model\":\"$W/$g.gguf\",\"prompt_ids\":$p,\"n\":32,\"tag\":\"$g\"}" >>"$W/jobs.jsonl"
done
$ORACLE batch --threads 1 <"$W/jobs.jsonl" >"$W/oracle.jsonl" 2>"$W/oracle.err" || bad "llama.cpp oracle failed: $(tail -3 "$W/oracle.err")"
$PY - "$W/jobs.jsonl" "$W/oracle.jsonl" <<'PYEOF' || sn_fail=$((sn_fail + 1))
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
res = [json.loads(l) for l in open(sys.argv[2])]
bad, ids = 0, {}
for j, r in zip(jobs, res):
    ids[j["tag"]] = r["ids"]
    if len(r["ids"]) != 32 or len(set(r["ids"])) < 16:
        print(f"FAIL - {j['tag']}: llama.cpp gave {len(r['ids'])} tokens, {len(set(r['ids']))} distinct"); bad += 1
    else:
        print(f"ok   - {j['tag']}: llama.cpp loads it and greedy-decodes 32 tokens ({len(set(r['ids']))} distinct)")
if len(res) != len(jobs):
    print(f"FAIL - llama.cpp answered {len(res)} of {len(jobs)} runs"); bad += 1
elif ids["qwen3moe-f32"] != ids["qwen3moe_fused-f32"]:
    print("FAIL - the fused and per-expert layouts decode differently in llama.cpp"); bad += 1
else:
    print("ok   - fused and per-expert layouts: llama.cpp decodes the same 32 tokens")
sys.exit(1 if bad else 0)
PYEOF
# sunny-run decodes the same tokens (test_moe_run.sh covers every type, prompt and the K-quants)
$PY - "$W/jobs.jsonl" "$W/oracle.jsonl" "$SN_BIN/sunny-run" <<'PYEOF' || sn_fail=$((sn_fail + 1))
import json, subprocess, sys
bad = 0
for j, r in zip(map(json.loads, open(sys.argv[1])), map(json.loads, open(sys.argv[2]))):
    out = subprocess.run([sys.argv[3], j["model"], "--prompt-ids", ",".join(map(str, j["prompt_ids"])), "-n", "32",
                          "--json", "--ignore-eos", "-t", "2"], capture_output=True, text=True)
    ids = json.loads(out.stdout)["ids"] if out.returncode == 0 else out.stderr.strip()[:200]
    ok = ids == r["ids"]
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} - sunny-run {j['tag']}: " + ("the same 32 tokens as llama.cpp" if ok else f"{ids} vs {r['ids']}"))
sys.exit(1 if bad else 0)
PYEOF
# the installers' check (the runtime's own load) takes Mixtral, llama with experts and no ffn_gate
mkdir -p "$W/lms"
if "$SN_BIN/sunny-integrate" lmstudio "$W/mixtral-q4_0.gguf" --models-dir "$W/lms" --force >"$W/lms.out" 2>&1 &&
  grep -q "placed: .*(llama, Q4_0)" "$W/lms.out"; then ok "sunny-integrate places the Mixtral GGUF: $(grep placed: "$W/lms.out")"
else bad "sunny-integrate refuses the Mixtral GGUF: $(tail -3 "$W/lms.out")"; fi
rm -f "$W/x.snb"
"$CONV" "${src[qwen3moe]}" -o "$W/x.snb" --blob --dtype fp16 >/dev/null 2>"$W/blob.err"; rc=$?
((rc == 1)) && grep -q "mixture-of-experts models have no blob format yet" "$W/blob.err" && [[ ! -e $W/x.snb ]] &&
  ok "--blob of an MoE model: exit 1, nothing written" || bad "--blob of an MoE model: exit $rc: $(head -c 300 "$W/blob.err")"
finish
