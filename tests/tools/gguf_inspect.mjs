// gguf_inspect.mjs - describe a GGUF as parsed by @huggingface/gguf, an implementation independent
// of ours, so tests can check that files sunny writes are read the same way by other tools.
//
// Usage: node gguf_inspect.mjs FILE.gguf                 prints the canonical JSON description
//        node gguf_inspect.mjs FILE.gguf --expect X.json  compares with X.json, exit 1 on mismatch
//        node gguf_inspect.mjs --serialize X.json OUT.gguf
//            writes X's KVs (no tensors) with @huggingface/gguf's own serializer, so that sunny's
//            reader can be checked against an independent writer; prints the description of OUT
//        node gguf_inspect.mjs --same A.json B.json       compares two descriptions
//        node gguf_inspect.mjs --brief FILE.gguf...
//            one JSON line per file: the description with each array's values replaced by their
//            count ("count": N), so the keys' types of big-vocabulary files are cheap to check
//            (the library still parses every value); {"file":F,"error":MSG} if it cannot parse F
// Canon (shared with tests/tools/gguf_write_sample.c): integers as decimal strings, f32/f64 as
// their bit patterns in hex, bools as booleans, strings as strings, KV types as GGUF type ids.
import { gguf, serializeGgufMetadata } from "@huggingface/gguf";
import { readFileSync, writeFileSync } from "node:fs";

const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STR: 8, ARR: 9, U64: 10, I64: 11, F64: 12 };

function canon(v, type) {
  const dv = new DataView(new ArrayBuffer(8));
  switch (type) {
    case T.U8: case T.I8: case T.U16: case T.I16: case T.U32: case T.I32: case T.U64: case T.I64:
      return typeof v === "bigint" ? v.toString() : String(v);
    case T.F32:
      dv.setFloat32(0, v, true);
      return "0x" + dv.getUint32(0, true).toString(16).padStart(8, "0");
    case T.F64:
      dv.setFloat64(0, v, true);
      return "0x" + dv.getBigUint64(0, true).toString(16).padStart(16, "0");
    case T.BOOL:
      return Boolean(v);
    case T.STR:
      return v;
    default:
      throw new Error(`unexpected value type ${type}`);
  }
}

// Inverse of canon().
function decanon(v, type) {
  const dv = new DataView(new ArrayBuffer(8));
  switch (type) {
    case T.U8: case T.I8: case T.U16: case T.I16: case T.U32: case T.I32:
      return Number(v);
    case T.U64: case T.I64:
      return BigInt(v);
    case T.F32:
      dv.setUint32(0, Number.parseInt(v, 16), true);
      return dv.getFloat32(0, true);
    case T.F64:
      dv.setBigUint64(0, BigInt(v), true);
      return dv.getFloat64(0, true);
    default:
      return v; // bool, string
  }
}

// Writes the KVs of a description with the library's serializer. Its serializer cannot write
// arrays of u8 (element type 0 is treated as "missing"), so those are left out.
function serialize(desc, out) {
  const kv = desc.kv.filter((e) => !(e.type === T.ARR && e.subType === T.U8));
  const tm = {
    version: { value: 3, type: T.U32 },
    tensor_count: { value: 0n, type: T.U64 },
    kv_count: { value: BigInt(kv.length), type: T.U64 },
  };
  let alignment = 32;
  for (const e of kv) {
    const value = e.type === T.ARR ? e.value.map((x) => decanon(x, e.subType)) : decanon(e.value, e.type);
    tm[e.key] = e.type === T.ARR ? { value, type: e.type, subType: e.subType } : { value, type: e.type };
    if (e.key === "general.alignment") alignment = value;
  }
  writeFileSync(out, serializeGgufMetadata(tm, { littleEndian: true, alignment }));
  return { version: 3, kv, tensors: [], tensor_count: "0", kv_count: String(kv.length) };
}

async function describe(file, brief = false) {
  const r = await gguf(file, { allowLocalFile: true, typedMetadata: true });
  const tm = r.typedMetadata;
  const out = {
    version: Number(tm.version.value),
    kv: [],
    tensors: [],
    tensor_count: tm.tensor_count.value.toString(),
    kv_count: tm.kv_count.value.toString(),
    tensorDataOffset: r.tensorDataOffset.toString(),
  };
  for (const [key, e] of Object.entries(tm)) {
    if (key === "version" || key === "tensor_count" || key === "kv_count") continue;
    const kv = { key, type: e.type };
    if (e.type === T.ARR) {
      kv.subType = e.subType;
      if (brief) {
        for (const x of e.value) canon(x, e.subType); // every value is still one canon() accepts
        kv.count = e.value.length;
      } else kv.value = e.value.map((x) => canon(x, e.subType));
    } else {
      kv.value = canon(e.value, e.type);
    }
    out.kv.push(kv);
  }
  for (const t of r.tensorInfos) {
    out.tensors.push({
      name: t.name,
      n_dims: t.n_dims,
      shape: t.shape.map((d) => d.toString()),
      dtype: t.dtype,
      offset: t.offset.toString(),
    });
  }
  return out;
}

// Lists every difference (path: got vs want); order of object keys is irrelevant.
function diff(got, want, path, out) {
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return out.push(`${path}: got ${JSON.stringify(got)}, want an array`);
    if (got.length !== want.length) out.push(`${path}: length ${got.length}, want ${want.length}`);
    for (let i = 0; i < Math.min(got.length, want.length); i++) {
      const label = want[i] && typeof want[i] === "object" && "key" in want[i] ? want[i].key
        : want[i] && typeof want[i] === "object" && "name" in want[i] ? want[i].name : i;
      diff(got[i], want[i], `${path}[${label}]`, out);
    }
    return out;
  }
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object") return out.push(`${path}: got ${JSON.stringify(got)}, want an object`);
    for (const k of new Set([...Object.keys(want), ...Object.keys(got)])) {
      if (!(k in got)) out.push(`${path}.${k}: missing`);
      else if (!(k in want)) out.push(`${path}.${k}: unexpected ${JSON.stringify(got[k])}`);
      else diff(got[k], want[k], `${path}.${k}`, out);
    }
    return out;
  }
  if (got !== want) out.push(`${path}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  return out;
}

function report(d, what) {
  if (d.length) {
    console.error(`gguf_inspect: ${what} (${d.length} differences):`);
    for (const line of d.slice(0, 40)) console.error("  " + line);
    process.exit(1);
  }
}

const args = process.argv.slice(2);
if (args.length === 3 && args[0] === "--serialize") {
  console.log(JSON.stringify(serialize(JSON.parse(readFileSync(args[1], "utf8")), args[2]), null, 2));
  process.exit(0);
}
if (args.length === 3 && args[0] === "--same") {
  const a = JSON.parse(readFileSync(args[1], "utf8")), b = JSON.parse(readFileSync(args[2], "utf8"));
  if (!("tensorDataOffset" in a) || !("tensorDataOffset" in b)) delete a.tensorDataOffset, delete b.tensorDataOffset;
  report(diff(a, b, "$", []), `${args[1]} differs from ${args[2]}`);
  console.log(`OK: ${args[1]} and ${args[2]} describe the same file (${a.kv.length} keys, ${a.tensors.length} tensors)`);
  process.exit(0);
}
if (args.length >= 2 && args[0] === "--brief") {
  let bad = 0;
  for (const f of args.slice(1)) {
    try {
      console.log(JSON.stringify({ file: f, ...(await describe(f, true)) }));
    } catch (e) {
      console.log(JSON.stringify({ file: f, error: `@huggingface/gguf could not parse ${f}: ${e.message}` }));
      bad++;
    }
  }
  process.exit(bad ? 1 : 0);
}
if (args.length !== 1 && !(args.length === 3 && args[1] === "--expect")) {
  console.error("usage: node gguf_inspect.mjs FILE.gguf [--expect EXPECTED.json] | --serialize X.json OUT.gguf | --same A.json B.json");
  process.exit(2);
}
let got;
try {
  got = await describe(args[0]);
} catch (e) {
  console.error(`gguf_inspect: @huggingface/gguf could not parse ${args[0]}: ${e.message}`);
  process.exit(1);
}
if (args.length === 1) {
  console.log(JSON.stringify(got, null, 2));
} else {
  const want = JSON.parse(readFileSync(args[2], "utf8"));
  report(diff(got, want, "$", []), `${args[0]} differs from ${args[2]}`);
  console.log(`OK: ${got.kv.length} keys and ${got.tensors.length} tensor infos match (@huggingface/gguf)`);
}
