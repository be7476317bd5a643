import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { AtlasError } from '@atlas/core';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type ImportJob, ImportJobs, type ImportPorts, type ValidatedImport } from '../import-jobs.js';
import { assertNoNul } from '../input-guard.js';

/** What the import routes need: the runtime's import ports (import-jobs.ts). Absent or null: not registered. */
export interface ImportRoutesOptions {
  imports?: ImportPorts | null;
}

/** The file names an import takes: a zipped Slack export, or a DiscordChatExporter JSON file. */
const IMPORTABLE = /\.(zip|json)$/i;

const MIB = 2 ** 20;

/**
 * The uploaded file's name as the importer sees it: its base name (either slash), without control characters, at
 * most 200 characters (the extension kept); `upload` when nothing is left. The importer names an archive-level
 * problem by this name, as `atlas import` names the path it was given.
 */
export const uploadName = (raw: string): string => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const base = (raw.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (base === '' || base === '.' || base === '..') return 'upload';
  if (base.length <= 200) return base;
  const ext = /\.[A-Za-z0-9]{1,8}$/.exec(base)?.[0] ?? '';
  return base.slice(0, 200 - ext.length) + ext;
};

/** The upload bound in words: `200 MiB (209715200 bytes, IMPORT_MAX_UPLOAD_MB)`. */
const boundText = (bytes: number) =>
  `${Math.round((bytes / MIB) * 10) / 10} MiB (${bytes} bytes, IMPORT_MAX_UPLOAD_MB)`;

/**
 * Streams the one file of a multipart body (field `file`) into `dir` under its uploadName, at most `maxBytes`.
 * Throws AtlasError: UNSUPPORTED_MEDIA_TYPE (415) when the body is not multipart or the file is neither `.zip` nor
 * `.json`; PAYLOAD_TOO_LARGE (413) past `maxBytes`; INVALID_REQUEST (400) when no `file` field holds a file, a file
 * comes in another field, or the body is broken; what failureOf makes of multipart's own limits otherwise.
 */
const receive = async (
  request: FastifyRequest,
  dir: string,
  maxBytes: number,
): Promise<{ path: string; name: string; bytes: number }> => {
  if (!request.isMultipart())
    throw new AtlasError(
      'UNSUPPORTED_MEDIA_TYPE',
      'POST /api/imports takes multipart/form-data with one field "file": a Slack export .zip or a DiscordChatExporter .json',
    );
  const tooLarge = () =>
    new AtlasError('PAYLOAD_TOO_LARGE', `the file is over the upload limit of ${boundText(maxBytes)}`, {
      details: { bound_bytes: maxBytes },
    });
  let saved: { path: string; name: string; bytes: number } | null = null;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 1, fields: 10, fieldSize: 1024 } })) {
      if (part.type !== 'file') continue; // other fields are ignored
      if (part.fieldname !== 'file')
        throw new AtlasError('INVALID_REQUEST', `the file comes in the field "${part.fieldname}", not "file"`);
      assertNoNul({ filename: part.filename }, 'body');
      const name = uploadName(part.filename ?? '');
      if (!IMPORTABLE.test(name))
        throw new AtlasError(
          'UNSUPPORTED_MEDIA_TYPE',
          `${name}: an import takes a Slack export .zip or a DiscordChatExporter .json`,
          { details: { file: name } },
        );
      const file = path.join(dir, name);
      let bytes = 0;
      part.file.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      await pipeline(part.file, createWriteStream(file));
      if (part.file.truncated) throw tooLarge();
      saved = { path: file, name, bytes };
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    throw err;
  }
  if (!saved) throw new AtlasError('INVALID_REQUEST', 'the upload has no file (field "file")');
  return saved;
};

const ImportParams = z.object({ import_id: z.string().min(1).max(200) });

/**
 * Importing from the browser (a documented addition, docs/import.md "Importing from the browser"; admins only,
 * policy.ts). The import runs in this process, through the import of `atlas import` (the runtime's ImportPorts):
 * - `POST /api/imports`, multipart/form-data with one field `file` (a Slack export `.zip`, or a DiscordChatExporter
 *   `.json`), at most `maxUploadBytes`: the file is streamed to a temporary folder, then every file of the export is
 *   read and checked within the archive bounds (the job is `validating` meanwhile). A bad file answers 422
 *   IMPORT_FAILED naming it (details.file), nothing written; over the bound 413 PAYLOAD_TOO_LARGE; not a `.zip` or
 *   `.json` 415; another import still validating or appending 409 CONFLICT (details.import_id). Else 202 with the job
 *   (`importing`), which then appends, waits for the projection and ends `completed` with its result (or `failed`).
 *   The temporary folder is removed once the export is read.
 * - `GET /api/imports`: `{imports: [...]}`, the recent jobs of this process (ImportJobs), newest first;
 * - `GET /api/imports/{import_id}`: the job, its progress live (stage, unit, done, total); 404 NOT_FOUND.
 */
export const importRoutes: FastifyPluginAsync<ImportRoutesOptions> = async (root, opts) => {
  const ports = opts.imports;
  if (!ports) return;
  const app = root.withTypeProvider<ZodTypeProvider>();
  await app.register(multipart); // limits per request (receive)
  const jobs = new ImportJobs();
  const stopping = new AbortController();
  const running = new Set<Promise<void>>();
  let receiving = false;
  app.addHook('onClose', async () => {
    stopping.abort();
    await Promise.allSettled([...running]);
  });

  const run = async (job: ImportJob, validated: ValidatedImport) => {
    try {
      jobs.complete(job, await validated.apply((p) => jobs.report(job, p), stopping.signal));
    } catch (err) {
      if (!(err instanceof AtlasError) || !err.expose)
        app.log.error({ err, import_id: job.import_id }, 'import failed');
      jobs.fail(job, err);
    }
  };

  app.post('/api/imports', async (request, reply) => {
    const busy = jobs.busy();
    if (busy || receiving) {
      reply.header('connection', 'close'); // refused before the upload was read: the rest of it is not read
      throw new AtlasError(
        'CONFLICT',
        busy
          ? `the import ${busy.import_id} (${busy.file_name}) is still ${busy.status}: one import validates and appends at a time`
          : 'another upload is being received: one import validates and appends at a time',
        { details: { import_id: busy?.import_id ?? null } },
      );
    }
    receiving = true;
    let job: ImportJob;
    let validated: ValidatedImport;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'atlas-import-upload-'));
    try {
      const saved = await receive(request, dir, ports.maxUploadBytes).catch((err: unknown) => {
        reply.header('connection', 'close'); // a refused upload may not have been read to its end
        throw err;
      });
      job = jobs.create(saved.name, saved.bytes);
      try {
        validated = await ports.validate(saved.path, (p) => jobs.report(job, p));
      } catch (err) {
        jobs.fail(job, err);
        throw err;
      }
    } finally {
      receiving = false;
      await rm(dir, { recursive: true, force: true });
    }
    job.platform = validated.platform;
    jobs.report(job, { stage: 'checking for changes', unit: 'messages', done: 0, total: validated.messages });
    const p = run(job, validated);
    running.add(p);
    void p.finally(() => running.delete(p));
    return reply.status(202).send(job);
  });

  app.get('/api/imports', async () => ({ imports: jobs.list() }));

  app.get('/api/imports/:import_id', { schema: { params: ImportParams } }, async (request) => {
    const job = jobs.get(request.params.import_id);
    if (!job) throw new AtlasError('NOT_FOUND', `no import ${request.params.import_id} (jobs are kept in memory)`);
    return job;
  });
};
