# bench/lib.sh - sourced by the benches that put sunny-run next to llama-bench and node-llama-cpp
# (bench/decode.sh, bench/recurrent.sh): the one summary row they all print, and the decode
# bandwidth it ends with.
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
# one row of it). Read with gguf-py from the llama.cpp source next to LBIN (build_llama_tools.sh).
bench_decode_bytes() {
  local gp
  gp=$(ls -d "$(dirname "$(dirname "$1")")"/src-*/gguf-py 2>/dev/null | head -1)
  [[ -n $gp ]] || { echo 0; return; }
  /usr/bin/python3 - "$gp" "$2" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "tests/tools")
import gguf
from gguf_fast import reader
ts = reader(gguf, sys.argv[2]).tensors
names = {t.name for t in ts}
skip = {"token_embd.weight"} if "output.weight" in names else set()
print(sum(int(t.n_bytes) for t in ts if t.name not in skip))
PYEOF
}
