"""world_template_check.py - the world chat template sunny-convert writes into an RWKV GGUF that
ships none must behave like the one llama.cpp's converter writes there (llama.cpp's
models/templates/llama-cpp-rwkv-world.jinja, read from its source tree). Both are rendered with
jinja2 as apply_chat_template sets it up, on sunny's probe conversations, the held-out ones of the
template-claims test and reasoning / null-content turns, with and without a generation prompt,
with enable_thinking unset / true / false, with and without a BOS text; every rendering must be
byte-identical. With --gguf it also checks that the GGUF's tokenizer.chat_template IS sunny's file.

Usage: world_template_check.py SUNNY.jinja LLAMACPP.jinja PROBES.json HELDOUT.json
                               [--gguf FILE --gguf-py DIR]
"""
import argparse, json, sys
from jinja2.sandbox import ImmutableSandboxedEnvironment

ap = argparse.ArgumentParser()
ap.add_argument("ours"); ap.add_argument("theirs"); ap.add_argument("probes"); ap.add_argument("heldout")
ap.add_argument("--gguf"); ap.add_argument("--gguf-py")
a = ap.parse_args()
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
ours_text = open(a.ours, encoding="utf-8").read()
ours, theirs = env.from_string(ours_text), env.from_string(open(a.theirs, encoding="utf-8").read())
probes = json.load(open(a.probes))
convs = (probes if isinstance(probes, list) else probes["conversations"]) + json.load(open(a.heldout))["conversations"]
convs += [{"name": "reasoning", "messages": [{"role": "user", "content": "q"},
           {"role": "assistant", "content": "<think>hm</think> A "}, {"role": "user", "content": "again"}]},
          {"name": "null-content", "messages": [{"role": "user", "content": "q"},
           {"role": "assistant", "content": None}, {"role": "user", "content": "x"}]},
          {"name": "two-systems", "messages": [{"role": "system", "content": "first"},
           {"role": "system", "content": "second"}, {"role": "user", "content": "x"}]}]
n = bad = 0
for c in convs:
    for kw in ({"add_generation_prompt": True}, {"add_generation_prompt": False}, {},
               {"add_generation_prompt": True, "enable_thinking": True},
               {"add_generation_prompt": True, "enable_thinking": False}):
        for bos in ("<s>", ""):
            x = ours.render(messages=c["messages"], bos_token=bos, **kw)
            y = theirs.render(messages=c["messages"], bos_token=bos, **kw)
            n += 1
            if x != y:
                bad += 1
                print(f"DIFF {c['name']} {kw} bos={bos!r}: sunny {x[:100]!r} / llama.cpp {y[:100]!r}")
if a.gguf:
    sys.path.insert(0, a.gguf_py)
    import gguf
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from gguf_fast import reader
    f = reader(gguf, a.gguf).get_field("tokenizer.chat_template")
    got = None if f is None else bytes(f.parts[f.data[0]]).decode("utf-8")
    if got != ours_text:
        bad += 1
        print(f"GGUF {a.gguf}: tokenizer.chat_template is {'missing' if got is None else repr(got[:80])}, not sunny's world template")
print(f"{n} renders compared, {bad} differences")
sys.exit(1 if bad else 0)
