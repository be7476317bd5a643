import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalEmbedder } from './index.js';
import { LocalSentenceEncoder } from './local-use.js';
import { ONNX_MODELS } from './models/catalog.js';
import type { FetchedModel } from './models/fetch.js';
import { TEST_MODELS_DIR, testModel } from './models/test-models.test-support.js';
import { OnnxEmbedder } from './onnx-embedder.js';

const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);
const e5 = ONNX_MODELS['e5-small-v2'];

describe('OnnxEmbedder on e5-small-v2 (fetched once into the shared test cache)', () => {
  let fetched: FetchedModel;
  let encoder: OnnxEmbedder;
  beforeAll(async () => {
    fetched = await testModel('e5-small-v2');
    encoder = new OnnxEmbedder({ model: e5, files: fetched.files });
  });
  afterAll(() => encoder.close());

  it('names its model and gives deterministic unit vectors of 384 numbers', async () => {
    expect(encoder.id).toBe('onnx:e5-small-v2-q');
    expect(encoder.dim).toBe(384);
    const [a, b, c] = await encoder.embed(['core.async channels', 'core.async channels', '']);
    expect(a).toHaveLength(384);
    expect(c).toHaveLength(384);
    for (const v of [a!, c!]) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(b).toEqual(a);
  });

  it('puts a paraphrase closer than an unrelated line', async () => {
    const [a, para, other] = await encoder.embed([
      'we will migrate the DB to Postgres',
      'the team chose PostgreSQL for storage',
      'I had pasta for lunch today',
    ]);
    expect(dot(a!, para!)).toBeGreaterThan(dot(a!, other!) + 0.1);
  });

  it('applies the query prefix to queries only, and a query finds its passage', async () => {
    const text = 'which database did the team pick?';
    const [asQuery] = await encoder.embed([text], { kind: 'query' });
    const [asPassage] = await encoder.embed([text]);
    const bare = new OnnxEmbedder({ model: { ...e5, queryPrefix: '', passagePrefix: '' }, files: fetched.files });
    const [byHand] = await bare.embed([`query: ${text}`]);
    const [passageByHand] = await bare.embed([`passage: ${text}`]);
    await bare.close();
    expect(asQuery).toEqual(byHand); // "query: " + text
    expect(asPassage).toEqual(passageByHand); // "passage: " + text (the default kind)
    expect(dot(asQuery!, asPassage!)).toBeLessThan(0.999);
    const [fact, lunch] = await encoder.embed(['the team chose PostgreSQL for storage', 'I had pasta for lunch today']);
    expect(dot(asQuery!, fact!)).toBeGreaterThan(dot(asQuery!, lunch!));
  });

  it('gives a text the same vector in a job of 40 (32 + a part turn) as alone', async () => {
    const texts = Array.from(
      { length: 40 },
      (_, i) => `message ${i}: ${'we talked about Kafka consumer groups and offsets '.repeat(1 + (i % 5))}`,
    );
    const batched = await encoder.embed(texts);
    expect(batched).toHaveLength(40);
    for (const [i, t] of texts.entries()) {
      const [one] = await encoder.embed([t]);
      for (const [d, x] of one!.entries())
        expect(Math.abs(x - batched[i]![d]!), `text ${i} dim ${d}`).toBeLessThan(1e-5);
    }
  });

  it('cuts a text longer than 512 tokens, keeping what fits', async () => {
    const long = 'the deploy to production succeeded after the migration '.repeat(200);
    const [v, head] = await encoder.embed([long, 'the deploy to production succeeded after the migration '.repeat(45)]);
    expect(v).toHaveLength(384);
    expect(dot(v!, head!)).toBeGreaterThan(0.95);
  });

  it('serves a one-text job before a long one, and close() ends the worker (a later call starts another)', async () => {
    const e = new OnnxEmbedder({ model: e5, files: fetched.files, threads: 2 });
    const order: string[] = [];
    const long = e
      .embed(Array.from({ length: 96 }, (_, i) => `backfill sentence number ${i} about Kafka consumer groups`))
      .then((v) => order.push(`long:${v.length}`));
    await new Promise((r) => setTimeout(r, 20));
    const short = e.embed(['who decided to use Postgres?']).then((v) => order.push(`short:${v.length}`));
    await Promise.all([long, short]);
    expect(order).toEqual(['short:1', 'long:96']);
    expect(e.running).toBe(true);
    const [before] = await e.embed(['core.async channels']);
    await e.close();
    expect(e.running).toBe(false);
    const pending = e.embed(['core.async channels']);
    expect(e.running).toBe(true);
    const [after] = await pending;
    await e.close();
    expect(e.running).toBe(false);
    expect(dot(before!, after!)).toBeGreaterThan(0.99999);
  });

  it('fails a call with PROVIDER_UNAVAILABLE when the model file cannot be loaded', async () => {
    const e = new OnnxEmbedder({
      model: e5,
      files: { onnx: '/nonexistent/model.onnx', tokenizer: fetched.files.tokenizer },
    });
    await expect(e.embed(['x'])).rejects.toMatchObject({ code: 'PROVIDER_UNAVAILABLE', retriable: true });
    await e.close();
  });
});

describe('createLocalEmbedder (EMBEDDING_LOCAL_MODEL)', () => {
  const cfg = { EMBEDDING_THREADS: 1 };
  it('keeps USE-lite by default', () => {
    expect(createLocalEmbedder({ ...cfg, EMBEDDING_LOCAL_MODEL: 'use-lite' })).toBeInstanceOf(LocalSentenceEncoder);
  });

  it('runs an ONNX model whose files are in the cache', async () => {
    await testModel('e5-small-v2');
    const e = createLocalEmbedder({ ...cfg, EMBEDDING_LOCAL_MODEL: 'e5-small-v2', ATLAS_MODELS_DIR: TEST_MODELS_DIR });
    expect(e).toBeInstanceOf(OnnxEmbedder);
    expect(e.id).toBe('onnx:e5-small-v2-q');
  });

  it('falls back to USE-lite with a warning naming the fetch command when the model is not in the cache', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atlas-models-empty-'));
    const logger = { info: vi.fn(), warn: vi.fn() };
    const e = createLocalEmbedder(
      { ...cfg, EMBEDDING_LOCAL_MODEL: 'bge-small-en-v1.5', ATLAS_MODELS_DIR: dir },
      { logger },
    );
    expect(e).toBeInstanceOf(LocalSentenceEncoder);
    expect(logger.warn).toHaveBeenCalledOnce();
    expect(logger.warn.mock.calls[0]?.[1]).toMatch(/not in the model cache .*atlas models fetch bge-small-en-v1\.5/);
    rmSync(dir, { recursive: true });
  });
});
