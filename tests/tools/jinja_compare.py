#!/usr/bin/python3
"""jinja_compare.py - compares the JSON-lines outputs of tests/tools/jinja_oracle.py (jinja2) and
jinja_render (sunny's C interpreter) per template. Prints the templates with refusals or
mismatches (where the two renderings first differ) and one summary line. Exit 1 on any mismatch (a C rendering that differs from jinja2, or one
side raising while the other renders)."""
import json
import sys


def compare(name, py_path, c_path):
    py = [json.loads(l) for l in open(py_path, encoding="utf-8")]
    cc = [json.loads(l) for l in open(c_path, encoding="utf-8")]
    cnt = {"identical": 0, "raised": 0, "refused": 0, "mismatch": 0}
    notes = []
    for p, c in zip(py, cc, strict=True):
        if c["status"] == "unsupported":
            cnt["refused"] += 1
            notes.append(f"  refused {p['name']}: {c['error']}")
        elif p["status"] == "raised" and c["status"] == "raised":
            cnt["raised"] += 1
        elif p["status"] == "ok" and c["status"] == "ok" and p["text"] == c["text"]:
            cnt["identical"] += 1
        else:
            cnt["mismatch"] += 1
            if p["status"] != "ok" or c["status"] != "ok":
                notes.append(f"  MISMATCH {p['name']}: jinja2 {p['status']} {p.get('error', '')[:200]!r}"
                             f" / sunny {c['status']} {c.get('error', '')[:200]!r}")
            else:
                a, b = p["text"], c["text"]
                i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
                notes.append(f"  MISMATCH {p['name']} at offset {i}: jinja2 {a[max(0, i - 30):i + 50]!r}"
                             f" / sunny {b[max(0, i - 30):i + 50]!r}")
    if cnt["refused"] or cnt["mismatch"]:
        print(f"{name} " + " ".join(f"{k}={v}" for k, v in cnt.items()))
    seen = set()
    for n in notes:
        key = n.split(":")[0] if n.startswith("  refused") else n
        if "refused" in n and n.split(": ", 1)[1] in seen:  # one line per distinct reason
            continue
        seen.add(n.split(": ", 1)[1] if "refused" in n else n)
        print(n)
    return cnt


def main():
    """jinja_compare.py DIR NAME... : compares DIR/NAME.py with DIR/NAME.c for each NAME"""
    d, names = sys.argv[1], sys.argv[2:]
    tot = {"identical": 0, "raised": 0, "refused": 0, "mismatch": 0}
    full = 0
    for n in names:
        cnt = compare(n, f"{d}/{n}.py", f"{d}/{n}.c")
        full += cnt["refused"] == 0 and cnt["mismatch"] == 0
        for k in tot:
            tot[k] += cnt[k]
    print(f"jinja_oracle: {len(names)} templates, {full} agree with jinja2 on every probe; renders: "
          f"{tot['identical']} identical, {tot['raised']} raised on both sides, {tot['refused']} "
          f"refused by sunny, {tot['mismatch']} mismatches")
    return 1 if tot["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
