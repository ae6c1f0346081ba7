#!/usr/bin/python3
"""render_jinja.py - renders a Hugging Face Jinja chat template the way
transformers.PreTrainedTokenizerBase.apply_chat_template does, so tests can compare it with our Go
templates rendered by tests/tools/render_go (see tests/integration/test_templates_render.sh).

Environment as in transformers: jinja2 ImmutableSandboxedEnvironment(trim_blocks, lstrip_blocks,
loopcontrols), raise_exception(), the tojson filter (ensure_ascii=False), strftime_now(),
bos_token/eos_token from tokenizer_config.json (or --bos/--eos), add_generation_prompt=True,
tools=None/documents=None unless a conversation passes kwargs.

BOS: when the tokenizer adds BOS itself (add_bos_token, or llama3's post-processor) llama.cpp and
Ollama prepend the BOS *token*, so the prompt text must not contain it. --strip-bos removes one
leading bos_token from the rendering; that stripped text is what our Go template must produce.

Usage:
  render_jinja.py render --template FILE [--bos S] [--eos S] [--strip-bos] [--kwargs JSON]
                         --conversations F --out DIR
      FILE is a tokenizer_config.json (chat_template, bos_token, eos_token) or a raw .jinja text.
      Writes DIR/NAME.txt, or DIR/NAME.err holding the exception text when the template raises.
  render_jinja.py transform KIND --conversations F --out FILE
      Writes a transformed copy of the conversations (see TRANSFORMS) for expected-difference checks.
"""
import argparse
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateError(Exception):
    pass


def _raise_exception(message):
    raise TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _strftime_now(fmt):
    return datetime.now().strftime(fmt)


def _token_text(v):
    if isinstance(v, dict):  # AddedToken serialised as {"content": ...}
        return v.get("content")
    return v


def load_template(path, bos, eos):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".json"):
        cfg = json.loads(text)
        tmpl = cfg.get("chat_template")
        if isinstance(tmpl, list):  # [{"name": "default", "template": ...}, ...]
            tmpl = next(t["template"] for t in tmpl if t.get("name") == "default")
        if tmpl is None:
            sys.exit(f"{path}: no chat_template")
        if bos is None:
            bos = _token_text(cfg.get("bos_token"))
        if eos is None:
            eos = _token_text(cfg.get("eos_token"))
        return tmpl, bos, eos
    return text, bos, eos


def render(template, bos, eos, messages, kwargs):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    compiled = env.from_string(template)
    args = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": True}
    if bos is not None:
        args["bos_token"] = bos
    if eos is not None:
        args["eos_token"] = eos
    args.update(kwargs)
    return compiled.render(**args)


def cmd_render(a):
    template, bos, eos = load_template(a.template, a.bos, a.eos)
    with open(a.conversations, encoding="utf-8") as f:
        convs = json.load(f)["conversations"]
    os.makedirs(a.out, exist_ok=True)
    for c in convs:
        base = os.path.join(a.out, c["name"])
        try:
            kwargs = dict(json.loads(a.kwargs), **c.get("kwargs", {}))
            text = render(template, bos, eos, c["messages"], kwargs)
        except (TemplateError, jinja2.TemplateError) as e:
            with open(base + ".err", "w", encoding="utf-8") as f:
                f.write(f"{type(e).__name__}: {e}\n")
            continue
        if a.strip_bos and bos and text.startswith(bos):
            text = text[len(bos):]
        with open(base + ".txt", "w", encoding="utf-8", newline="") as f:
            f.write(text)


def _collate(msgs):
    out = []
    for m in msgs:
        if out and out[-1]["role"] == m["role"]:
            out[-1] = dict(out[-1], content=out[-1]["content"] + "\n\n" + m["content"])
        else:
            out.append(dict(m))
    return out


def _strip_think(msgs):
    out = []
    for m in msgs:
        c = m["content"]
        if m["role"] == "assistant" and "</think>" in c:
            c = c.split("</think>")[-1].lstrip("\n")
        out.append(dict(m, content=c))
    return out


def _drop_empty_turns(msgs):
    out, i = [], 0
    while i < len(msgs):
        m = msgs[i]
        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
        if (m["role"] == "user" and nxt is not None and nxt["role"] == "assistant"
                and nxt["content"] == ""):
            i += 2
            continue
        out.append(m)
        i += 1
    return out


# Each transform turns a conversation into the one on which the two renderers agree again, so an
# expected difference is asserted to be exactly that difference.
TRANSFORMS = {
    "trim": lambda c: dict(c, messages=[dict(m, content=m["content"].strip())
                                        for m in c["messages"]]),
    "trim-assistant": lambda c: dict(c, messages=[
        dict(m, content=m["content"].strip()) if m["role"] == "assistant" else m
        for m in c["messages"]]),
    "collate": lambda c: dict(c, messages=_collate(c["messages"])),
    "no-kwargs": lambda c: {k: v for k, v in c.items() if k != "kwargs"},
    "strip-think": lambda c: dict(c, messages=_strip_think(c["messages"])),
    "drop-empty-system": lambda c: dict(c, messages=[m for m in c["messages"] if not (
        m["role"] == "system" and m["content"] == "")]),
    "drop-empty-turn": lambda c: dict(c, messages=_drop_empty_turns(c["messages"])),
}


def cmd_transform(a):
    with open(a.conversations, encoding="utf-8") as f:
        doc = json.load(f)
    doc["conversations"] = [TRANSFORMS[a.kind](c) for c in doc["conversations"]]
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render")
    r.add_argument("--template", required=True)
    r.add_argument("--bos")
    r.add_argument("--eos")
    r.add_argument("--strip-bos", action="store_true")
    r.add_argument("--kwargs", default="{}",
                   help="JSON object of extra template variables (a conversation's kwargs win)")
    r.add_argument("--conversations", required=True)
    r.add_argument("--out", required=True)
    t = sub.add_parser("transform")
    t.add_argument("kind", choices=sorted(TRANSFORMS))
    t.add_argument("--conversations", required=True)
    t.add_argument("--out", required=True)
    a = p.parse_args()
    if a.cmd == "render":
        cmd_render(a)
    else:
        cmd_transform(a)


if __name__ == "__main__":
    main()
