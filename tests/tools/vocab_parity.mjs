// vocab_parity.mjs - tokenizer parity: llama.cpp (node-llama-cpp, vocab-only GGUF written by sunny)
// against the HF reference tokenizer (@lenml/tokenizers = transformers.js on the same tokenizer.json).
//   node vocab_parity.mjs FAMILY GGUF CORPUS [--show N]
// FAMILY is llama3 | qwen3 | llama2. Both sides encode WITHOUT adding BOS/EOS; special-token text is
// parsed as special on both sides (HF always does; llama.cpp with parse_special=true).
// Prints one JSON summary line; exits 1 on any mismatch that is not a named known divergence below.
//   node vocab_parity.mjs --inp-out GGUF INP OUT
// compares with llama.cpp's own tokenizer test data (models/ggml-vocab-*.gguf.inp/.out: strings
// separated by "\n__ggml_vocab_test__\n", HF ids per line, no specials parsed, no BOS).
import { getLlama } from "node-llama-cpp";
import { readFileSync } from "node:fs";

// Cases where llama.cpp cannot follow HF whatever the GGUF says. Each rule is named, belongs to one
// family, and must still be PROVEN on every string it excuses: the proof re-tokenizes with llama.cpp
// after undoing exactly that cause (`nfc`: feed llama.cpp the NFC-normalized text; `plain`: split the
// text at HF's added tokens - both sides do that first - and tokenize the pieces between them without
// special-token parsing) and must then equal HF's ids. docs/TOKENIZER.md lists the same cases.
const KNOWN = {
  llama3: [],
  qwen3: [
    { name: "qwen-nfc", fix: "nfc",
      why: "Qwen's tokenizer.json has an NFC normalizer; llama.cpp's qwen2 pre-tokenizer does not normalize",
      applies: (t) => t.normalize("NFC") !== t },
    { name: "qwen-plain-</s>", fix: "plain",
      why: "'</s>' is an ordinary token in Qwen's vocab, but llama.cpp's loader forces every token spelled " +
           "'</s>' to CONTROL (EOG auto-detection), so with special parsing it matches it whole",
      applies: (t) => t.includes("</s>") },
  ],
  llama2: [],
};

if (process.argv[2] === "--inp-out") {
  const [, gguf, inp, outp] = process.argv.slice(2);
  const texts = readFileSync(inp, "utf8").split("\n__ggml_vocab_test__\n");
  if (texts.length && texts[texts.length - 1] === "") texts.pop();
  const want = readFileSync(outp, "utf8").split("\n");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
  const model = await llama.loadModel({ modelPath: gguf, vocabOnly: true });
  let eq = 0;
  const bad = [];
  texts.forEach((t, i) => {
    const exp = want[i].trim() === "" ? [] : want[i].trim().split(/\s+/).map(Number);
    const got = Array.from(model.tokenize(t, false));
    if (got.length === exp.length && got.every((x, j) => x === exp[j])) eq++;
    else bad.push({ text: t, hf: exp, llama: got });
  });
  for (const m of bad.slice(0, 10)) console.error("MISMATCH " + JSON.stringify(m));
  console.log(JSON.stringify({ inp, strings: texts.length, equal: eq, mismatches: bad.length }));
  await model.dispose();
  process.exit(bad.length ? 1 : 0);
}

const [family, ggufPath, corpusPath, ...rest] = process.argv.slice(2);
const show = rest[0] === "--show" ? Number(rest[1]) : 10;
if (!family || !ggufPath || !corpusPath) {
  console.error("usage: vocab_parity.mjs llama3|qwen3|llama2 GGUF CORPUS [--show N]");
  process.exit(2);
}

function unescapeLine(l) {
  let out = "";
  for (let i = 0; i < l.length; i++) {
    const c = l[i];
    if (c === "\\" && i + 1 < l.length) {
      const n = l[i + 1];
      const m = { n: "\n", t: "\t", r: "\r", "\\": "\\", "#": "#" }[n];
      if (m !== undefined) { out += m; i++; continue; }
    }
    out += c;
  }
  return out;
}

const corpus = readFileSync(corpusPath, "utf8").split("\n")
  .filter((l) => l.length && !l.startsWith("#")).map(unescapeLine);

const hfmod = await import(`@lenml/tokenizer-${family}`);
const hf = hfmod.fromPreTrained();
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath: ggufPath, vocabOnly: true });

const rules = KNOWN[family] || [];
const addedTokens = (hfmod.tokenizerJSON.added_tokens || []).map((t) => t.content)
  .sort((x, y) => y.length - x.length);
// llama.cpp without special parsing, but with HF's added tokens as hard boundaries.
function plainTokenize(text) {
  const out = [];
  let i = 0, start = 0;
  while (i < text.length) {
    const hit = addedTokens.find((t) => text.startsWith(t, i));
    if (!hit) { i++; continue; }
    if (i > start) out.push(...model.tokenize(text.slice(start, i), false));
    out.push(...model.tokenize(hit, true));
    i += hit.length;
    start = i;
  }
  if (start < text.length) out.push(...model.tokenize(text.slice(start), false));
  return out;
}
let equal = 0;
const knownHits = {};
const bad = [];
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
for (const text of corpus) {
  const a = Array.from(hf.encode(text, { add_special_tokens: false }));
  const b = Array.from(model.tokenize(text, true));
  if (same(a, b)) { equal++; continue; }
  const hit = rules.filter((r) => r.applies(text));
  let t = text;
  if (hit.some((r) => r.fix === "nfc")) t = t.normalize("NFC");
  const proof = hit.some((r) => r.fix === "plain") ? plainTokenize(t) : Array.from(model.tokenize(t, true));
  if (hit.length && same(a, proof)) {
    const key = hit.map((r) => r.name).join("+");
    knownHits[key] = (knownHits[key] || 0) + 1;
    continue;
  }
  bad.push({ text, hf: a, llama: b, rules: hit.length ? hit.map((r) => r.name).join("+") + " (proof failed)" : undefined });
}
// BOS/EOS: what HF adds with add_special_tokens=true must be what llama.cpp adds per the flags we
// wrote (llama_vocab_get_add_bos/eos), around the same text ids.
const BOS_KNOWN = {
  // The @lenml Llama-3 tokenizer.json is an early upload whose post_processor is ByteLevel only, so
  // HF adds no BOS. llama.cpp's converter writes no add_bos_token for it and llama.cpp's llama-bpe
  // pre-tokenizer then defaults to add_bos=true; sunny writes what the converter writes.
  llama3: { name: "llama3-early-no-bos-template", llamaExtraBos: true },
};
const addBos = model.tokens.bos != null && model.tokens.shouldPrependBosToken;
const addEos = model.tokens.eos != null && model.tokens.shouldAppendEosToken;
let specialsEqual = 0, specialsKnown = 0;
const specialsBad = [];
for (const text of corpus.slice(0, 200)) {
  const plain = Array.from(hf.encode(text, { add_special_tokens: false }));
  const withSp = Array.from(hf.encode(text, { add_special_tokens: true }));
  const want = [...(addBos ? [model.tokens.bos] : []), ...plain, ...(addEos ? [model.tokens.eos] : [])];
  if (same(withSp, want)) { specialsEqual++; continue; }
  const k = BOS_KNOWN[family];
  if (k && k.llamaExtraBos && addBos && same([model.tokens.bos, ...withSp], want)) { specialsKnown++; continue; }
  specialsBad.push({ text, hf: withSp, llama_would_add: { bos: addBos, eos: addEos } });
}
for (const m of bad.slice(0, show)) console.error("MISMATCH " + JSON.stringify(m));
for (const m of specialsBad.slice(0, 3)) console.error("BOS/EOS MISMATCH " + JSON.stringify(m));
console.log(JSON.stringify({ family, strings: corpus.length, equal, mismatches: bad.length,
  known_divergences: knownHits,
  bos_eos: { add_bos: addBos, add_eos: addEos, checked: 200, equal: specialsEqual, mismatches: specialsBad.length,
    ...(specialsKnown ? { [BOS_KNOWN[family].name]: specialsKnown } : {}) } }));
await model.dispose();
process.exit(bad.length || specialsBad.length ? 1 : 0);
