#!/usr/bin/python3
"""jinja_oracle.py - the reference side of the Jinja oracle test: renders a chat template with
Python jinja2 configured exactly as transformers' apply_chat_template does
(ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, the {% generation %} tag,
loopcontrols), HF's tojson
override, raise_exception, strftime_now), so tests can compare sunny's C interpreter with it.

  jinja_oracle.py cases CONVERSATIONS.json BOS EOS > CASES.json
      every conversation x add_generation_prompt True/False, as apply_chat_template's variables
      (messages, tools=None, documents=None, add_generation_prompt, bos_token, eos_token, kwargs)
  jinja_oracle.py corpus MANIFEST.json CONVERSATIONS.json NOW OUTDIR
      both of the above for every template of a corpus manifest (OUTDIR/NAME.cases.json, .py)
  jinja_oracle.py render TEMPLATE CASES.json NOW
      one JSON line per case: {"name", "status": "ok"|"raised", "text"|"error"}; strftime_now
      formats the fixed time NOW (seconds since the epoch, local time) so both sides agree.
"""
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateError(Exception):
    pass


class GenerationTag(jinja2.ext.Extension):
    """transformers' AssistantTracker: {% generation %}...{% endgeneration %} renders its body
    (the tracking of assistant-token offsets does not change the text)."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation"), [], [], body).set_lineno(lineno)

    def _generation(self, caller):
        return caller()


def cases(conv_path, bos, eos):
    convs = json.load(open(conv_path, encoding="utf-8"))["conversations"]
    out = []
    for c in convs:
        for agp in (True, False):
            v = {"messages": c["messages"], "tools": None, "documents": None,
                 "add_generation_prompt": agp, "bos_token": bos, "eos_token": eos}
            v.update(c.get("kwargs", {}))
            out.append({"name": f"{c['name']}/{'gen' if agp else 'nogen'}", "vars": v})
    json.dump(out, sys.stdout, ensure_ascii=False)


def render(tpath, cpath, now, out=sys.stdout):
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.fromtimestamp(now).strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    src = open(tpath, encoding="utf-8").read()
    try:
        tmpl, perr = env.from_string(src), None
    except Exception as e:  # a syntax error fails every case
        tmpl, perr = None, f"{type(e).__name__}: {e}"
    for c in json.load(open(cpath, encoding="utf-8")):
        r = {"name": c["name"]}
        try:
            if perr:
                raise TemplateError(perr)
            r["text"] = tmpl.render(**c["vars"])
            r["status"] = "ok"
        except Exception as e:
            r["status"], r["error"] = "raised", f"{type(e).__name__}: {e}"
        print(json.dumps(r, ensure_ascii=False), file=out)


def corpus(manifest, conv_path, now, outdir):
    """cases + jinja2 renderings for every template of a corpus manifest, in one process"""
    import os
    base = os.path.dirname(manifest)
    for e in json.load(open(manifest, encoding="utf-8"))["templates"]:
        b = os.path.join(outdir, e["file"][:-len(".jinja")])
        with open(b + ".cases.json", "w", encoding="utf-8") as f:
            saved, sys.stdout = sys.stdout, f
            try:
                cases(conv_path, e["bos_token"] or "", e["eos_token"] or "")
            finally:
                sys.stdout = saved
        with open(b + ".py", "w", encoding="utf-8") as f:
            render(os.path.join(base, e["file"]), b + ".cases.json", now, f)


if __name__ == "__main__":
    if sys.argv[1] == "corpus":
        corpus(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    elif sys.argv[1] == "cases":
        cases(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        render(sys.argv[2], sys.argv[3], int(sys.argv[4]))
