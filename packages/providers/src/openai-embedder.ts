import OpenAI from 'openai';
import { type Embedder, type EmbedOptions, normalize, providerUnavailable } from './embedder.js';

export interface OpenAiEmbedderOptions {
  /** Base URL of any OpenAI-compatible API (OpenAI, Ollama, vLLM, …), e.g. `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  apiKey?: string | undefined;
  model: string;
  /** Vector length the model returns (checked on every answer). */
  dim: number;
  /** Per-request timeout, ms (spec Errors: embedding provider 10 s). */
  timeoutMs?: number;
  batchSize?: number;
}

/**
 * Embeddings from an OpenAI-compatible endpoint (`POST /embeddings`), unit-normalised. The texts are sent as they
 * are: `opts.kind` is ignored (a model that wants prefixes gets them from its server, or from a dedicated embedder).
 */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  private readonly client: OpenAI;

  constructor(private readonly opts: OpenAiEmbedderOptions) {
    this.id = `openai-compatible:${opts.model}@${new URL(opts.baseURL).host}`;
    this.dim = opts.dim;
    this.client = new OpenAI({
      baseURL: opts.baseURL,
      apiKey: opts.apiKey ?? 'none',
      timeout: opts.timeoutMs ?? 10_000,
      maxRetries: 1,
    });
  }

  async embed(texts: readonly string[], _opts?: EmbedOptions): Promise<number[][]> {
    const out: number[][] = [];
    const size = this.opts.batchSize ?? 96;
    for (let i = 0; i < texts.length; i += size) {
      const input = texts.slice(i, i + size).map((t) => (t.trim().length === 0 ? ' ' : t));
      let data: { index: number; embedding: number[] }[];
      try {
        // float, not the SDK's default base64: several OpenAI-compatible servers (Ollama, vLLM) only speak float.
        data = (await this.client.embeddings.create({ model: this.opts.model, input, encoding_format: 'float' })).data;
      } catch (err) {
        throw providerUnavailable(`embedding endpoint ${this.opts.baseURL}`, err);
      }
      const vectors = [...data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      if (vectors.length !== input.length || vectors.some((v) => v.length !== this.dim)) {
        throw providerUnavailable(
          `embedding endpoint ${this.opts.baseURL}`,
          new Error(`expected ${input.length} vectors of ${this.dim} numbers`),
        );
      }
      out.push(...vectors.map(normalize));
    }
    return out;
  }
}
