// The ONNX encoder's worker thread (see onnx-embedder.ts): loads the model (onnxruntime-node) and its tokenizer
// (@huggingface/tokenizers) from the files named in workerData, and embeds the texts it is sent, BATCH texts at a time.
// Each text is its own model run (a [1, tokens] input), not a padded [32, tokens] batch: the int8 model quantises its
// activations per run (DynamicQuantizeLinear over the whole tensor), so in a padded batch a text's vector depended on
// its neighbours (by ~2e-3), and runs of one were ~3x faster on this machine (no padding; 130-156 vs 42-50 texts/s,
// 96 Clojurians messages, 1 thread). So a text always gets the same vector, whatever it is embedded with.
// Plain JavaScript so that it runs under any loader (tsx, vitest, plain node).
//
// workerData: { onnx, tokenizer, pooling: 'mean' | 'cls', maxTokens, threads }.
// Messages in: { id, texts: string[] } (prefixes already applied). Messages out: { id, vectors: Float32Array[] } or
// { id, error: string }.
// Scheduling: between two batches the worker takes the next batch from the job with the fewest texts left, so a
// one-text query waits behind at most one batch of a long backfill, never behind the whole backfill.
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { Tokenizer } from '@huggingface/tokenizers';
import ort from 'onnxruntime-node';

const BATCH = 32; // texts per turn of a job (scheduling only: see above)
/** A text is cut to this many characters before tokenizing: more than maxTokens wordpieces can cover. */
const CHARS_PER_TOKEN_BOUND = 32;

const { onnx, tokenizer: tokenizerFile, pooling, maxTokens, threads } = workerData;

/** @type {Promise<{ tok: Tokenizer, session: ort.InferenceSession }> | undefined} */
let model;

const load = async () => {
  const tok = new Tokenizer(JSON.parse(await readFile(tokenizerFile, 'utf8')), {});
  const session = await ort.InferenceSession.create(onnx, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Spin-waiting threads steal the cores other work needs; measured faster off on a shared 2-core machine.
    ...(threads > 1 ? { extra: { session: { intra_op: { allow_spinning: '0' } } } } : {}),
  });
  return { tok, session };
};

/** Token ids of a text, [CLS] ... [SEP], cut to maxTokens keeping the final [SEP]. */
const encode = (tok, text) => {
  const ids = tok.encode(text.slice(0, maxTokens * CHARS_PER_TOKEN_BOUND)).ids;
  return ids.length > maxTokens ? [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]] : ids;
};

/** Texts as one padded batch (any size; the worker sends one at a time), the model run, pooled and L2-normalised. */
const embedBatch = async ({ tok, session }, texts) => {
  const enc = texts.map((t) => encode(tok, t));
  const B = enc.length;
  const L = Math.max(1, ...enc.map((e) => e.length));
  const ids = new BigInt64Array(B * L);
  const mask = new BigInt64Array(B * L);
  enc.forEach((e, b) => {
    for (let i = 0; i < e.length; i++) {
      ids[b * L + i] = BigInt(e[i]);
      mask[b * L + i] = 1n;
    }
  });
  const feeds = {
    input_ids: new ort.Tensor('int64', ids, [B, L]),
    attention_mask: new ort.Tensor('int64', mask, [B, L]),
    token_type_ids: new ort.Tensor('int64', new BigInt64Array(B * L), [B, L]),
  };
  const out = await session.run(Object.fromEntries(session.inputNames.map((n) => [n, feeds[n]])));
  const hidden = out.last_hidden_state ?? out[session.outputNames[0]];
  const D = hidden.dims[2];
  const data = hidden.data;
  return enc.map((e, b) => {
    const v = new Float32Array(D);
    const rows = pooling === 'cls' ? 1 : e.length;
    for (let i = 0; i < rows; i++) {
      const at = (b * L + i) * D;
      for (let d = 0; d < D; d++) v[d] += data[at + d];
    }
    let norm = 0;
    for (let d = 0; d < D; d++) norm += v[d] * v[d];
    norm = Math.sqrt(norm); // mean pooling's division by the token count cancels in the normalisation
    if (norm > 0) for (let d = 0; d < D; d++) v[d] /= norm;
    return v;
  });
};

/** @type {{ id: number, texts: string[], next: number, out: Float32Array[] }[]} */
const jobs = [];
let running = false;

const tick = () => new Promise((resolve) => setImmediate(resolve));

const run = async () => {
  if (running) return;
  running = true;
  try {
    while (jobs.length > 0) {
      await tick(); // let newly posted jobs arrive before choosing
      jobs.sort((a, b) => a.texts.length - a.next - (b.texts.length - b.next) || a.id - b.id);
      const job = jobs[0];
      try {
        model ??= load();
        const m = await model;
        const batch = job.texts.slice(job.next, job.next + BATCH);
        for (const text of batch) job.out.push(...(await embedBatch(m, [text])));
        job.next += batch.length;
        if (job.next >= job.texts.length) {
          jobs.shift();
          parentPort.postMessage(
            { id: job.id, vectors: job.out },
            job.out.map((v) => v.buffer),
          );
        }
      } catch (err) {
        model = undefined;
        jobs.shift();
        parentPort.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) });
      }
    }
  } finally {
    running = false;
  }
};

parentPort.on('message', (msg) => {
  jobs.push({ id: msg.id, texts: msg.texts, next: 0, out: [] });
  void run();
});
