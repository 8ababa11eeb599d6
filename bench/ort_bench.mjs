// Times one ONNX model under ONNX Runtime (CPU, Node.js binding) and prints
// one JSON line with the fields `switchyard bench --json` prints, so that
// bench/compare can put the two side by side.
//
//   node bench/ort_bench.mjs MODEL.onnx --threads N --runs R [--warmup W]
//        [--input NAME=FILE.npy ...] [--profile PREFIX] [--outputs FILE.json]
//
// --outputs writes the first run's outputs to FILE.json as
// {name: {type, dims, data}} (data as numbers, float16 decoded), for checks
// that compare them with Switchyard's
// (tests/python/test_quantization.py).
// --profile turns on ONNX Runtime's profiler (its trace goes to
// PREFIX_<date>.json) and adds to the JSON line the timed runs' kernel
// time by op type, as `switchyard bench --profile` gives it: op_ms per run
// on average, and run_op_ms, each run's own.
//
// onnxruntime-node is looked up in bench/.node (where bench/compare installs
// it) unless ORT_NODE_MODULE names another copy.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

// The value of a float16 given as its bits (onnxruntime-node hands float16
// outputs over that way), so that --outputs writes numbers for every type.
function halfToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f;
  const frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

function usage(message) {
  if (message) process.stderr.write(`error: ${message}\n`);
  process.stderr.write('usage: node bench/ort_bench.mjs MODEL.onnx --threads N --runs R [--warmup W] ' +
                       '[--input NAME=FILE.npy ...] [--profile PREFIX] [--outputs FILE.json]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { model: null, threads: 1, runs: 10, warmup: 3, inputs: {}, profile: null, outputs: null };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--threads') args.threads = parseInt(value(), 10);
    else if (a === '--runs') args.runs = parseInt(value(), 10);
    else if (a === '--warmup') args.warmup = parseInt(value(), 10);
    else if (a === '--profile') args.profile = value();
    else if (a === '--outputs') args.outputs = value();
    else if (a === '--input') {
      const v = value();
      const eq = v.indexOf('=');
      if (eq < 0) usage(`--input takes NAME=FILE.npy, got '${v}'`);
      args.inputs[v.slice(0, eq)] = v.slice(eq + 1);
    } else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (args.model === null) args.model = a;
    else usage(`unexpected argument ${a}`);
  }
  if (args.model === null) usage('no model given');
  if (!(args.threads >= 1) || !(args.runs >= 1) || !(args.warmup >= 0)) usage('bad --threads/--runs/--warmup');
  return args;
}

// numpy dtype string -> [ONNX Runtime type name, typed array constructor].
const kNpyTypes = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  // float16 travels as its bits, which is how onnxruntime-node takes it.
  '<f2': ['float16', Uint16Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
  '<i2': ['int16', Int16Array],
  '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array],
  '|b1': ['bool', Uint8Array],
};

// Reads a C-order little-endian .npy file (versions 1-3) into {type, dims, data}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') {
    throw new Error(`${file}: not a .npy file`);
  }
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', headerStart, headerStart + headerLen);
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(`${file}: cannot parse header ${header}`);
  if (fortran[1] === 'True') throw new Error(`${file}: Fortran-order arrays are not supported`);
  const kind = kNpyTypes[descr[1]];
  if (!kind) throw new Error(`${file}: unsupported dtype ${descr[1]} (expected one of ${Object.keys(kNpyTypes)})`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map((s) => parseInt(s, 10));
  const count = dims.reduce((a, b) => a * b, 1);
  const [type, Ctor] = kind;
  const dataStart = headerStart + headerLen;
  const bytes = count * Ctor.BYTES_PER_ELEMENT;
  if (buf.length - dataStart < bytes) throw new Error(`${file}: expected ${bytes} data bytes, found ${buf.length - dataStart}`);
  // Copy into a fresh, aligned buffer: the file buffer's offset may not be a
  // multiple of the element size.
  const data = new Ctor(count);
  new Uint8Array(data.buffer).set(buf.subarray(dataStart, dataStart + bytes));
  return { type, dims, data: type === 'bool' ? Uint8Array.from(data, (v) => (v ? 1 : 0)) : data };
}

// The newest "<prefix>_*.json" file: ONNX Runtime adds a date to the prefix.
function newestProfile(prefix) {
  const dir = path.dirname(path.resolve(prefix));
  const base = path.basename(prefix) + '_';
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json'))
    .map((f) => path.join(dir, f));
  if (files.length === 0) throw new Error(`no profile file ${prefix}_*.json was written`);
  return files.reduce((a, b) => (fs.statSync(a).mtimeMs >= fs.statSync(b).mtimeMs ? a : b));
}

// Kernel time per run by op type over the last `runs` model runs of a trace.
function opTimes(file, runs) {
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runEvents = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((x, y) => x.ts - y.ts);
  if (runEvents.length < runs) throw new Error(`${file}: ${runEvents.length} model runs, expected at least ${runs}`);
  const timed = runEvents.slice(runEvents.length - runs);
  const from = timed[0].ts;
  const ms = {};
  // Each timed run's own sums too, so a median over runs can be taken as
  // for the latency figures: the run whose model_run span holds the node.
  const runOpMs = timed.map(() => ({}));
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < from) continue;
    const op = e.args.op_name;
    ms[op] = (ms[op] ?? 0) + e.dur / 1000 / runs;
    const r = timed.findIndex((run) => e.ts >= run.ts && e.ts <= run.ts + run.dur);
    if (r >= 0) runOpMs[r][op] = (runOpMs[r][op] ?? 0) + e.dur / 1000;
  }
  const round4 = (x) => Math.round(x * 10000) / 10000;
  for (const op of Object.keys(ms)) ms[op] = round4(ms[op]);
  for (const run of runOpMs) for (const op of Object.keys(run)) run[op] = round4(run[op]);
  return { op_ms: ms, run_op_ms: runOpMs };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1) + 0.5));
  return sorted[i];
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const modulePath = process.env.ORT_NODE_MODULE || path.join(here, '.node', 'node_modules', 'onnxruntime-node');
  const ort = require(modulePath);

  let peakRss = process.memoryUsage().rss;
  const sampleRss = () => { peakRss = Math.max(peakRss, process.memoryUsage().rss); };

  const t0 = performance.now();
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    // One graph branch at a time, as Switchyard and PyTorch do.
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    ...(args.profile ? { enableProfiling: true, profileFilePrefix: args.profile } : {}),
  });
  const createMs = performance.now() - t0;
  sampleRss();

  const feeds = {};
  for (const name of session.inputNames) {
    const file = args.inputs[name];
    if (!file) throw new Error(`no --input given for model input '${name}'`);
    const a = readNpy(file);
    feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
  }

  let firstResults = null;
  const runOnce = async () => {
    const a = performance.now();
    const results = await session.run(feeds);
    const ms = performance.now() - a;
    sampleRss();
    if (firstResults === null) firstResults = results;
    return ms;
  };
  const firstMs = await runOnce();
  if (args.outputs) {
    const out = {};
    for (const [name, t] of Object.entries(firstResults)) {
      const value = t.type === 'float16' ? halfToNumber : (v) => Number(v);
      out[name] = { type: t.type, dims: t.dims, data: Array.from(t.data, value) };
    }
    fs.writeFileSync(args.outputs, JSON.stringify(out));
  }
  for (let i = 0; i < args.warmup; ++i) await runOnce();
  const times = [];
  const start = performance.now();
  for (let i = 0; i < args.runs; ++i) times.push(await runOnce());
  const totalS = (performance.now() - start) / 1000;
  let profile = {};
  if (args.profile) {
    await session.endProfiling();
    const file = newestProfile(args.profile);
    profile = { profile_file: file, ...opTimes(file, times.length) };
  }
  times.sort((x, y) => x - y);
  const r3 = (x) => Math.round(x * 1000) / 1000;
  process.stdout.write(JSON.stringify({
    model: args.model,
    providers: `onnxruntime-node ${ort.env.versions?.common ?? ''}`.trim(),
    threads: args.threads,
    batch: 1,
    runs: times.length,
    session_create_ms: r3(createMs),
    first_run_ms: r3(firstMs),
    median_ms: r3(percentile(times, 0.5)),
    p90_ms: r3(percentile(times, 0.9)),
    p99_ms: r3(percentile(times, 0.99)),
    min_ms: r3(times[0]),
    throughput_per_s: r3(totalS > 0 ? times.length / totalS : 0),
    peak_rss_mib: Math.round((peakRss / (1024 * 1024)) * 10) / 10,
    ...profile,
  }) + '\n');
  await session.release();
}

main().catch((e) => {
  process.stderr.write(`error: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
