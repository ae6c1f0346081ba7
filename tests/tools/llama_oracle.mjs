// llama_oracle.mjs - llama.cpp (through node-llama-cpp) as the oracle for sunny's tests and benches.
//
// Same GGUF in, llama.cpp's answer out, as JSON on stdout:
//   tokenize GGUF [--no-special] [--add-bos]   stdin: one JSON string per line -> one JSON id array per line
//   generate GGUF (--prompt-ids 1,2,3 | --prompt TEXT) [-n N] [--threads T] [--ctx C] [--logprobs K]
//            -> {"prompt_ids":[...],"ids":[...],"text":"...","top_logprobs":[[id,logprob],...]}
//            greedy (temperature 0), no repeat penalty; --logprobs K adds llama.cpp's K most likely next
//            tokens with log-probabilities at the LAST generated step (temperature 1, no truncation);
//            --top-logits K adds "top_logits":[[id,logit],...], llama.cpp's K largest RAW logits at
//            that step (exact floats; its probabilities above are rounded to ~1e-4).
//            Both are computed by evaluating prompt + ids[:-1] as one batch in a fresh sequence.
//            --decode-top-logits K adds "decode_top_logits": the same for the logits of the last
//            generation step itself (one token decoded after the others), by generating with
//            controlledEvaluate one token at a time instead of evaluate().
//   batch [--threads T]     stdin: JSON lines {"model":GGUF,"prompt_ids":[...],"n":32,"logprobs":K,"top_logits":K,
//                                               "decode_top_logits":K,"step_top_logits":K,"threads":T}
//            -> one generate-style JSON result per line, in order. step_top_logits K adds "step_logits":
//            per greedy step {"top":[[id,logit] x K],"max_abs":max|logit|} (llama.cpp's own tie evidence). One model is kept loaded at a time
//            (group jobs by model so each GGUF loads once); one process for many runs.
//            "prompt":TEXT instead of prompt_ids: tokenized as generate --prompt does (BOS when the
//            GGUF wants one). "pieces":true adds "pieces":[...], each generated token's text on its own
//            as llama.cpp's token_to_piece gives it (tests/tools/llama_piece.mjs; special tokens as
//            text; a token that is not whole UTF-8 comes out with U+FFFD).
//            "threads":T runs that job's context with T threads (default --threads; the loaded model is
//            kept, the context made anew). Tests give 1 where llama.cpp's answer is the same at 1 and 2
//            threads: ggml's worker threads meet at spinning barriers, and on a busy 2-core machine each
//            barrier spins until a descheduled thread comes back (~3x the CPU of one thread, measured).
//   sample GGUF --prompt-ids 1,2,3 [-n N] --temp T [--top-k K] [--top-p P] [--min-p M] --seed S
//            -> {"prompt_ids":[...],"ids":[...],...}: N tokens from evaluate() with node-llama-cpp's chain
//            (top-k -> top-p -> min-p -> temperature -> dist(seed); no repeat penalty) and EOG tokens
//            yielded and fed back (like sunny-run --ignore-eos). Omitted --top-k/--top-p/--min-p take
//            node-llama-cpp's defaults (40, 0.95, 0); --top-k 0 = whole vocabulary. Jobs may add
//            "repeat_penalty", "repeat_last_n" (default 64), "presence_penalty", "frequency_penalty":
//            llama.cpp's penalties sampler first in the chain, over the last N tokens, prompt included.
//            Without --temp: stdin JSON lines {"prompt_ids":[...],"n":32,"temp":T,"seed":S,"top_k":K,
//            "top_p":P,"min_p":M} -> the same line with "ids" added, one per job, model loaded once.
//   bench GGUF [--threads T] [--prefill 64] [--decode 64] [--runs 5]
//            -> {"prefill_tok_s":median,"decode_tok_s":median,"runs":[...]}
// Options: --flash-attention auto|on|off (default auto = what node-llama-cpp does by default).
import { getLlama } from "node-llama-cpp";
import { readFileSync } from "node:fs";
import { rawPiece } from "./llama_piece.mjs";

function parseArgs(argv) {
  const o = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("-")) {
      const k = a.replace(/^-+/, "");
      const flag = ["no-special", "add-bos"].includes(k);
      o[k] = flag ? true : argv[++i];
    } else o._.push(a);
  }
  return o;
}

const args = parseArgs(process.argv.slice(2));
const [cmd, modelPath] = args._;
if (!cmd || (!modelPath && cmd !== "batch")) {
  console.error("usage: llama_oracle.mjs tokenize|generate|sample|bench MODEL.gguf [options]");
  process.exit(2);
}
const fa = { auto: "auto", on: true, off: false }[args["flash-attention"] ?? "auto"];
const threads = args.threads ? Number(args.threads) : 2;

// batch jobs may name their own "threads" (the pool must allow the largest)
const batchJobs = cmd === "batch" ? readFileSync(0, "utf8").split("\n").filter((l) => l.trim().length).map((l) => JSON.parse(l)) : [];
const maxThreads = Math.max(threads, ...batchJobs.map((j) => j.threads ?? 0));
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error", maxThreads });

if (cmd === "tokenize") {
  const model = await llama.loadModel({ modelPath, vocabOnly: true });
  const special = !args["no-special"];
  const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.length);
  const out = [];
  for (const l of lines) {
    const text = JSON.parse(l);
    let ids = Array.from(model.tokenize(text, special));
    if (args["add-bos"] && model.tokens.bos != null) ids = [model.tokens.bos, ...ids];
    out.push(JSON.stringify(ids));
  }
  process.stdout.write(out.join("\n") + "\n");
  await model.dispose();
  process.exit(0);
}

async function greedyIn(ctx, prompt, n) {
  const seq = ctx.getSequence();
  const ids = [];
  if (n > 0) {
    for await (const t of seq.evaluate(prompt, { temperature: 0 })) {
      ids.push(t);
      if (ids.length >= n) break;
    }
  }
  await seq.dispose(); // async: the sequence id is reclaimed under a lock
  return ids;
}

// Greedy generation one controlledEvaluate call per token, keeping the K largest raw logits of the
// last step (the one that chose ids[n-1]). Same sampler as greedyIn (temperature 0). With stepK > 0
// every step also reports {"top": its stepK largest raw logits, "max_abs": max|logit|} (from
// llama.cpp's own max and min logit), so a judge can tell a tie on llama.cpp's side too.
async function greedyWithLogits(ctx, prompt, n, k, stepK = 0) {
  const seq = ctx.getSequence();
  const ids = [];
  const steps = [];
  let top = null;
  let input = prompt;
  while (ids.length < n) {
    const last = ids.length === n - 1;
    const want = Math.max(last ? k : 0, stepK);
    const logits = want ? { logits: { filter: { tokens: [], includeTop: want, includeMax: stepK > 0, includeMin: stepK > 0 } } } : {};
    const next = { token: true, options: { temperature: 0 }, ...logits };
    const res = await seq.controlledEvaluate([...input.slice(0, -1), [input[input.length - 1], { generateNext: next }]]);
    const out = res[input.length - 1]?.next;
    if (out?.token == null) break;
    ids.push(out.token);
    if (want && out.logits) {
      const all = Array.from(out.logits.entries()).sort((a, b) => b[1] - a[1]);
      if (last && k) top = all.slice(0, k);
      if (stepK) steps.push({ top: all.slice(0, stepK), max_abs: Math.max(Math.abs(all[0][1]), Math.abs(all[all.length - 1][1])) });
    }
    input = [out.token];
  }
  await seq.dispose();
  return { ids, top, steps };
}

async function lastLogprobs(ctx, hist, k) {
  const seq = ctx.getSequence();
  let out = null;
  for await (const r of seq.evaluateWithMetadata(hist, { probabilities: true }, { temperature: 1, topK: 0, topP: 1, minP: 0, yieldEogToken: true })) {
    out = Array.from(r.probabilities.entries()).slice(0, k).map(([t, p]) => [t, Math.log(p)]);
    break;
  }
  await seq.dispose();
  return out;
}

// The K largest raw logits after evaluating hist as one batch, as [[id, logit], ...], highest first.
async function lastLogits(ctx, hist, k) {
  const seq = ctx.getSequence();
  const last = [hist[hist.length - 1], { generateNext: { logits: { filter: { tokens: [], includeTop: k } } } }];
  const res = await seq.controlledEvaluate([...hist.slice(0, -1), last]);
  await seq.dispose();
  const logits = res[hist.length - 1]?.next?.logits;
  return logits ? Array.from(logits.entries()).sort((a, b) => b[1] - a[1]).slice(0, k) : null;
}

async function lastStep(ctx, prompt, ids, res, logprobs, topLogits) {
  const hist = [...prompt, ...ids.slice(0, -1)];
  if (logprobs && ids.length) res.top_logprobs = await lastLogprobs(ctx, hist, logprobs);
  if (topLogits && ids.length) res.top_logits = await lastLogits(ctx, hist, topLogits);
}

// A text prompt as llama-server tokenizes it: special tokens parsed, BOS unless the GGUF says no.
function textPromptIds(model, text) {
  const ids = Array.from(model.tokenize(text, true));
  return model.tokens.bos != null && model.fileInfo.metadata?.tokenizer?.ggml?.add_bos_token !== false
    ? [model.tokens.bos, ...ids] : ids;
}

if (cmd === "batch") {
  let m = null;
  for (const job of batchJobs) {
    const t = job.threads ?? threads;
    if (!m || m.path !== job.model || m.ctxSize !== (job.ctx ?? 512) || m.threads !== t) {
      if (m) await m.ctx.dispose();
      if (m && m.path !== job.model) await m.model.dispose();
      const model = m && m.path === job.model ? m.model : await llama.loadModel({ modelPath: job.model, defaultContextFlashAttention: fa });
      const ctx = await model.createContext({ contextSize: job.ctx ?? 512, threads: t, flashAttention: fa, sequences: 1 });
      m = { path: job.model, ctxSize: job.ctx ?? 512, threads: t, model, ctx };
    }
    let ids, decodeTop = null, steps = null;
    if (job.prompt_ids == null) job.prompt_ids = textPromptIds(m.model, job.prompt);
    if (job.decode_top_logits || job.step_top_logits)
      ({ ids, top: decodeTop, steps } = await greedyWithLogits(m.ctx, job.prompt_ids, job.n ?? 32, job.decode_top_logits ?? 0, job.step_top_logits ?? 0));
    else ids = await greedyIn(m.ctx, job.prompt_ids, job.n ?? 32);
    const res = { model: job.model, prompt_ids: job.prompt_ids, ids, text: m.model.detokenize(ids) };
    if (decodeTop) res.decode_top_logits = decodeTop;
    if (job.step_top_logits) res.step_logits = steps;
    if (job.pieces) res.pieces = ids.map((t) => { const b = rawPiece(m.model, t, true); return b ? new TextDecoder().decode(b) : m.model.detokenize([t], true); });
    await lastStep(m.ctx, job.prompt_ids, ids, res, job.logprobs, job.top_logits);
    process.stdout.write(JSON.stringify(res) + "\n");
  }
  process.exit(0);
}

const model = await llama.loadModel({ modelPath, defaultContextFlashAttention: fa });
const ctxSize = args.ctx ? Number(args.ctx) : 512;

function promptIds() {
  if (args["prompt-ids"]) return args["prompt-ids"].split(",").map(Number);
  if (args.prompt != null) return textPromptIds(model, args.prompt);
  console.error("need --prompt-ids or --prompt");
  process.exit(2);
}

if (cmd === "generate") {
  const n = args.n ? Number(args.n) : 32;
  const ctx = await model.createContext({ contextSize: ctxSize, threads, flashAttention: fa, sequences: 1 });
  const prompt = promptIds();
  const dk = Number(args["decode-top-logits"] ?? 0);
  let ids, decodeTop = null;
  if (dk) ({ ids, top: decodeTop } = await greedyWithLogits(ctx, prompt, n, dk));
  else ids = await greedyIn(ctx, prompt, n);
  const res = { prompt_ids: prompt, ids, text: model.detokenize(ids) };
  if (decodeTop) res.decode_top_logits = decodeTop;
  await lastStep(ctx, prompt, ids, res, Number(args.logprobs ?? 0), Number(args["top-logits"] ?? 0));
  process.stdout.write(JSON.stringify(res) + "\n");
  await ctx.dispose();
  process.exit(0);
}

// N tokens sampled by evaluate() with node-llama-cpp's chain; EOG tokens are yielded and fed back.
async function sampleIn(ctx, prompt, n, job) {
  const opt = { temperature: Number(job.temp), seed: Number(job.seed), yieldEogToken: true };
  if (job.top_k != null) opt.topK = Number(job.top_k);
  if (job.top_p != null) opt.topP = Number(job.top_p);
  if (job.min_p != null) opt.minP = Number(job.min_p);
  // llama.cpp's penalties sampler over the last repeat_last_n tokens, prompt included (llama-cli
  // accepts the prompt into its sampler). node-llama-cpp rebuilds it from punishTokens each step,
  // with a window of max(maxPunishTokens, punishTokens.length): give it exactly the last N.
  const hist = [...prompt];
  if (job.repeat_penalty != null || job.presence_penalty != null || job.frequency_penalty != null) {
    const lastN = job.repeat_last_n ?? 64;
    opt.repeatPenalty = { penalty: job.repeat_penalty ?? 1, presencePenalty: job.presence_penalty ?? 0,
      frequencyPenalty: job.frequency_penalty ?? 0, maxPunishTokens: lastN, punishTokens: () => hist.slice(-lastN) };
  }
  const seq = ctx.getSequence();
  const ids = [];
  for await (const t of seq.evaluate(prompt, opt)) {
    ids.push(t);
    hist.push(t);
    if (ids.length >= n) break;
  }
  await seq.dispose();
  return ids;
}

if (cmd === "sample") {
  const ctx = await model.createContext({ contextSize: ctxSize, threads, flashAttention: fa, sequences: 1 });
  const jobs = [];
  if (args.temp != null) {
    if (args.seed == null) { console.error("sample needs --seed"); process.exit(2); }
    const num = (v) => (v == null ? undefined : Number(v));
    jobs.push({ prompt_ids: promptIds(), n: args.n ? Number(args.n) : 32, temp: num(args.temp), seed: num(args.seed),
      top_k: num(args["top-k"]), top_p: num(args["top-p"]), min_p: num(args["min-p"]) });
  } else {
    for (const l of readFileSync(0, "utf8").split("\n").filter((x) => x.trim().length)) jobs.push(JSON.parse(l));
  }
  for (const job of jobs) {
    const ids = await sampleIn(ctx, job.prompt_ids, job.n ?? 32, job);
    process.stdout.write(JSON.stringify({ ...job, ids }) + "\n");
  }
  await ctx.dispose();
  process.exit(0);
}

if (cmd === "bench") {
  const nP = Number(args.prefill ?? 64), nD = Number(args.decode ?? 64), runs = Number(args.runs ?? 5);
  const ctx = await model.createContext({ contextSize: Math.max(ctxSize, nP + nD + 8), threads, flashAttention: fa, batchSize: 512 });
  const vocab = model.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length ?? 1000;
  const prompt = Array.from({ length: nP }, (_, i) => 100 + ((i * 7919) % Math.max(1, vocab - 200)));
  const rs = [];
  for (let r = 0; r < runs; r++) {
    let seq = ctx.getSequence();
    let t0 = performance.now();
    await seq.evaluateWithoutGeneratingNewTokens(prompt);
    const prefill = nP / ((performance.now() - t0) / 1000);
    // decode: feed one token at a time, greedy
    let count = 0;
    t0 = performance.now();
    const it = seq.evaluate([prompt[prompt.length - 1]], { temperature: 0 });
    for await (const _ of it) { if (++count >= nD) break; }
    const decode = count / ((performance.now() - t0) / 1000);
    await seq.dispose();
    rs.push({ prefill_tok_s: prefill, decode_tok_s: decode });
  }
  const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
  process.stdout.write(JSON.stringify({ threads, prefill_tok_s: med(rs.map((r) => r.prefill_tok_s)),
    decode_tok_s: med(rs.map((r) => r.decode_tok_s)), runs: rs }) + "\n");
  await ctx.dispose();
  process.exit(0);
}
console.error("unknown command " + cmd);
process.exit(2);
