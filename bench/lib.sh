# bench/lib.sh - sourced by the benches that put sunny-run next to llama-bench and node-llama-cpp
# (bench/decode.sh, bench/recurrent.sh): the one summary row they all print.
#
# bench_row OURS LBENCH NODE_REF WIDTH HEAD TAIL prints one line
#   HEAD | PF BPF NPF PF/BPF PF/NPF | DC BDC NDC DC/BDC DC/NDC | TAIL
# where PF/DC are the medians of prefill_tok_s / decode_tok_s over OURS (sunny-run --json records,
# one a line), BPF/BDC the medians of samples_ts over LBENCH's prompt / generation rows (llama-bench
# -o jsonl), NPF/NDC NODE_REF's prefill_tok_s / decode_tok_s (llama_oracle.mjs bench; '{}' when it
# was not run: nan), tok/s in WIDTH characters.
bench_row() {
  /usr/bin/python3 - "$@" <<'PYEOF'
import json, statistics, sys
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
print(head, "|", half % (pf, bpf, npf, r(pf, bpf), r(pf, npf)), "|", half % (dc, bdc, ndc, r(dc, bdc), r(dc, ndc)),
      "|", tail)
PYEOF
}
