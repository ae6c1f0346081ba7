# bench/lib.sh - sourced by the benches that put sunny-run next to llama-bench and node-llama-cpp
# (bench/decode.sh, bench/recurrent.sh, bench/family.sh): the one summary row they all print, the
# decode bandwidth it ends with, and the llama.cpp-made models and interleaved tables of family.sh.
#
# bench_row OURS LBENCH NODE_REF WIDTH HEAD TAIL prints one line
#   HEAD | PF BPF NPF PF/BPF PF/NPF | DC BDC NDC DC/BDC DC/NDC | TAIL
# where PF/DC are the medians of prefill_tok_s / decode_tok_s over OURS (sunny-run --json records,
# one a line), BPF/BDC the medians of samples_ts over LBENCH's prompt / generation rows (llama-bench
# -o jsonl), NPF/NDC NODE_REF's prefill_tok_s / decode_tok_s (llama_oracle.mjs bench; '{}' when it
# was not run: nan), tok/s in WIDTH characters. With BENCH_BYTES (weight bytes one decode step
# reads, bench_decode_bytes) and BENCH_BW (the machine's read GB/s at this thread count,
# bench_machine_bw) set, it ends with "| ours GB/s (% of machine) bench GB/s (%)": decode tok/s x
# bytes per token, the share of the memory's bandwidth each engine's decode reaches.
# Under the row: the smallest, median and largest decode ratio of the interleaved pairs (this VM's
# speed drifts within seconds, so the row's ratio of medians is one draw from that spread).
bench_row() {
  BENCH_BYTES=${BENCH_BYTES:-0} BENCH_BW=${BENCH_BW:-0} /usr/bin/python3 - "$@" <<'PYEOF'
import json, os, statistics, sys
ours = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bench = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
node = json.loads(sys.argv[3])
w, head, tail = int(sys.argv[4]), sys.argv[5], sys.argv[6]
pf = statistics.median(o["prefill_tok_s"] for o in ours)
dc = statistics.median(o["decode_tok_s"] for o in ours)
def lb(pp):
    rows = [b for b in bench if (b["n_prompt"] > 0) == pp]
    return statistics.median(x for b in rows for x in b["samples_ts"]) if rows else float("nan")
bpf, bdc = lb(True), lb(False)
npf, ndc = node.get("prefill_tok_s", float("nan")), node.get("decode_tok_s", float("nan"))
r = lambda a, b: a / b if b == b and b > 0 else float("nan")
half = "%{0}.1f %{0}.1f %{0}.1f %5.2fx %5.2fx".format(w)
nbytes, bw = float(os.environ["BENCH_BYTES"]), float(os.environ["BENCH_BW"])
bwcol = ""
if nbytes > 0 and bw > 0:
    g = lambda ts: ts * nbytes / 1e9
    bwcol = " | %5.1f %3.0f%% %5.1f %3.0f%%" % (g(dc), 100 * g(dc) / bw, g(bdc), 100 * g(bdc) / bw)
print(head, "|", half % (pf, bpf, npf, r(pf, bpf), r(pf, npf)), "|", half % (dc, bdc, ndc, r(dc, bdc), r(dc, ndc)),
      "|", tail + bwcol)
# the spread behind the medians: run k of OURS against llama-bench's k-th generation row (the benches
# interleave them, one llama-bench repetition then one sunny-run), when both have every run
gen = [b for b in bench if b["n_prompt"] == 0]
if len(gen) == len(ours) >= 2:
    pr = sorted(r(o["decode_tok_s"], statistics.median(g["samples_ts"])) for o, g in zip(ours, gen))
    print("%s   decode ratio per pair: min %.2fx, median %.2fx, max %.2fx (%d pairs)"
          % (" " * len(head), pr[0], statistics.median(pr), pr[-1], len(pr)))
PYEOF
}

# bench_machine_bw WORKDIR THREADS prints this machine's DRAM read GB/s with THREADS readers
# (bench/tools/membw.c, compiled into WORKDIR with the host compiler for this CPU whenever the source
# is newer; the best of 5 plain and 5 page-touching passes over 1 GB, measured once per thread count
# and kept in WORKDIR for the rest of the run).
bench_machine_bw() {
  local w=$1 t=$2
  [[ -x $w/membw && $w/membw -nt bench/tools/membw.c ]] ||
    cc -O2 -march=native -pthread -o "$w/membw" bench/tools/membw.c || { echo 0; return; }
  [[ -s $w/membw.$t ]] || "$w/membw" "$t" >"$w/membw.$t" || { echo 0; return; }
  cat "$w/membw.$t"
}

# bench_file_pmd WORKDIR FILE prints the percentage of FILE a fresh read-only mapping of it gets in
# 2 MB page-table entries, the rest being 4 KB pages (bench/tools/pmdmap.c, compiled once into
# WORKDIR). llama-bench reads the weights through such a mapping, so its decode speed on a file
# depends on this share, which the page cache decides (how the file was written and read back) and
# which moves between files and over time (5-88% on one machine in one hour); sunny-run copies its
# matrices into huge pages at load unless run with --mmap. Unless SN_BENCH_REFOLD=0, the file is
# first dropped from the page cache and read back through a MADV_HUGEPAGE mapping, which gives
# llama-bench its best case (~100% on Linux 6.18 / ext4) instead of whatever the cache held.
bench_file_pmd() {
  local w=$1 f=$2
  [[ -x $w/pmdmap ]] || cc -O2 -o "$w/pmdmap" bench/tools/pmdmap.c || { echo nan; return; }
  if [[ ${SN_BENCH_REFOLD:-1} != 0 ]]; then "$w/pmdmap" --refold "$f" || echo nan
  else "$w/pmdmap" "$f" || echo nan; fi
}

# bench_decode_bytes LBIN GGUF prints the weight bytes one decode step reads: every tensor of the
# file once, except the token embedding when an untied output.weight exists (then a step looks up
# one row of it), expert stacks (*_exps.*) counted n_used / n_expert, and no tensor of the
# multi-token-prediction blocks (the last nextn_predict_layers blocks: a plain decode step skips
# them). Read with gguf-py from the llama.cpp source next to LBIN (build_llama_tools.sh).
bench_decode_bytes() {
  local gp
  gp=$(ls -d "$(dirname "$(dirname "$1")")"/src-*/gguf-py 2>/dev/null | head -1)
  [[ -n $gp ]] || { echo 0; return; }
  /usr/bin/python3 - "$gp" "$2" <<'PYEOF'
import re, sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "tests/tools")
import gguf
from gguf_fast import reader
r = reader(gguf, sys.argv[2])
arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
kv = lambda k, d: int(r.fields[f"{arch}.{k}"].parts[-1][0]) if f"{arch}.{k}" in r.fields else d
n_exp, n_used = kv("expert_count", 0), kv("expert_used_count", 0)
first_mtp = kv("block_count", 1 << 30) - kv("nextn_predict_layers", 0)
names = {t.name for t in r.tensors}
total = 0.0
for t in r.tensors:
    m = re.match(r"blk\.(\d+)\.", t.name)
    if (t.name == "token_embd.weight" and "output.weight" in names) or (m and int(m.group(1)) >= first_mtp):
        continue
    total += int(t.n_bytes) * (n_used / n_exp if "_exps." in t.name and n_exp else 1)
print(int(total))
PYEOF
}

# bench_lcpp_model B LSRC OUT SPLICE GEN... makes OUT, a bf16 GGUF, unless it exists: GEN (a fixture
# generator and its arguments, given --out DIR) writes an HF folder which llama.cpp's own
# convert_hf_to_gguf.py from LSRC converts (tests/tools/lcpp_convert.py). With SPLICE=1 the
# converter's vocabulary step is skipped (for a tokenizer.json it needs transformers, which this
# machine lacks) and sunny's tokenizer keys (B/tests/vocab_only, equal to llama.cpp's by the
# vocab tests) are spliced in: llama-bench needs a vocabulary. The HF folder is deleted afterwards.
bench_lcpp_model() {
  local b=$1 lsrc=$2 out=$3 splice=$4 rc=0; shift 4
  [[ -f $out ]] && return 0
  local base=${out%.gguf}
  rm -rf "$base-hf"
  echo "making $out (generator, llama.cpp's converter: minutes) ..." >&2
  if [[ $splice == 1 ]]; then
    /usr/bin/python3 "$@" --out "$base-hf" >/dev/null &&
      SN_LCPP_NO_VOCAB=1 /usr/bin/python3 tests/tools/lcpp_convert.py "$lsrc" "$base-hf" "$base-novocab.gguf" bf16 >"$base-lcpp.log" 2>&1 &&
      "$b/tests/vocab_only" "$base-hf" "$base-vocab.gguf" >/dev/null &&
      /usr/bin/python3 - "$base-novocab.gguf" "$base-vocab.gguf" "$out.tmp" <<'PYEOF' || rc=1
import sys
sys.path.insert(0, "tests/tools")
import gguf_split
ver, kvs, tensors, size_of, b, data_start, align = gguf_split.read_gguf(sys.argv[1])
tok = [kv for kv in gguf_split.read_gguf(sys.argv[2])[1] if kv[0].startswith("tokenizer.")]
gguf_split.write_shard(sys.argv[3], [kv for kv in kvs if not kv[0].startswith("tokenizer.")] + tok, tensors, size_of, b,
                       data_start, align)
PYEOF
  else
    /usr/bin/python3 "$@" --out "$base-hf" >/dev/null &&
      /usr/bin/python3 tests/tools/lcpp_convert.py "$lsrc" "$base-hf" "$out.tmp" bf16 >"$base-lcpp.log" 2>&1 || rc=1
  fi
  rm -rf "$base-hf" "$base-novocab.gguf" "$base-vocab.gguf"
  ((rc == 0)) && mv "$out.tmp" "$out" || { rm -f "$out.tmp"; echo "making $out failed (see $base-lcpp.log)" >&2; return 1; }
}

# bench_table MODEL DTYPES THREADS PROMPTS prints, for each type DT (the file MODEL-DT.gguf), thread
# count and prompt length NP, one bench_row of RUNS pairs run interleaved (one llama-bench, then one
# sunny-run, so both see the same load; LBIN, RUN, W, RUNS set by the caller):
#   NP 64:  llama-bench -p 64 -n 64 -fa on; sunny-run 64 prompt ids then 64 decode steps (--warmup
#           evaluates the prompt once untimed first, as llama-bench warms up);
#   NP > 64: llama-bench -p NP -n 0; sunny-run NP prompt ids, one token (its decode column is empty).
# The prompt ids are (i * 7919 + 13) mod 150000: ordinary tokens in every vocabulary benched here.
# Before each type, llama-bench's file is read back into the page cache in 2 MB folios
# (bench_file_pmd). Decode GB/s from bench_decode_bytes against this machine's read bandwidth.
bench_table() {
  local m=$1 dtypes=$2 threads=$3 prompts=$4 dt t np g r n lbn ids ours lb load bytes
  printf '%-8s %2s %4s | %7s %7s %7s %6s %6s | %7s %7s %7s %6s %6s | %s\n' type t np pf lb-pf node pf/lb pf/nd dc lb-dc node \
    dc/lb dc/nd "load | decode GB/s (% of machine): sunny, llama-bench"
  for dt in $dtypes; do
    g=$m-$dt.gguf
    bytes=$(bench_decode_bytes "$LBIN" "$g")
    echo "page cache: $(bench_file_pmd "$W" "$g")% of $(basename "$g") in 2 MB pages for llama-bench; decode reads $((bytes / 1000000)) MB a step"
    for t in $threads; do
      for np in $prompts; do
        ours=$W/ours-$dt-$t-$np.jsonl lb=$W/lb-$dt-$t-$np.jsonl
        : >"$ours"; : >"$lb"
        load=$(cut -d' ' -f1 /proc/loadavg)
        n=65 lbn=64; ((np > 64)) && { n=1; lbn=0; }
        ids=$(/usr/bin/python3 -c "print(','.join(str((i * 7919 + 13) % 150000) for i in range($np)))")
        for ((r = 0; r < RUNS; r++)); do
          "$LBIN/llama-bench" -m "$g" -p "$np" -n "$lbn" -r 1 -fa on -t "$t" -o jsonl 2>/dev/null >>"$lb"
          "$RUN" "$g" --prompt-ids "$ids" -n $n --json --warmup --ignore-eos -t "$t" 2>/dev/null >>"$ours"
        done
        BENCH_BYTES=$bytes BENCH_BW=$(bench_machine_bw "$W" "$t") bench_row "$ours" "$lb" '{}' 7 \
          "$(printf '%-8s %2s %4s' "$dt" "$t" "$np")" "load $load-$(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
}
