import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { fetchModelCommand, listModelsCommand, modelsTable, progressLine, resolveModel } from './models.js';

describe('atlas models: arguments', () => {
  it('fetches e5-small-v2 by default, or the configured ONNX model; takes a name or its file stem', () => {
    expect(resolveModel(undefined, { EMBEDDING_LOCAL_MODEL: 'use-lite' }).name).toBe('e5-small-v2');
    expect(resolveModel(undefined, { EMBEDDING_LOCAL_MODEL: 'all-minilm-l6-v2' }).name).toBe('all-minilm-l6-v2');
    expect(resolveModel('bge-small-en-v1.5-q', { EMBEDDING_LOCAL_MODEL: 'use-lite' }).name).toBe('bge-small-en-v1.5');
  });

  it('refuses an unknown model, naming the ones there are, before any network', () => {
    const cfg = loadConfig({ ATLAS_MODELS_DIR: '/nonexistent/atlas-models-test' });
    for (const bad of ['use-lite', 'gte-small', ''])
      expect(() => fetchModelCommand(cfg, bad), bad).toThrow(
        /unknown model .*one of e5-small-v2, bge-small-en-v1\.5, all-minilm-l6-v2/,
      );
  });

  it('rejects a bad EMBEDDING_LOCAL_MODEL or EMBEDDING_THREADS in the configuration', () => {
    expect(() => loadConfig({ EMBEDDING_LOCAL_MODEL: 'e5' })).toThrow(/EMBEDDING_LOCAL_MODEL/);
    expect(() => loadConfig({ EMBEDDING_THREADS: '0' })).toThrow(/EMBEDDING_THREADS/);
    expect(loadConfig({}).EMBEDDING_LOCAL_MODEL).toBe('e5-small-v2');
  });

  it('prints download progress as bytes of the total', () => {
    expect(progressLine('e5-small-v2', { bytes: 12_900_000, total: 24_715_739 })).toBe(
      'e5-small-v2: 12.3 MiB of 23.6 MiB (52%)',
    );
    expect(progressLine('e5-small-v2', { bytes: 2048, total: null })).toBe('e5-small-v2: 2.0 KiB');
  });

  it('lists the catalog against an empty cache: nothing cached, the configured model marked', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atlas-models-list-'));
    const cfg = loadConfig({ ATLAS_MODELS_DIR: dir, EMBEDDING_LOCAL_MODEL: 'e5-small-v2' });
    const { dir: listed, rows } = await listModelsCommand(cfg, { verify: true });
    expect(listed).toBe(dir);
    expect(rows.map((r) => [r.model.name, r.cached, r.configured])).toEqual([
      ['e5-small-v2', false, true],
      ['bge-small-en-v1.5', false, false],
      ['all-minilm-l6-v2', false, false],
    ]);
    const text = modelsTable(rows);
    expect(text).toContain('e5-small-v2 *');
    expect(text).toContain('23.6 MiB to download');
    expect(text).toContain(path.join(dir, 'e5-small-v2-q'));
    rmSync(dir, { recursive: true });
  });
});
