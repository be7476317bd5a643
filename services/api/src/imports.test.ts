import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TOPICS } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { deflatedEntry, dirEntries, type RawZipEntry, zipArchive } from '@atlas/platforms/testing';
import { apiPorts, endOffsets, serverImports } from '@atlas/runtime';
import { ADMIN_KEY, type Atlas, openAtlas } from '@atlas/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { ErrorBodySchema, ImportJobListSchema, ImportJobSchema, schemaIssues } from './contract/index.js';
import type { ImportPorts } from './import-jobs.js';

// Importing from the browser (issue 26, docs/import.md "Importing from the browser"): POST /api/imports runs the import
// of `atlas import` inside the server, on the real exports beside the repository (zipped at test time).

const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
const OLAKE = path.join(DATA, 'slack-olake/export');
const ETHGLOBAL = path.join(DATA, 'discord-ethglobal/ETHGlobal - agentic-ethereum-chat [1319401418532065280].json');

type Json = ReturnType<typeof JSON.parse>;

describe('POST /api/imports: an export imported from the browser, in the running server', () => {
  let atlas: Atlas;
  let olakeZip: Buffer;
  /** What `atlas import` plans of the OLake export (the same planImport): channels and kept messages. */
  let expected: { channels: number; messages: number };
  let readerKey: string;

  beforeAll(async () => {
    atlas = await openAtlas();
    olakeZip = zipArchive(dirEntries(OLAKE, 'export/'));
    const plan = await planImport(OLAKE);
    expected = { channels: plan.channels.length, messages: plan.messages.length };
    const created = await atlas.call('POST', '/api/admin/keys', { name: 'import reader', role: 'reader' });
    readerKey = created.body.secret;
  }, 120_000);
  afterAll(async () => atlas?.close());

  /** POST /api/imports with `data` as the multipart field `field` (default `file`) named `name`. */
  const upload = async (name: string, data: Buffer, opts: { key?: string; field?: string; url?: string } = {}) => {
    const form = new FormData();
    form.append(opts.field ?? 'file', new Blob([new Uint8Array(data)]), name);
    const res = await fetch(`${opts.url ?? atlas.url}/api/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.key ?? ADMIN_KEY}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  /** Polls GET /api/imports/{id} every 50 ms until the job ends; returns it and every (status, stage) seen. */
  const finished = async (id: string, timeoutMs = 240_000) => {
    const seen: string[] = [];
    const until = Date.now() + timeoutMs;
    for (;;) {
      const r = await atlas.call('GET', `/api/imports/${id}`);
      expect(r.status).toBe(200);
      expect(schemaIssues(ImportJobSchema, r.body)).toEqual([]);
      const step = `${r.body.status}/${r.body.progress.stage}`;
      if (seen.at(-1) !== step) seen.push(step);
      if (r.body.status === 'completed' || r.body.status === 'failed') return { job: r.body as Json, seen };
      if (Date.now() > until) throw new Error(`import ${id} still ${step} after ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };

  /** What the store holds: the event log's end offsets (messages, access) and the channels with their counts. */
  const storeState = async () => ({
    messages: Object.fromEntries(await endOffsets(atlas.rt, TOPICS.messages)),
    access: Object.fromEntries(await endOffsets(atlas.rt, TOPICS.access)),
    channels: (await atlas.call('GET', '/api/channels')).body as Json,
  });

  const refused = (r: { status: number; body: Json }, status: number, code: string) => {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(schemaIssues(ErrorBodySchema, r.body)).toEqual([]);
    expect(r.body.error.code).toBe(code);
  };

  it('a zipped Slack export: 202, progress live through every stage, then what `atlas import` adds', async () => {
    const r = await upload('olake-export.zip', olakeZip);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(schemaIssues(ImportJobSchema, r.body)).toEqual([]);
    expect(r.body).toMatchObject({
      status: 'importing',
      file_name: 'olake-export.zip',
      size_bytes: olakeZip.length,
      platform: 'platform_a',
      completed_at: null,
      result: null,
      error: null,
    });
    const { job, seen } = await finished(r.body.import_id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(seen.at(-1)).toBe('completed/building the graph');
    expect(seen.some((s) => s.startsWith('projecting/'))).toBe(true);
    expect(job.progress).toEqual({
      stage: 'building the graph',
      unit: 'messages',
      done: expected.messages,
      total: expected.messages,
    });
    expect(expected).toEqual({ channels: 5, messages: 302 }); // README: OLake, 5 channels, 302 messages
    expect(job.result).toMatchObject({
      format: 'platform_a_export',
      channels: expected.channels,
      messages: expected.messages,
      new_or_changed: expected.messages,
      unchanged: 0,
      dead_lettered: 0,
    });
    expect(job.result.facts).toBeGreaterThan(0);
    const channels = ((await atlas.call('GET', '/api/channels')).body as Json[]).filter(
      (c) => c.platform === 'platform_a',
    );
    expect(channels).toHaveLength(expected.channels);
    expect(channels.reduce((n: number, c: Json) => n + c.message_count, 0)).toBe(expected.messages);
    expect(channels.reduce((n: number, c: Json) => n + c.fact_count, 0)).toBe(job.result.facts);
    const list = await atlas.call('GET', '/api/imports');
    expect(schemaIssues(ImportJobListSchema, list.body)).toEqual([]);
    expect(list.body.imports[0].import_id).toBe(job.import_id);
  }, 300_000);

  it('the same export again adds nothing', async () => {
    const before = await storeState();
    const r = await upload('olake-export.zip', olakeZip);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const { job } = await finished(r.body.import_id);
    expect(job.status).toBe('completed');
    expect(job.result).toMatchObject({ new_or_changed: 0, unchanged: expected.messages, messages: expected.messages });
    // Only the channels' discovery is appended again (last_sync moves, as with `atlas import`): no message, no count.
    const counts = (s: Json) => s.channels.map(({ last_sync: _, ...c }: Json) => c);
    expect(counts(await storeState())).toEqual(counts(before));
  }, 120_000);

  it('a DiscordChatExporter JSON file: platform_b, 1 channel, 518 messages', async () => {
    const r = await upload(path.basename(ETHGLOBAL), readFileSync(ETHGLOBAL));
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body.platform).toBe('platform_b');
    const { job } = await finished(r.body.import_id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.result).toMatchObject({ format: 'platform_b_export', channels: 1, messages: 518, new_or_changed: 518 });
    const eth = ((await atlas.call('GET', '/api/channels')).body as Json[]).find((c) => c.platform === 'platform_b');
    expect(eth.message_count).toBe(518);
  }, 300_000);

  it('a bad export is refused whole (422 IMPORT_FAILED naming the file), nothing written, and a retry is safe', async () => {
    const before = await storeState();
    const olake = dirEntries(OLAKE, 'export/');
    const cases: { name: string; zip: Buffer; file: string | RegExp }[] = [
      { name: 'corrupt.zip', zip: Buffer.from('PK\u0003\u0004 this is no zip archive'), file: 'corrupt.zip' },
      {
        name: 'bad-file.zip',
        zip: zipArchive([...olake, deflatedEntry('export/general/2099-01-01.json', '[{"ts": "1.0", "text": ')]),
        file: 'general/2099-01-01.json',
      },
      {
        // zip-slip: an entry climbing out of the export (never written to disk; yauzl refuses the name)
        name: 'slip.zip',
        zip: zipArchive([...olake, deflatedEntry('export/../../../tmp/evil.json', '[]')]),
        file: 'slip.zip',
      },
    ];
    for (const c of cases) {
      const r = await upload(c.name, c.zip);
      refused(r, 422, 'IMPORT_FAILED');
      expect(r.body.error.details.file, r.body.error.message).toBe(c.file);
      expect(r.body.error.message.startsWith(`${c.file}: `)).toBe(true);
    }
    expect((await upload('slip.zip', zipArchive([deflatedEntry('../evil.json', '[]')]))).body.error.message).toMatch(
      /invalid relative path/,
    );
    expect(await storeState()).toEqual(before);
    // The failed attempts are jobs too (failed, with the error), and the next import is not held back by them.
    const jobs = (await atlas.call('GET', '/api/imports')).body.imports as Json[];
    expect(jobs[0]).toMatchObject({ status: 'failed', file_name: 'slip.zip', error: { code: 'IMPORT_FAILED' } });
    const retry = await upload('olake-export.zip', olakeZip);
    expect(retry.status).toBe(202);
    expect((await finished(retry.body.import_id)).job.result.new_or_changed).toBe(0);
  }, 120_000);

  it('refusals at the edge: no file 400, not a .zip or .json 415, not multipart 415; a reader key 403', async () => {
    refused(await upload('x.zip', olakeZip, { field: 'export' }), 400, 'INVALID_REQUEST');
    refused(await upload('export.tar.gz', olakeZip), 415, 'UNSUPPORTED_MEDIA_TYPE');
    refused(await atlas.call('POST', '/api/imports', { file: 'x' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    refused(await upload('olake-export.zip', olakeZip, { key: readerKey }), 403, 'FORBIDDEN');
    for (const url of ['/api/imports', '/api/imports/x']) {
      const r = await fetch(`${atlas.url}${url}`, { headers: { authorization: `Bearer ${readerKey}` } });
      refused({ status: r.status, body: await r.json() }, 403, 'FORBIDDEN');
    }
    refused(await atlas.call('GET', '/api/imports/no-such-import'), 404, 'NOT_FOUND');
    // An upload past Fastify's JSON body limit (12 MB) but under IMPORT_MAX_UPLOAD_MB is read whole and checked.
    const big = await upload('spaces.json', Buffer.alloc(20 * 2 ** 20, ' '));
    refused(big, 422, 'IMPORT_FAILED');
    expect(big.body.error.details.file).toBe('spaces.json');
  }, 60_000);

  it('an upload over IMPORT_MAX_UPLOAD_MB is 413, and a second import while one validates is 409', async () => {
    const before = await storeState();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const real = serverImports(atlas.rt);
    const ports: ImportPorts = {
      maxUploadBytes: 64 * 1024,
      validate: async (file, report) => {
        await gate; // held in `validating` until released
        return real.validate(file, report);
      },
    };
    const app = await buildApp({ ...apiPorts(atlas.rt), imports: ports });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    try {
      const big = await upload('big.json', readFileSync(ETHGLOBAL), { url });
      refused(big, 413, 'PAYLOAD_TOO_LARGE');
      expect(big.body.error.message).toContain('IMPORT_MAX_UPLOAD_MB');
      const small = zipArchive([
        deflatedEntry('channels.json', JSON.stringify([{ id: 'CSMALL', name: 'small' }])),
        deflatedEntry(
          'small/2024-01-01.json',
          JSON.stringify([{ type: 'message', ts: '1704067200.000100', user: 'U1', text: 'hello' }]),
        ),
      ] satisfies RawZipEntry[]);
      const first = upload('small.zip', small, { url });
      let held: Json;
      for (;;) {
        held = (await fetch(`${url}/api/imports`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) =>
          r.json(),
        )) as Json;
        if (held.imports.length > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(held.imports[0]).toMatchObject({ status: 'validating', file_name: 'small.zip', platform: null });
      const second = await upload('small.zip', small, { url });
      refused(second, 409, 'CONFLICT');
      expect(second.body.error.details.import_id).toBe(held.imports[0].import_id);
      expect(await storeState()).toEqual(before);
      release();
      expect((await first).status).toBe(202);
    } finally {
      release();
      await app.close();
    }
  }, 120_000);
});
